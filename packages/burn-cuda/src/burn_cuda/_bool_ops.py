"""Bool ops (`burn.backend.BoolOps`) on CuPy bool arrays."""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

from burn.backend.device import Device
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType
from burn_cuda import _common as c
from burn_cuda._dtypes import BOOL, BOOL_DTYPES, NP_OF
from burn_cuda._runtime import on

Array = Any


class BoolOps:
    """The ``bool_*`` ops of `burn_cuda.Cuda`."""

    _devices: list[Device]
    _int_np: np.dtype

    def bool_from_data(self, data: TensorData, device: Device) -> Array:
        return c.from_data(self, "bool_from_data", data, BOOL_DTYPES, device)

    def bool_into_data(self, tensor: Array) -> TensorData:
        return c.into_data(tensor)

    bool_device = c.device
    bool_to_device = c.to_device
    bool_shape = c.shape

    def bool_into_int(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    def bool_into_float(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    def bool_full(self, shape: tuple[int, ...], value: bool, device: Device) -> Array:
        with on(self, device):
            return cp.full(shape, bool(value), BOOL)

    def bool_zeros(self, shape: tuple[int, ...], device: Device) -> Array:
        with on(self, device):
            return cp.zeros(shape, BOOL)

    def bool_ones(self, shape: tuple[int, ...], device: Device) -> Array:
        with on(self, device):
            return cp.ones(shape, BOOL)

    def bool_empty(self, shape: tuple[int, ...], device: Device) -> Array:
        with on(self, device):
            return cp.empty(shape, BOOL)

    bool_not = cp.logical_not
    bool_and = cp.logical_and
    bool_or = cp.logical_or
    bool_xor = cp.logical_xor
    bool_equal = cp.equal
    bool_not_equal = cp.not_equal

    def bool_argwhere(self, tensor: Array) -> Array:
        return cp.argwhere(tensor).astype(self._int_np, copy=False)  # waits for the count

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
    bool_mask_where = c.mask_where
