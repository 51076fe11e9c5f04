"""Int ops (`burn.backend.IntOps`) on NumPy arrays: the shared bodies (`burn.backend.xp.int`)
plus what NumPy does its own way.

Division floors and the remainder takes the divisor's sign, as NumPy's ``//`` and ``%`` do; by zero
both give 0, which NumPy also does, but with a RuntimeWarning that is silenced here (the contract
says integer kernels never raise). Sums, products and cumulative sums keep the tensor's int type
(NumPy would widen small ints to int64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.backend.xp.int import INT_SCALAR_UFUNCS, INT_UFUNCS, XpIntOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType
from burn_ndarray._common import CommonOps
from burn_ndarray._dtypes import NP_OF

Array = Any


# Comparisons with a scalar too are bare ufuncs: NumPy 2 compares with a Python int out of the
# type's range exactly, with no range check of ours.
@bind_ufuncs(np, INT_UFUNCS | INT_SCALAR_UFUNCS)
class IntOps(CommonOps, XpIntOps):
    """The ``int_*`` ops of `burn_ndarray.NdArray`."""

    rng: np.random.Generator

    # -- random: NumPy's generator ------------------------------------------------------------
    def int_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        """Uniform(low, high) draws integers in ``[low, high)``; Normal rounds; Bernoulli gives 0/1."""
        target = NP_OF[dtype]
        rng = self.rng
        if isinstance(distribution, Uniform):
            return rng.integers(int(distribution.low), int(distribution.high), size=shape).astype(
                target, copy=False
            )
        if isinstance(distribution, Normal):
            return np.rint(rng.normal(distribution.mean, distribution.std, size=shape)).astype(target)
        if isinstance(distribution, Bernoulli):
            return (rng.random(shape) < distribution.prob).astype(target)
        raise TypeError(f"int_random: unknown distribution {distribution!r}")

    # NumPy itself raises OverflowError for a value out of the type's range: the shared op types the
    # value first, which costs NumPy's fast path for Python ints (~600 ns).
    def int_full(self, shape: tuple[int, ...], value: int, device: Device, dtype: DType) -> Array:
        return np.full(shape, value, NP_OF[dtype])

    # -- division: NumPy's floor division, its by-zero warnings silenced -------------------------
    def int_div(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore", over="ignore"):
            return np.floor_divide(lhs, rhs)

    def int_remainder(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore"):
            return np.remainder(lhs, rhs)

    def int_div_scalar(self, lhs: Array, rhs: int) -> Array:
        if rhs == 0:
            return np.zeros_like(lhs)
        return lhs // rhs

    def int_remainder_scalar(self, lhs: Array, rhs: int) -> Array:
        if rhs == 0:
            return np.zeros_like(lhs)
        return lhs % rhs

    # -- scalars: NEP 50 keeps the int type for a Python int (and raises OverflowError if it
    # cannot fit), so it goes through untyped (typing costs ~180 ns an op here) ------------------
    def int_add_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs + rhs

    def int_sub_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs - rhs

    def int_mul_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs * rhs

    def int_clamp_min(self, tensor: Array, min: int) -> Array:
        return np.maximum(tensor, min)

    def int_clamp_max(self, tensor: Array, max: int) -> Array:
        return np.minimum(tensor, max)

    def int_clamp(self, tensor: Array, min: int, max: int) -> Array:
        return np.clip(tensor, min, max)
