"""Bool ops (`burn.backend.BoolOps`) on NumPy bool arrays."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType
from burn_ndarray import _common as c
from burn_ndarray._dtypes import BOOL, BOOL_DTYPES, NP_OF

Array = Any


class BoolOps:
    """The ``bool_*`` ops of `burn_ndarray.NdArray`."""

    _device: Device
    _int_np: np.dtype

    def bool_from_data(self, data: TensorData, device: Device) -> Array:
        return c.from_data("bool_from_data", data, BOOL_DTYPES)

    def bool_into_data(self, tensor: Array) -> TensorData:
        return c.into_data(tensor)

    bool_device = c.device
    bool_to_device = c.to_device
    bool_shape = attrgetter("shape")

    def bool_into_int(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    def bool_into_float(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    def bool_full(self, shape: tuple[int, ...], value: bool, device: Device) -> Array:
        return np.full(shape, value, BOOL)

    def bool_zeros(self, shape: tuple[int, ...], device: Device) -> Array:
        return np.zeros(shape, BOOL)

    def bool_ones(self, shape: tuple[int, ...], device: Device) -> Array:
        return np.ones(shape, BOOL)

    def bool_empty(self, shape: tuple[int, ...], device: Device) -> Array:
        return np.empty(shape, BOOL)

    bool_not = np.logical_not
    bool_and = np.logical_and
    bool_or = np.logical_or
    bool_xor = np.logical_xor
    bool_equal = np.equal
    bool_not_equal = np.not_equal

    def bool_argwhere(self, tensor: Array) -> Array:
        return np.argwhere(tensor).astype(self._int_np, copy=False)

    def bool_any(self, tensor: Array) -> Array:
        return tensor.any().reshape(1)

    def bool_all(self, tensor: Array) -> Array:
        return tensor.all().reshape(1)

    def bool_any_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.any(axis=dim, keepdims=True)

    def bool_all_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.all(axis=dim, keepdims=True)

    bool_reshape = c.reshape
    bool_permute = c.permute
    bool_flip = c.flip
    bool_expand = c.expand
    bool_slice = c.slice_
    bool_slice_assign = c.slice_assign
    bool_cat = c.cat
    bool_swap_dims = c.swap_dims
    bool_repeat_dim = c.repeat_dim
    bool_select = c.select
    bool_gather = c.gather

    def bool_mask_where(self, tensor: Array, mask: Array, value: Array) -> Array:
        # Logical ops never branch (np.where does, and crawls on random masks).
        return (value & mask) | (tensor & ~mask)
