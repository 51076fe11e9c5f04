"""Int ops: the required half of burn's ``IntOps``. Same conventions as the float ops."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from burn.backend import Device
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn_template import _arrays as A

Array = np.ndarray
Shape = tuple[int, ...]
Slices = tuple[slice, ...]


class IntOps:
    """Int tensor ops on NumPy arrays."""

    _device: Device
    int_dtype: DType

    # -- host exchange, metadata ---------------------------------------------------------------
    def int_from_data(self, data: TensorData, device: Device) -> Array:
        return A.from_data("int_from_data", data)

    def int_into_data(self, tensor: Array) -> TensorData:
        return A.into_data(tensor)

    def int_device(self, tensor: Array) -> Device:
        return self._device

    def int_to_device(self, tensor: Array, device: Device) -> Array:
        return tensor

    def int_shape(self, tensor: Array) -> Shape:
        return tuple(tensor.shape)

    def int_get_dtype(self, tensor: Array) -> DType:
        return DType(tensor.dtype.name)

    def int_cast(self, tensor: Array, dtype: DType) -> Array:
        return A.cast("int_cast", tensor, dtype)

    def int_into_float(self, tensor: Array, dtype: DType) -> Array:
        return A.cast("int_into_float", tensor, dtype)

    # -- arithmetic ----------------------------------------------------------------------------
    def int_add(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs + rhs)

    def int_sub(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs - rhs)

    def int_mul(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs * rhs)

    def int_div(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore"):  # NumPy already gives 0 for a zero divisor
            return A.out(np.floor_divide(lhs, rhs))

    def int_remainder(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore"):
            return A.out(np.remainder(lhs, rhs))

    def int_abs(self, tensor: Array) -> Array:
        return A.out(np.abs(tensor))

    # -- comparisons ----------------------------------------------------------------------------
    def int_equal(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs == rhs)

    def int_greater(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs > rhs)

    def int_greater_equal(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs >= rhs)

    def int_lower(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs < rhs)

    def int_lower_equal(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs <= rhs)

    # -- reductions along a dim -----------------------------------------------------------------
    def int_sum_dim(self, tensor: Array, dim: int) -> Array:
        return np.sum(tensor, axis=dim, keepdims=True, dtype=tensor.dtype)

    def int_prod_dim(self, tensor: Array, dim: int) -> Array:
        return np.prod(tensor, axis=dim, keepdims=True, dtype=tensor.dtype)

    def int_argmax(self, tensor: Array, dim: int) -> Array:
        return np.argmax(tensor, axis=dim, keepdims=True).astype(self.int_dtype.numpy)

    def int_argmin(self, tensor: Array, dim: int) -> Array:
        return np.argmin(tensor, axis=dim, keepdims=True).astype(self.int_dtype.numpy)

    def int_cumsum(self, tensor: Array, dim: int) -> Array:
        return np.cumsum(tensor, axis=dim, dtype=tensor.dtype)

    # -- shape ----------------------------------------------------------------------------------
    def int_reshape(self, tensor: Array, shape: Shape) -> Array:
        return tensor.reshape(shape)

    def int_permute(self, tensor: Array, axes: Shape) -> Array:
        return np.transpose(tensor, axes)

    def int_flip(self, tensor: Array, axes: Shape) -> Array:
        return np.flip(tensor, axis=tuple(axes))

    def int_expand(self, tensor: Array, shape: Shape) -> Array:
        return np.broadcast_to(tensor, shape)

    def int_slice(self, tensor: Array, slices: Slices) -> Array:
        return tensor[slices]

    def int_slice_assign(self, tensor: Array, slices: Slices, value: Array) -> Array:
        return A.slice_assign(tensor, slices, value)

    def int_cat(self, tensors: Sequence[Array], dim: int) -> Array:
        return np.concatenate(list(tensors), axis=dim)

    # -- indexing and masks ---------------------------------------------------------------------
    def int_gather(self, dim: int, tensor: Array, indices: Array) -> Array:
        return np.take_along_axis(tensor, indices, axis=dim)

    def int_scatter_add(self, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
        return A.scatter_add(dim, tensor, indices, values)

    def int_select(self, tensor: Array, dim: int, indices: Array) -> Array:
        return np.take(tensor, indices, axis=dim)

    def int_select_add(self, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
        return A.select_add(tensor, dim, indices, values)

    def int_mask_where(self, tensor: Array, mask: Array, value: Array) -> Array:
        return A.out(np.where(mask, value, tensor))

    def int_mask_fill(self, tensor: Array, mask: Array, value: int) -> Array:
        return A.out(np.where(mask, tensor.dtype.type(value), tensor))

    def int_sort_with_indices(self, tensor: Array, dim: int, descending: bool) -> tuple[Array, Array]:
        idx = A.sort_indices(tensor, dim, descending)
        return np.take_along_axis(tensor, idx, axis=dim), idx.astype(self.int_dtype.numpy)
