"""Bool ops (`burn.backend.BoolOps`) written once against the array namespace ``self.xp``.

Logical ops are the namespace's ufuncs, listed in `BOOL_UFUNCS` (bound by the backend, see
`tensor_common.bind_ufuncs`).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from burn.backend.device import Device
from burn.backend.xp import tensor_common as c
from burn.backend.xp.dtypes import BOOL, BOOL_DTYPES, NP_OF
from burn.backend.xp.tensor_common import XpTensorBase
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

Array = Any

BOOL_UFUNCS: dict[str, str] = {
    "bool_not": "logical_not",
    "bool_and": "logical_and",
    "bool_or": "logical_or",
    "bool_xor": "logical_xor",
    "bool_equal": "equal",
    "bool_not_equal": "not_equal",
}
"""Bool ops that are a namespace's ufunc, by op name: the ufunc's name."""


class XpBoolOps(XpTensorBase):
    """The ``bool_*`` ops shared by the NumPy-like backends (host exchange and devices are the
    backend's own)."""

    def bool_from_data(self, data: TensorData, device: Device) -> Array:
        return self._from_data("bool_from_data", data, BOOL_DTYPES, device)

    bool_shape = attrgetter("shape")  # not a descriptor: called with the tensor alone

    def bool_into_int(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    def bool_into_float(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    # -- creation ---------------------------------------------------------------------------------
    def bool_full(self, shape: tuple[int, ...], value: bool, device: Device) -> Array:
        return self.xp.full(shape, value, BOOL)

    def bool_zeros(self, shape: tuple[int, ...], device: Device) -> Array:
        return self.xp.zeros(shape, BOOL)

    def bool_ones(self, shape: tuple[int, ...], device: Device) -> Array:
        return self.xp.ones(shape, BOOL)

    def bool_empty(self, shape: tuple[int, ...], device: Device) -> Array:
        return self.xp.empty(shape, BOOL)

    # -- reductions -------------------------------------------------------------------------------
    def bool_argwhere(self, tensor: Array) -> Array:
        return self.xp.argwhere(tensor).astype(self._int_np, copy=False)  # on a GPU: waits for the count

    def bool_any(self, tensor: Array) -> Array:
        return tensor.any().reshape(1)

    def bool_all(self, tensor: Array) -> Array:
        return tensor.all().reshape(1)

    def bool_any_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.any(axis=dim, keepdims=True)

    def bool_all_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.all(axis=dim, keepdims=True)

    # -- shape ops, indexing ----------------------------------------------------------------------
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
