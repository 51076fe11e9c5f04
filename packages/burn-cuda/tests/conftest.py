"""Fixtures of burn-cuda's own tests. Every test that needs a GPU is skipped, with the probe's
reason, where CuPy or a CUDA device is missing; tests marked ``no_device`` always run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.tensor.data import TensorData
from burn_cuda import plugin

_REASON = plugin._probe()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "no_device: runs without CuPy or a CUDA device")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _REASON is None:
        return
    skip = pytest.mark.skip(reason=f"cuda unavailable: {_REASON}")
    for item in items:
        if "no_device" not in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def B() -> Any:
    from burn_cuda import Cuda

    return Cuda()


@pytest.fixture(scope="session")
def dev(B: Any) -> Any:
    return B.default_device()


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng(abs(hash(request.node.name)) % (2**32))


@pytest.fixture(scope="session")
def up(B: Any, dev: Any) -> Any:
    """NumPy array -> primitive of the matching kind."""

    def make(array: Any) -> Any:
        data = TensorData(np.asarray(array))
        if data.dtype.is_float:
            return B.float_from_data(data, dev)
        if data.dtype.is_int:
            return B.int_from_data(data, dev)
        return B.bool_from_data(data, dev)

    return make


@pytest.fixture(scope="session")
def down(B: Any) -> Any:
    """Primitive -> NumPy array."""
    return lambda p: B.float_into_data(p).array
