"""Fixtures: the autodiff backend over burn-ndarray (float64 unless a test says otherwise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
import burn.plugins as bp
import burn_autodiff.plugin
import burn_ndarray.plugin
from burn_autodiff import Autodiff
from burn_ndarray import NdArray

# Make `burn.backend("autodiff(ndarray)")` work when the packages are only on PYTHONPATH
# (registering a plugin that entry points already loaded is a no-op).
bp.register(burn_ndarray.plugin)
bp.register(burn_autodiff.plugin)


@pytest.fixture
def nd() -> NdArray:
    return NdArray(float_dtype="float64")


@pytest.fixture
def B(nd: NdArray) -> Autodiff:
    return Autodiff(nd)


def tensor(backend: Any, values: Any, **kwargs: Any) -> burn.Tensor:
    return burn.Tensor.from_data(np.asarray(values), backend=backend, **kwargs)


def leaf(backend: Any, values: Any) -> burn.Tensor:
    return tensor(backend, np.asarray(values, dtype=np.float64)).require_grad()


def host(t: Any) -> np.ndarray:
    return np.asarray(t.to_numpy(), dtype=np.float64)
