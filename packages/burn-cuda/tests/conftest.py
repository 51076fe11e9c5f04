"""Fixtures of burn-cuda's own tests. Every test that needs a GPU is skipped, with the probe's
reason, where CuPy or a CUDA device is missing; tests marked ``no_device`` always run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from burn.testing.backend_package import dev, down, rng, skip_without_device, up  # noqa: F401
from burn_cuda import plugin

_REASON = plugin._probe()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "no_device: runs without CuPy or a CUDA device")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_without_device(items, "cuda", _REASON, Path(__file__).parent)


@pytest.fixture(scope="session")
def B() -> Any:
    from burn_cuda import Cuda

    return Cuda()

