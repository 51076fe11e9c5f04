"""The int family (`burn.backend.ops.int`) on NumPy arrays: the shared bodies
(`burn.backend.xp.int`) plus what NumPy does its own way.

Division floors and the remainder takes the divisor's sign, as NumPy's ``//`` and ``%`` do; by zero
both give 0, which NumPy also does, but with a RuntimeWarning that is silenced here (the contract
says integer kernels never raise). Sums, products and cumulative sums keep the tensor's int type
(NumPy would widen small ints to int64). Matmul, the bitwise ops and the cumulative ops are one
NumPy kernel each (the defaults in burn-core compose them bit by bit, or by a log-step scan).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.backend.xp.int import INT_SCALAR_UFUNCS, INT_UFUNCS, XpIntOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType
from burn_ndarray.ops import kinds
from burn_ndarray.ops.kinds import KindOps
from burn_ndarray.runtime.dtypes import NP_OF

Array = Any


# Comparisons with a scalar too are bare ufuncs: NumPy 2 compares with a Python int out of the
# type's range exactly, with no range check of ours.
@bind_ufuncs(np, INT_UFUNCS | INT_SCALAR_UFUNCS)
class IntOps(KindOps, XpIntOps):
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

    # NumPy itself raises OverflowError for a value out of the type's range: the shared op types the value
    # first, which costs NumPy's fast path for Python ints (docs/benchmarks-log.md).
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
    # cannot fit), so it goes through untyped (typing costs a per-op share, as for floats) ------
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

    # -- cumulative ops -----------------------------------------------------------------------
    def int_cumprod(self, tensor: Array, dim: int) -> Array:
        return np.cumprod(tensor, axis=dim, dtype=tensor.dtype)  # NumPy would widen small ints

    def int_cummax(self, tensor: Array, dim: int) -> Array:
        return np.maximum.accumulate(tensor, axis=dim)

    def int_cummin(self, tensor: Array, dim: int) -> Array:
        return np.minimum.accumulate(tensor, axis=dim)

    # -- int matmul and bitwise ops -----------------------------------------------------------
    int_matmul = np.matmul
    int_bitwise_and = int_bitwise_and_scalar = np.bitwise_and
    int_bitwise_or = int_bitwise_or_scalar = np.bitwise_or
    int_bitwise_xor = int_bitwise_xor_scalar = np.bitwise_xor
    int_bitwise_not = np.invert
    int_bitwise_left_shift = int_bitwise_left_shift_scalar = np.left_shift
    int_bitwise_right_shift = int_bitwise_right_shift_scalar = np.right_shift

    # -- kind-generic bodies (`kinds`) --------------------------------------------------------
    int_into_data = kinds.into_data
    int_device = kinds.device
    int_to_device = kinds.to_device
    int_scatter_add = kinds.scatter_add
    int_select_add = kinds.select_add
    int_unfold = kinds.unfold
    int_gather_nd = kinds.gather_nd
    int_scatter_nd = kinds.scatter_nd
    int_scatter_assign = kinds.scatter_assign
    int_select_assign = kinds.select_assign
    int_cross = kinds.cross
