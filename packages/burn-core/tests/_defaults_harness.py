"""Shared harness of test_module_defaults.py and test_activation_defaults.py: backends on which the
*default* module and activation ops of burn-core run, and host <-> primitive helpers.

Two backends are used:
- ``ndarray``: burn-ndarray in float64, subclassed so that every module/activation op is the
  Backend default (ndarray's own overrides would otherwise hide the defaults, including the ones
  a default calls, e.g. conv2d_x_backward -> conv_transpose2d);
- ``minimal``: the required-ops-only backend of this test directory, whose primitives are
  wrapper objects: a default that treated a primitive as a NumPy array would fail there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend import Backend
from burn.backend.ops.activation import ActivationOps
from burn.backend.ops.conv import ConvOps
from burn.backend.ops.embedding import EmbeddingOps
from burn.backend.ops.pool import PoolOps
from burn.backend.ops.sampling import SamplingOps
from burn.foundations.data import TensorData

_DEFAULT_OPS = [
    name
    for klass in (ConvOps, PoolOps, SamplingOps, EmbeddingOps, ActivationOps)
    for name, value in vars(klass).items()
    if getattr(value, "__burn_op__", None) == "default"
]


def _ndarray_defaults() -> Backend:
    nd_mod = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not importable")
    cls = type("NdArrayDefaults", (nd_mod.NdArray,), {name: getattr(Backend, name) for name in _DEFAULT_OPS})
    return cls(float_dtype="float64")  # type: ignore[no-any-return]


def _minimal() -> Backend:
    minimal_backend = pytest.importorskip("minimal_backend", reason="tests/minimal_backend.py is missing")
    return minimal_backend.Minimal(float_dtype="float64")  # type: ignore[no-any-return]


BACKENDS = {"ndarray": _ndarray_defaults, "minimal": _minimal}


class Ops:
    """A backend running default ops, with helpers to move arrays in and out."""

    def __init__(self, backend: Backend) -> None:
        self.b = backend
        self.device = backend.default_device()

    def f(self, array: Any, dtype: str = "float64") -> Any:
        return self.b.float_from_data(TensorData(np.asarray(array), dtype), self.device)

    def i(self, array: Any) -> Any:
        return self.b.int_from_data(TensorData(np.asarray(array), self.b.int_dtype), self.device)

    def a(self, prim: Any) -> np.ndarray:
        return np.asarray(self.b.float_into_data(prim).array)

    def ai(self, prim: Any) -> np.ndarray:
        return np.asarray(self.b.int_into_data(prim).array)

    def __getattr__(self, name: str) -> Any:
        """``ops.conv2d(...)``: the Backend default bound to this backend."""
        return getattr(Backend, name).__get__(self.b)


def make_ops(name: str) -> Ops:
    return Ops(BACKENDS[name]())
