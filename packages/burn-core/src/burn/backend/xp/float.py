"""Float ops (`burn.backend.FloatOps`) written once against the array namespace ``self.xp``.

Ops that map 1:1 onto a ufunc are listed in `FLOAT_UFUNCS`, which the backend binds to its
namespace's ufuncs (`tensor_common.bind_ufuncs`). Scalars are typed like the tensor, so results keep
its dtype in any namespace (a backend whose namespace keeps the dtype for Python scalars may pass
them through instead). float16 and bfloat16 reductions accumulate in float32 and round once.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.backend.xp import tensor_common as c
from burn.backend.xp.dtypes import F32, FLOAT_DTYPES, LOW, NP_OF
from burn.backend.xp.tensor_common import XpTensorBase
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

Array = Any

FLOAT_UFUNCS: dict[str, str] = {
    "float_add": "add",
    "float_sub": "subtract",
    "float_mul": "multiply",
    "float_div": "true_divide",
    "float_remainder": "remainder",  # sign of the divisor, like Python's %
    "float_powf": "power",
    "float_matmul": "matmul",
    "float_exp": "exp",
    "float_log": "log",
    "float_log1p": "log1p",
    "float_sqrt": "sqrt",
    "float_abs": "absolute",
    "float_sin": "sin",
    "float_cos": "cos",
    "float_tanh": "tanh",
    "float_round": "rint",  # half to even
    "float_floor": "floor",
    "float_ceil": "ceil",
    "float_neg": "negative",
    "float_recip": "reciprocal",
    "float_sign": "sign",
    "float_equal": "equal",
    "float_not_equal": "not_equal",
    "float_greater": "greater",
    "float_greater_equal": "greater_equal",
    "float_lower": "less",
    "float_lower_equal": "less_equal",
    "float_is_nan": "isnan",
    "float_is_inf": "isinf",
}
"""Float ops that are a namespace's ufunc, by op name: the ufunc's name."""

FLOAT_SCALAR_UFUNCS: dict[str, str] = {
    "float_equal_elem": "equal",
    "float_not_equal_elem": "not_equal",
    "float_greater_elem": "greater",
    "float_greater_equal_elem": "greater_equal",
    "float_lower_elem": "less",
    "float_lower_equal_elem": "less_equal",
}
"""Comparisons with a scalar as the bare ufunc, for a namespace that takes Python scalars by NEP 50
(NumPy 2): the result is bool whatever the scalar's type, so it need not be typed."""


class XpFloatOps(XpTensorBase):
    """The ``float_*`` ops shared by the NumPy-like backends (host exchange, devices, random,
    erf and scatter sums are the backend's own)."""

    # -- metadata, conversions ------------------------------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> Array:
        return self._from_data("float_from_data", data, FLOAT_DTYPES, device)

    float_shape = attrgetter("shape")  # not a descriptor: called with the tensor alone
    float_get_dtype = c.get_dtype

    def float_cast(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype], copy=False)

    def float_into_int(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])  # truncates toward zero

    # -- creation ---------------------------------------------------------------------------------
    def float_full(self, shape: tuple[int, ...], value: float, device: Device, dtype: DType) -> Array:
        return self.xp.full(shape, value, NP_OF[dtype])

    def float_zeros(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return self.xp.zeros(shape, NP_OF[dtype])

    def float_ones(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return self.xp.ones(shape, NP_OF[dtype])

    def float_empty(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return self.xp.empty(shape, NP_OF[dtype])

    # -- scalar arithmetic ------------------------------------------------------------------------
    def float_add_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs + lhs.dtype.type(rhs)

    def float_sub_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs - lhs.dtype.type(rhs)

    def float_mul_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs * lhs.dtype.type(rhs)

    def float_div_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs / lhs.dtype.type(rhs)

    def float_remainder_scalar(self, lhs: Array, rhs: float) -> Array:
        return self.xp.remainder(lhs, lhs.dtype.type(rhs))

    def float_powf_scalar(self, lhs: Array, rhs: float) -> Array:
        # Small integer exponents as products and +-0.5 as a square root (the exponents
        # `burn.backend.fusion_exprs`'s b_pow takes apart too), with C pow's results everywhere.
        # numpy 2.4 on 1M float32 (ms): power(x, 3 | 4 | -2 | 2.5) 15.5 | 16.0 | 15.5 | 13.6,
        # power(x, -0.5) 12.3, power(x, 2) 1.2; the products 0.4-0.5, the square roots 2-3.
        xp = self.xp
        if rhs == 2.0:
            return lhs * lhs
        if rhs == 1.0:
            return lhs.copy()
        if rhs == 0.0:
            return xp.ones_like(lhs)  # 1 for NaN too, as pow
        if rhs == 3.0:
            y = lhs * lhs
            return xp.multiply(y, lhs, out=y)
        if rhs == 4.0:
            y = lhs * lhs
            return xp.multiply(y, y, out=y)
        if rhs == -1.0:
            return xp.reciprocal(lhs)
        if rhs == -2.0:
            y = xp.reciprocal(lhs)  # 1/x squared, not 1/(x*x): x*x would overflow before 1/x^2 underflows
            return xp.multiply(y, y, out=y)
        if rhs == 0.5 or rhs == -0.5:
            # numpy's power(x, 0.5) is its sqrt: -0 -> -0 and -inf -> NaN where pow gives +0 and +inf.
            zero = lhs.dtype.type(0)
            y = xp.sqrt(lhs + zero)  # -0 + 0 is +0
            if rhs < 0:
                xp.reciprocal(y, out=y)
            xp.copyto(y, lhs.dtype.type(np.inf if rhs > 0 else 0), where=lhs == -np.inf)
            return y
        return xp.power(lhs, lhs.dtype.type(rhs))

    def float_clamp_min(self, tensor: Array, min: float) -> Array:
        return self.xp.maximum(tensor, tensor.dtype.type(min))

    def float_clamp_max(self, tensor: Array, max: float) -> Array:
        return self.xp.minimum(tensor, tensor.dtype.type(max))

    def float_clamp(self, tensor: Array, min: float, max: float) -> Array:
        t = tensor.dtype.type
        return self.xp.minimum(self.xp.maximum(tensor, t(min)), t(max))

    # -- comparisons with a scalar ----------------------------------------------------------------
    def float_equal_elem(self, lhs: Array, rhs: float) -> Array:
        return lhs == lhs.dtype.type(rhs)

    def float_not_equal_elem(self, lhs: Array, rhs: float) -> Array:
        return lhs != lhs.dtype.type(rhs)

    def float_greater_elem(self, lhs: Array, rhs: float) -> Array:
        return lhs > lhs.dtype.type(rhs)

    def float_greater_equal_elem(self, lhs: Array, rhs: float) -> Array:
        return lhs >= lhs.dtype.type(rhs)

    def float_lower_elem(self, lhs: Array, rhs: float) -> Array:
        return lhs < lhs.dtype.type(rhs)

    def float_lower_equal_elem(self, lhs: Array, rhs: float) -> Array:
        return lhs <= lhs.dtype.type(rhs)

    # -- reductions -------------------------------------------------------------------------------
    def float_sum_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype in LOW:
            return tensor.sum(axis=dim, dtype=F32, keepdims=True).astype(tensor.dtype)
        return tensor.sum(axis=dim, keepdims=True)

    def float_sum(self, tensor: Array) -> Array:
        if tensor.dtype in LOW:
            return tensor.sum(dtype=F32).astype(tensor.dtype).reshape(1)
        return tensor.sum().reshape(1)

    def float_mean_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.shape[dim] == 0:  # NaN, without the namespace's "mean of empty slice" warning
            return self.xp.full(tensor.shape[:dim] + (1,) + tensor.shape[dim + 1 :], np.nan, tensor.dtype)
        if tensor.dtype in LOW:
            return tensor.mean(axis=dim, dtype=F32, keepdims=True).astype(tensor.dtype)
        return tensor.mean(axis=dim, keepdims=True)

    def float_mean(self, tensor: Array) -> Array:
        if tensor.size == 0:
            return self.xp.full((1,), np.nan, tensor.dtype)
        if tensor.dtype in LOW:
            return tensor.mean(dtype=F32).astype(tensor.dtype).reshape(1)
        return tensor.mean().reshape(1)

    def float_prod_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype in LOW:
            return tensor.prod(axis=dim, dtype=F32, keepdims=True).astype(tensor.dtype)
        return tensor.prod(axis=dim, keepdims=True)

    def float_prod(self, tensor: Array) -> Array:
        if tensor.dtype in LOW:
            return tensor.prod(dtype=F32).astype(tensor.dtype).reshape(1)
        return tensor.prod().reshape(1)

    def float_cumsum(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype in LOW:
            return self.xp.cumsum(tensor, axis=dim, dtype=F32).astype(tensor.dtype)
        return self.xp.cumsum(tensor, axis=dim)

    float_argmax = c.argmax
    float_argmin = c.argmin
    float_max_dim = c.max_dim
    float_min_dim = c.min_dim
    float_max_dim_with_indices = c.max_dim_with_indices
    float_min_dim_with_indices = c.min_dim_with_indices
    float_max = c.max_
    float_min = c.min_

    # -- shape ops --------------------------------------------------------------------------------
    float_reshape = c.reshape
    float_permute = c.permute
    float_flip = c.flip
    float_expand = c.expand
    float_slice = c.slice_
    float_slice_assign = c.slice_assign
    float_cat = c.cat
    float_swap_dims = c.swap_dims
    float_repeat_dim = c.repeat_dim

    # -- indexing ---------------------------------------------------------------------------------
    float_gather = c.gather
    float_select = c.select
    float_mask_where = c.mask_where
    float_mask_fill = c.mask_fill

    # -- sorting ----------------------------------------------------------------------------------
    float_sort_with_indices = c.sort_with_indices
    float_sort = c.sort
    float_argsort = c.argsort
