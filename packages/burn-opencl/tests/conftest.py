"""Fixtures of burn-opencl's own tests. Every test is skipped, with the probe's reason, where no
OpenCL device can build kernels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from burn.testing.backend_package import dev, down, rng, skip_without_device, up  # noqa: F401
from burn_opencl import plugin

_REASON = plugin._probe()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "no_device: runs without an OpenCL device")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_without_device(items, "opencl", _REASON, Path(__file__).parent)


@pytest.fixture(scope="session")
def B() -> Any:
    from burn_opencl import OpenCL

    return OpenCL()

