"""Int ops (`burn.backend.IntOps`) written once against the array namespace ``self.xp``.

Ops that map 1:1 onto a ufunc are listed in `INT_UFUNCS` (bound by the backend, see
`tensor_common.bind_ufuncs`). Scalars are typed like the tensor, so results keep its int type and a
scalar it cannot hold raises OverflowError, as on every backend; comparisons with such a scalar
are answered without a cast. Sums, products and cumulative sums keep the tensor's int type.
Division and remainder (floor, by zero 0) are the backend's own: its namespace decides how.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.backend.xp import tensor_common as c
from burn.backend.xp.dtypes import INT_DTYPES, NP_OF
from burn.backend.xp.tensor_common import XpTensorBase
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

Array = Any

INT_UFUNCS: dict[str, str] = {
    "int_add": "add",
    "int_sub": "subtract",
    "int_mul": "multiply",
    "int_abs": "absolute",
    "int_neg": "negative",
    "int_sign": "sign",
    "int_equal": "equal",
    "int_not_equal": "not_equal",
    "int_greater": "greater",
    "int_greater_equal": "greater_equal",
    "int_lower": "less",
    "int_lower_equal": "less_equal",
}
"""Int ops that are a namespace's ufunc, by op name: the ufunc's name."""

INT_SCALAR_UFUNCS: dict[str, str] = {
    "int_equal_elem": "equal",
    "int_not_equal_elem": "not_equal",
    "int_greater_elem": "greater",
    "int_greater_equal_elem": "greater_equal",
    "int_lower_elem": "less",
    "int_lower_equal_elem": "less_equal",
}
"""Comparisons with a scalar as the bare ufunc, for a namespace that compares with Python ints out
of the type's range exactly (NumPy 2)."""


def compare_scalar(xp: Any, lhs: Array, rhs: int, op: Any, below: bool, above: bool) -> Array:
    """``op(lhs, rhs)``; the constant `below` / `above` when `rhs` is below / above the range of
    `lhs`'s type (no cast that would overflow)."""
    info = np.iinfo(lhs.dtype)
    if info.min <= rhs <= info.max:
        return op(lhs, lhs.dtype.type(rhs))
    return xp.full(lhs.shape, below if rhs < info.min else above, dtype=bool)


class XpIntOps(XpTensorBase):
    """The ``int_*`` ops shared by the NumPy-like backends (host exchange, devices, random,
    division and scatter sums are the backend's own)."""

    int_div_scalar: Callable[[Array, int], Array]
    """The backend's floor division by a scalar (the int mean divides by the count with it)."""

    # -- metadata, conversions ------------------------------------------------------------------
    def int_from_data(self, data: TensorData, device: Device) -> Array:
        return self._from_data("int_from_data", data, INT_DTYPES, device)

    int_shape = attrgetter("shape")  # not a descriptor: called with the tensor alone
    int_get_dtype = c.get_dtype

    def int_cast(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype], copy=False)

    def int_into_float(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    # -- creation ---------------------------------------------------------------------------------
    def int_full(self, shape: tuple[int, ...], value: int, device: Device, dtype: DType) -> Array:
        target = NP_OF[dtype]
        return self.xp.full(shape, target.type(value), target)  # typed: out of range raises

    def int_zeros(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return self.xp.zeros(shape, NP_OF[dtype])

    def int_ones(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return self.xp.ones(shape, NP_OF[dtype])

    def int_empty(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return self.xp.empty(shape, NP_OF[dtype])

    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> Array:
        return self.xp.arange(start, end, step, dtype=NP_OF[dtype])

    # -- scalar arithmetic ------------------------------------------------------------------------
    def int_add_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs + lhs.dtype.type(rhs)

    def int_sub_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs - lhs.dtype.type(rhs)

    def int_mul_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs * lhs.dtype.type(rhs)

    def int_clamp_min(self, tensor: Array, min: int) -> Array:
        return self.xp.maximum(tensor, tensor.dtype.type(min))

    def int_clamp_max(self, tensor: Array, max: int) -> Array:
        return self.xp.minimum(tensor, tensor.dtype.type(max))

    def int_clamp(self, tensor: Array, min: int, max: int) -> Array:
        t = tensor.dtype.type
        return self.xp.minimum(self.xp.maximum(tensor, t(min)), t(max))

    # -- comparisons with a scalar ----------------------------------------------------------------
    def int_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return compare_scalar(self.xp, lhs, rhs, self.xp.equal, False, False)

    def int_not_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return compare_scalar(self.xp, lhs, rhs, self.xp.not_equal, True, True)

    def int_greater_elem(self, lhs: Array, rhs: int) -> Array:
        return compare_scalar(self.xp, lhs, rhs, self.xp.greater, True, False)

    def int_greater_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return compare_scalar(self.xp, lhs, rhs, self.xp.greater_equal, True, False)

    def int_lower_elem(self, lhs: Array, rhs: int) -> Array:
        return compare_scalar(self.xp, lhs, rhs, self.xp.less, False, True)

    def int_lower_equal_elem(self, lhs: Array, rhs: int) -> Array:
        return compare_scalar(self.xp, lhs, rhs, self.xp.less_equal, False, True)

    # -- reductions -------------------------------------------------------------------------------
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
        return self.int_div_scalar(total, n) if n else total

    def int_mean(self, tensor: Array) -> Array:
        n = tensor.size
        total = tensor.sum(dtype=tensor.dtype).reshape(1)
        return self.int_div_scalar(total, n) if n else total

    def int_cumsum(self, tensor: Array, dim: int) -> Array:
        return self.xp.cumsum(tensor, axis=dim, dtype=tensor.dtype)

    int_argmax = c.argmax
    int_argmin = c.argmin
    int_max_dim = c.max_dim
    int_min_dim = c.min_dim
    int_max_dim_with_indices = c.max_dim_with_indices
    int_min_dim_with_indices = c.min_dim_with_indices
    int_max = c.max_
    int_min = c.min_

    # -- shape ops --------------------------------------------------------------------------------
    int_reshape = c.reshape
    int_permute = c.permute
    int_flip = c.flip
    int_expand = c.expand
    int_slice = c.slice_
    int_slice_assign = c.slice_assign
    int_cat = c.cat
    int_swap_dims = c.swap_dims
    int_repeat_dim = c.repeat_dim

    # -- indexing ---------------------------------------------------------------------------------
    int_gather = c.gather
    int_select = c.select
    int_mask_where = c.mask_where
    int_mask_fill = c.mask_fill

    # -- sorting ----------------------------------------------------------------------------------
    int_sort_with_indices = c.sort_with_indices
    int_sort = c.sort
    int_argsort = c.argsort
