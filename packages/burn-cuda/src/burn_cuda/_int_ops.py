"""Int ops (`burn.backend.IntOps`) on CuPy arrays.

Division floors and the remainder takes the divisor's sign (Python's ``//`` and ``%``); by zero
both give 0 (`_kernels.int_floor_div`). Scalars are typed like the tensor, so results keep its
int type (and a scalar it cannot hold raises OverflowError, as on every backend). Sums, products
and cumulative sums keep the tensor's int type.
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

from burn.backend.device import Device
from burn.tensor.data import TensorData
from burn.tensor.distribution import Distribution
from burn.tensor.dtype import DType
from burn_cuda import _common as c
from burn_cuda import _kernels as k
from burn_cuda import _random
from burn_cuda._dtypes import INT_DTYPES, NP_OF
from burn_cuda._runtime import on

Array = Any


def _same(lhs: Array, rhs: Array) -> tuple[Array, Array]:
    """Both operands in their promoted type (the kernels take one type ``T``)."""
    dtype = cp.result_type(lhs, rhs)
    return lhs.astype(dtype, copy=False), rhs.astype(dtype, copy=False)


def _compare(lhs: Array, rhs: int, op: Any, below: bool, above: bool) -> Array:
    """``op(lhs, rhs)``; the constant `below` / `above` when `rhs` is below / above the type's range."""
    info = np.iinfo(lhs.dtype)
    if info.min <= rhs <= info.max:
        return op(lhs, lhs.dtype.type(rhs))
    return cp.full(lhs.shape, below if rhs < info.min else above, dtype=bool)


class IntOps:
    """The ``int_*`` ops of `burn_cuda.Cuda`."""

    _devices: list[Device]
    _int_np: np.dtype

    # -- host exchange, metadata --------------------------------------------------------------
    def int_from_data(self, data: TensorData, device: Device) -> Array:
        return c.from_data(self, "int_from_data", data, INT_DTYPES, device)

    def int_into_data(self, tensor: Array) -> TensorData:
        return c.into_data(tensor)

    int_device = c.device
    int_to_device = c.to_device
    int_shape = c.shape
    int_get_dtype = c.get_dtype

    def int_cast(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype], copy=False)

    def int_into_float(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    # -- creation -----------------------------------------------------------------------------
    def int_full(self, shape: tuple[int, ...], value: int, device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.full(shape, NP_OF[dtype].type(value), NP_OF[dtype])

    def int_zeros(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.zeros(shape, NP_OF[dtype])

    def int_ones(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.ones(shape, NP_OF[dtype])

    def int_empty(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.empty(shape, NP_OF[dtype])

    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.arange(start, end, step, dtype=NP_OF[dtype])

    def int_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        return _random.int_random(self, shape, distribution, device, NP_OF[dtype])

    # -- arithmetic ---------------------------------------------------------------------------
    int_add = cp.add
    int_sub = cp.subtract
    int_mul = cp.multiply
    int_abs = cp.absolute
    int_neg = cp.negative
    int_sign = cp.sign

    def int_div(self, lhs: Array, rhs: Array) -> Array:
        return k.int_floor_div(*_same(lhs, rhs))

    def int_remainder(self, lhs: Array, rhs: Array) -> Array:
        return k.int_remainder(*_same(lhs, rhs))

    def int_add_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs + lhs.dtype.type(rhs)

    def int_sub_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs - lhs.dtype.type(rhs)

    def int_mul_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs * lhs.dtype.type(rhs)

    def int_div_scalar(self, lhs: Array, rhs: int) -> Array:
        return k.int_floor_div(lhs, lhs.dtype.type(rhs))

    def int_remainder_scalar(self, lhs: Array, rhs: int) -> Array:
        return k.int_remainder(lhs, lhs.dtype.type(rhs))

    def int_clamp_min(self, tensor: Array, min: int) -> Array:
        return cp.maximum(tensor, tensor.dtype.type(min))

    def int_clamp_max(self, tensor: Array, max: int) -> Array:
        return cp.minimum(tensor, tensor.dtype.type(max))

    def int_clamp(self, tensor: Array, min: int, max: int) -> Array:
        t = tensor.dtype.type
        return cp.minimum(cp.maximum(tensor, t(min)), t(max))

    # -- comparisons --------------------------------------------------------------------------
    int_equal = cp.equal
    int_not_equal = cp.not_equal
    int_greater = cp.greater
    int_greater_equal = cp.greater_equal
    int_lower = cp.less
    int_lower_equal = cp.less_equal

    # A scalar outside the tensor's type compares as a constant answer (no cast that overflows).
    def int_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return _compare(lhs, rhs, cp.equal, False, False)

    def int_not_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return _compare(lhs, rhs, cp.not_equal, True, True)

    def int_greater_elem(self, lhs: Array, rhs: int) -> Array:
        return _compare(lhs, rhs, cp.greater, True, False)

    def int_greater_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return _compare(lhs, rhs, cp.greater_equal, True, False)

    def int_lower_elem(self, lhs: Array, rhs: int) -> Array:
        return _compare(lhs, rhs, cp.less, False, True)

    def int_lower_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return _compare(lhs, rhs, cp.less_equal, False, True)

    # -- reductions ---------------------------------------------------------------------------
    def int_sum_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.sum(axis=dim, dtype=tensor.dtype, keepdims=True)

    def int_sum(self, tensor: Array) -> Array:
        return tensor.sum(dtype=tensor.dtype).reshape(1)

    def int_prod_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.prod(axis=dim, dtype=tensor.dtype, keepdims=True)

    def int_prod(self, tensor: Array) -> Array:
        return tensor.prod(dtype=tensor.dtype).reshape(1)

    def int_mean_dim(self, tensor: Array, dim: int) -> Array:
        """Floor of the mean, in the tensor's int type (Burn's int mean); 0 over an empty dim."""
        n = tensor.shape[dim]
        total = tensor.sum(axis=dim, dtype=tensor.dtype, keepdims=True)
        return k.int_floor_div(total, total.dtype.type(n)) if n else total

    def int_mean(self, tensor: Array) -> Array:
        total = tensor.sum(dtype=tensor.dtype).reshape(1)
        return k.int_floor_div(total, total.dtype.type(tensor.size)) if tensor.size else total

    def int_cumsum(self, tensor: Array, dim: int) -> Array:
        return cp.cumsum(tensor, axis=dim, dtype=tensor.dtype)

    int_argmax = c.argmax
    int_argmin = c.argmin
    int_max_dim = c.max_dim
    int_min_dim = c.min_dim
    int_max_dim_with_indices = c.max_dim_with_indices
    int_min_dim_with_indices = c.min_dim_with_indices
    int_max = c.max_
    int_min = c.min_

    # -- shape ops ----------------------------------------------------------------------------
    int_reshape = c.reshape
    int_permute = c.permute
    int_flip = c.flip
    int_expand = c.expand
    int_slice = c.slice_
    int_slice_assign = c.slice_assign
    int_cat = c.cat
    int_swap_dims = c.swap_dims
    int_repeat_dim = c.repeat_dim

    # -- indexing -----------------------------------------------------------------------------
    int_gather = c.gather
    int_scatter_add = c.scatter_add
    int_select = c.select
    int_select_add = c.select_add
    int_mask_where = c.mask_where
    int_mask_fill = c.mask_fill

    # -- sorting ------------------------------------------------------------------------------
    int_sort_with_indices = c.sort_with_indices
    int_sort = c.sort
    int_argsort = c.argsort
