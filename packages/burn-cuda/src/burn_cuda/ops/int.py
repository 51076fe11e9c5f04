"""Int ops of the contract (`burn.backend.ops.int`) on CuPy arrays: the shared bodies
(`burn.backend.xp.int`) plus what CuPy does its own way (`burn_cuda._common`).

Division floors and the remainder takes the divisor's sign (Python's ``//`` and ``%``); by zero
both give 0 (`burn_cuda.kernels.int`). Scalars are typed like the tensor, so results keep its
int type (and a scalar it cannot hold raises OverflowError, as on every backend). Sums, products
and cumulative sums keep the tensor's int type.
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn.backend.device import Device
from burn.backend.xp.int import INT_UFUNCS, XpIntOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn.foundations.distribution import Distribution
from burn.foundations.dtype import DType
from burn_cuda import _common as c
from burn_cuda import _random
from burn_cuda._common import CommonOps, placed
from burn_cuda._dtypes import NP_OF
from burn_cuda.kernels import int as k

Array = Any


def _same(lhs: Array, rhs: Array) -> tuple[Array, Array]:
    """Both operands in their promoted type (the kernels take one type ``T``)."""
    dtype = cp.result_type(lhs, rhs)
    return lhs.astype(dtype, copy=False), rhs.astype(dtype, copy=False)


@bind_ufuncs(cp, INT_UFUNCS)
class CudaIntOps(CommonOps, XpIntOps):
    """The ``int_*`` ops of `burn_cuda.Cuda`."""

    int_into_data = c.into_data
    int_device = c.device
    int_to_device = c.to_device
    int_gather = c.gather
    # Sums by atomics in one kernel: ints wrap (64-bit adds).
    int_scatter_add = c.scatter_add
    int_select_add = c.select_add
    # One reduction, the values gathered at its indices.
    int_max_dim_with_indices = c.max_dim_with_indices
    int_min_dim_with_indices = c.min_dim_with_indices

    # CuPy allocates on the current device: creation runs on its `device` argument's.
    int_full = placed(XpIntOps.int_full)
    int_zeros = placed(XpIntOps.int_zeros)
    int_ones = placed(XpIntOps.int_ones)
    int_empty = placed(XpIntOps.int_empty)
    int_arange = placed(XpIntOps.int_arange)

    # Philox per device (`_random`), seeded by `Cuda.seed`.
    def int_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        return _random.int_random(self, shape, distribution, device, NP_OF[dtype])

    # Floor division and remainder with 0 by zero (the contract's answer): one fused kernel each.
    def int_div(self, lhs: Array, rhs: Array) -> Array:
        return k.int_floor_div(*_same(lhs, rhs))

    def int_remainder(self, lhs: Array, rhs: Array) -> Array:
        return k.int_remainder(*_same(lhs, rhs))

    def int_div_scalar(self, lhs: Array, rhs: int) -> Array:
        return k.int_floor_div(lhs, lhs.dtype.type(rhs))

    def int_remainder_scalar(self, lhs: Array, rhs: int) -> Array:
        return k.int_remainder(lhs, lhs.dtype.type(rhs))
