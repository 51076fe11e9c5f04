"""Pieces for a backend package's own tests (``packages/<backend>/tests/conftest.py``).

A backend that may be unable to run here (no OpenCL platform, no GPU) skips every test that needs
a device with its probe's reason, and keeps running the tests marked ``no_device``. Its conftest
defines a session fixture ``B`` (the backend) and imports the fixtures below::

    from burn.testing.backend_package import down, rng, skip_without_device, up  # noqa: F401

    _REASON = plugin._probe()

    def pytest_configure(config):
        config.addinivalue_line("markers", "no_device: runs without a device")

    def pytest_collection_modifyitems(config, items):
        skip_without_device(items, "opencl", _REASON, Path(__file__).parent)
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData


def skip_without_device(items: list[pytest.Item], name: str, reason: str | None, root: Path) -> None:
    """Mark the items under `root` (the conftest's folder: the hook sees every collected item,
    other packages' too) that are not marked ``no_device`` as skipped with `reason` (None: run)."""
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"{name} unavailable: {reason}")
    for item in items:
        if "no_device" not in item.keywords and item.path.is_relative_to(root):
            item.add_marker(skip)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test's name: the same data in every run (crc32, not hash(),
    which Python randomizes per process)."""
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.fixture(scope="session")
def dev(B: Any) -> Any:
    return B.default_device()


@pytest.fixture(scope="session")
def up(B: Any, dev: Any) -> Callable[[Any], Any]:
    """NumPy array -> primitive of the matching kind on the default device."""

    def make(array: Any) -> Any:
        data = TensorData(np.asarray(array))
        if data.dtype.is_float:
            return B.float_from_data(data, dev)
        if data.dtype.is_int:
            return B.int_from_data(data, dev)
        return B.bool_from_data(data, dev)

    return make


@pytest.fixture(scope="session")
def down(B: Any) -> Callable[[Any], np.ndarray]:
    """Float primitive -> NumPy array."""
    return lambda p: B.float_into_data(p).array
