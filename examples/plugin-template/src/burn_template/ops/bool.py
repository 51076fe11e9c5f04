"""Bool ops: the required half of burn's ``BoolOps``."""

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


class BoolOps:
    """Bool tensor ops on NumPy arrays."""

    _device: Device
    int_dtype: DType

    # -- host exchange, metadata, casts ---------------------------------------------------------
    def bool_from_data(self, data: TensorData, device: Device) -> Array:
        return A.from_data("bool_from_data", data)

    def bool_into_data(self, tensor: Array) -> TensorData:
        return A.into_data(tensor)

    def bool_device(self, tensor: Array) -> Device:
        return self._device

    def bool_to_device(self, tensor: Array, device: Device) -> Array:
        return tensor

    def bool_shape(self, tensor: Array) -> Shape:
        return tuple(tensor.shape)

    def bool_into_int(self, tensor: Array, dtype: DType) -> Array:
        return A.cast("bool_into_int", tensor, dtype)

    def bool_into_float(self, tensor: Array, dtype: DType) -> Array:
        return A.cast("bool_into_float", tensor, dtype)

    # -- logic ----------------------------------------------------------------------------------
    def bool_not(self, tensor: Array) -> Array:
        return A.out(np.logical_not(tensor))

    def bool_and(self, lhs: Array, rhs: Array) -> Array:
        return A.out(np.logical_and(lhs, rhs))

    def bool_or(self, lhs: Array, rhs: Array) -> Array:
        return A.out(np.logical_or(lhs, rhs))

    def bool_equal(self, lhs: Array, rhs: Array) -> Array:
        return A.out(lhs == rhs)

    def bool_argwhere(self, tensor: Array) -> Array:
        """Int primitive ``[n_true, rank]`` of the true positions, in row-major order."""
        if tensor.ndim == 0:  # np.argwhere would give shape (n, 1) here; the contract wants (n, 0)
            return np.zeros((int(tensor), 0), dtype=self.int_dtype.numpy)
        return np.argwhere(tensor).astype(self.int_dtype.numpy)

    # -- shape ----------------------------------------------------------------------------------
    def bool_reshape(self, tensor: Array, shape: Shape) -> Array:
        return tensor.reshape(shape)

    def bool_permute(self, tensor: Array, axes: Shape) -> Array:
        return np.transpose(tensor, axes)

    def bool_flip(self, tensor: Array, axes: Shape) -> Array:
        return np.flip(tensor, axis=tuple(axes))

    def bool_expand(self, tensor: Array, shape: Shape) -> Array:
        return np.broadcast_to(tensor, shape)

    def bool_slice(self, tensor: Array, slices: Slices) -> Array:
        return tensor[slices]

    def bool_slice_assign(self, tensor: Array, slices: Slices, value: Array) -> Array:
        return A.slice_assign(tensor, slices, value)

    def bool_cat(self, tensors: Sequence[Array], dim: int) -> Array:
        return np.concatenate(list(tensors), axis=dim)
