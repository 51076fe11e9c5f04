"""Fixtures for the burn-ndarray unit tests (primitive level: NumPy arrays in, NumPy arrays out)."""

from __future__ import annotations

import numpy as np
import pytest

from burn.tensor.data import TensorData
from burn_ndarray import NdArray


@pytest.fixture(scope="session")
def B() -> NdArray:
    return NdArray()


@pytest.fixture(scope="session")
def B64() -> NdArray:
    return NdArray(float_dtype="float64", int_dtype="int32")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def host(B: NdArray, p: object) -> np.ndarray:
    """The contents of a primitive of any kind, through the backend's own `*_into_data`."""
    data: TensorData = B.float_into_data(p)
    return data.array
