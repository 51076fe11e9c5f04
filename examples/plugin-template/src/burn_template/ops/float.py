"""Float ops: the required half of burn's ``FloatOps``, each a line or two of NumPy.

Contract conventions (see ``burn/backend/ops/float.py``): dims arrive normalized, reductions
along a dim keep it with size 1, binary ops broadcast like NumPy and give the wider dtype,
`slices` holds one concrete Python slice per dim, indices are int primitives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from burn.backend import Device
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn_template import _arrays as A

Array = np.ndarray
Shape = tuple[int, ...]
Slices = tuple[slice, ...]

_erf = np.frompyfunc(math.erf, 1, 1)  # exact to rounding and slow: fine for a template


class FloatOps:
    """Float tensor ops on NumPy arrays."""

    _device: Device
    int_dtype: DType

    # -- host exchange, metadata ---------------------------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> Array:
        return A.from_data("float_from_data", data)

    def float_into_data(self, tensor: Array) -> TensorData:
        return A.into_data(tensor)

    def float_device(self, tensor: Array) -> Device:
        return self._device

    def float_to_device(self, tensor: Array, device: Device) -> Array:
        return tensor  # one device: nothing to move

    def float_shape(self, tensor: Array) -> Shape:
        return tuple(tensor.shape)

    def float_get_dtype(self, tensor: Array) -> DType:
        return DType(tensor.dtype.name)

    def float_cast(self, tensor: Array, dtype: DType) -> Array:
        return A.cast("float_cast", tensor, dtype)

    def float_into_int(self, tensor: Array, dtype: DType) -> Array:
        return A.cast("float_into_int", np.trunc(tensor), dtype)

    # -- arithmetic ----------------------------------------------------------------------------
    def float_add(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs + rhs)

    def float_sub(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs - rhs)

    def float_mul(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs * rhs)

    def float_div(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore", invalid="ignore"):  # x/0 is inf or nan, as on a GPU
            return A.out(lhs / rhs)

    def float_remainder(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore", invalid="ignore"):
            return A.out(np.remainder(lhs, rhs))

    def float_powf(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return A.out(np.power(lhs, rhs))

    def float_matmul(self, lhs: Array, rhs: Array) -> Array:
        return np.matmul(lhs, rhs)

    # -- element-wise functions (the result keeps the input's dtype) ----------------------------
    def _unary(self, fn: Callable[[Array], Any], tensor: Array) -> Array:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return A.out(fn(tensor)).astype(tensor.dtype, copy=False)

    def float_exp(self, tensor: Array) -> Array:
        return self._unary(np.exp, tensor)

    def float_log(self, tensor: Array) -> Array:
        return self._unary(np.log, tensor)

    def float_sqrt(self, tensor: Array) -> Array:
        return self._unary(np.sqrt, tensor)

    def float_abs(self, tensor: Array) -> Array:
        return self._unary(np.abs, tensor)

    def float_sin(self, tensor: Array) -> Array:
        return self._unary(np.sin, tensor)

    def float_cos(self, tensor: Array) -> Array:
        return self._unary(np.cos, tensor)

    def float_tanh(self, tensor: Array) -> Array:
        return self._unary(np.tanh, tensor)

    def float_erf(self, tensor: Array) -> Array:
        return self._unary(_erf, tensor)

    def float_round(self, tensor: Array) -> Array:
        return self._unary(np.round, tensor)  # half to even, as the contract asks

    def float_floor(self, tensor: Array) -> Array:
        return self._unary(np.floor, tensor)

    def float_ceil(self, tensor: Array) -> Array:
        return self._unary(np.ceil, tensor)

    # -- comparisons (bool primitives) ----------------------------------------------------------
    def float_equal(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs == rhs)

    def float_greater(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs > rhs)

    def float_greater_equal(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs >= rhs)

    def float_lower(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs < rhs)

    def float_lower_equal(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs <= rhs)

    # -- reductions along a dim (the dim is kept) -----------------------------------------------
    def float_sum_dim(self, tensor: Array, dim: int) -> Array:
        return np.sum(tensor, axis=dim, keepdims=True, dtype=tensor.dtype)

    def float_prod_dim(self, tensor: Array, dim: int) -> Array:
        return np.prod(tensor, axis=dim, keepdims=True, dtype=tensor.dtype)

    def float_argmax(self, tensor: Array, dim: int) -> Array:
        return np.argmax(tensor, axis=dim, keepdims=True).astype(self.int_dtype.numpy)

    def float_argmin(self, tensor: Array, dim: int) -> Array:
        return np.argmin(tensor, axis=dim, keepdims=True).astype(self.int_dtype.numpy)

    def float_cumsum(self, tensor: Array, dim: int) -> Array:
        return np.cumsum(tensor, axis=dim, dtype=tensor.dtype)

    # -- shape ----------------------------------------------------------------------------------
    def float_reshape(self, tensor: Array, shape: Shape) -> Array:
        return tensor.reshape(shape)

    def float_permute(self, tensor: Array, axes: Shape) -> Array:
        return np.transpose(tensor, axes)

    def float_flip(self, tensor: Array, axes: Shape) -> Array:
        return np.flip(tensor, axis=tuple(axes))

    def float_expand(self, tensor: Array, shape: Shape) -> Array:
        return np.broadcast_to(tensor, shape)  # a read-only view: fine, primitives never change

    def float_slice(self, tensor: Array, slices: Slices) -> Array:
        return tensor[slices]

    def float_slice_assign(self, tensor: Array, slices: Slices, value: Array) -> Array:
        return A.slice_assign(tensor, slices, value)

    def float_cat(self, tensors: Sequence[Array], dim: int) -> Array:
        return np.concatenate(list(tensors), axis=dim)

    # -- indexing and masks ---------------------------------------------------------------------
    def float_gather(self, dim: int, tensor: Array, indices: Array) -> Array:
        return np.take_along_axis(tensor, indices, axis=dim)

    def float_scatter_add(self, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
        return A.scatter_add(dim, tensor, indices, values)

    def float_select(self, tensor: Array, dim: int, indices: Array) -> Array:
        return np.take(tensor, indices, axis=dim)

    def float_select_add(self, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
        return A.select_add(tensor, dim, indices, values)

    def float_mask_where(self, tensor: Array, mask: Array, value: Array) -> Array:
        return A.out(np.where(mask, value, tensor))

    def float_mask_fill(self, tensor: Array, mask: Array, value: float) -> Array:
        return A.out(np.where(mask, tensor.dtype.type(value), tensor))

    def float_sort_with_indices(self, tensor: Array, dim: int, descending: bool) -> tuple[Array, Array]:
        idx = A.sort_indices(tensor, dim, descending)
        return np.take_along_axis(tensor, idx, axis=dim), idx.astype(self.int_dtype.numpy)
