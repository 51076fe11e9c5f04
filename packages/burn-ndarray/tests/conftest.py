"""Fixtures for the burn-ndarray unit tests (primitive level: NumPy arrays in, NumPy arrays out)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import burn_ndarray
from burn.foundations.data import TensorData
from burn_ndarray import NdArray


@pytest.fixture(scope="session")
def B() -> NdArray:
    return NdArray()


@pytest.fixture(scope="session")
def B64() -> NdArray:
    return NdArray(float_dtype="float64", int_dtype="int32")


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Sets burn-ndarray's thread count for a test (``threads(n)``) and restores it afterwards.

    The BLAS keeps its count: these tests compare burn's own kernels across counts, and OpenBLAS
    set from the main thread stops taking sets from other threads for the rest of the process
    (`blas.set_threads`); test_num_threads.py checks the BLAS part in fresh processes. Nor does
    the machine's load move it (`runtime.busy` looks no more; test_busy_machine.py checks it)."""
    from burn_ndarray.runtime import blas, busy

    monkeypatch.setattr(blas, "set_threads", lambda count: None)
    monkeypatch.setattr(busy, "PERIOD", float("inf"))
    before = burn_ndarray.get_num_threads()
    yield burn_ndarray.set_num_threads
    burn_ndarray.set_num_threads(before)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def host(B: NdArray, p: object) -> np.ndarray:
    """The contents of a primitive of any kind, through the backend's own `*_into_data`."""
    data: TensorData = B.float_into_data(p)
    return data.array


def without_compiled(module: Any, threshold: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with `module`'s `threshold` (the size from which a compiled kernel runs) out
    of reach: the NumPy path, to compare the kernels with."""
    saved = getattr(module, threshold)
    setattr(module, threshold, 1 << 62)
    try:
        return fn(*args)
    finally:
        setattr(module, threshold, saved)
