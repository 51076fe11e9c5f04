"""Float ops (`burn.backend.FloatOps`) on CuPy arrays.

Ops that map 1:1 onto a CuPy ufunc are the ufunc itself, bound as a class attribute (ufuncs are
not descriptors: ``self.float_add(a, b)`` *is* ``cupy.add(a, b)``). Scalars are typed like the
tensor, so results keep its dtype. float16 reductions accumulate in float32 and round once.
Matmul is ``cupy.matmul``: cuBLAS GEMM, strided-batched over broadcast leading dims.
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
from burn_cuda._dtypes import F16, F32, FLOAT_DTYPES, NP_OF
from burn_cuda._runtime import on

Array = Any


class FloatOps:
    """The ``float_*`` ops of `burn_cuda.Cuda`."""

    _devices: list[Device]
    _int_np: np.dtype

    # -- host exchange, metadata --------------------------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> Array:
        return c.from_data(self, "float_from_data", data, FLOAT_DTYPES, device)

    def float_into_data(self, tensor: Array) -> TensorData:
        return c.into_data(tensor)

    float_device = c.device
    float_to_device = c.to_device
    float_shape = c.shape
    float_get_dtype = c.get_dtype

    def float_cast(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype], copy=False)

    def float_into_int(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])  # truncates toward zero

    # -- creation -----------------------------------------------------------------------------
    def float_full(self, shape: tuple[int, ...], value: float, device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.full(shape, value, NP_OF[dtype])

    def float_zeros(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.zeros(shape, NP_OF[dtype])

    def float_ones(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.ones(shape, NP_OF[dtype])

    def float_empty(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        with on(self, device):
            return cp.empty(shape, NP_OF[dtype])

    def float_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        return _random.float_random(self, shape, distribution, device, NP_OF[dtype])

    # -- arithmetic ---------------------------------------------------------------------------
    float_add = cp.add
    float_sub = cp.subtract
    float_mul = cp.multiply
    float_div = cp.true_divide
    float_remainder = cp.remainder  # sign of the divisor, like Python's %
    float_powf = cp.power
    float_matmul = cp.matmul

    def float_add_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs + lhs.dtype.type(rhs)

    def float_sub_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs - lhs.dtype.type(rhs)

    def float_mul_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs * lhs.dtype.type(rhs)

    def float_div_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs / lhs.dtype.type(rhs)

    def float_remainder_scalar(self, lhs: Array, rhs: float) -> Array:
        return cp.remainder(lhs, lhs.dtype.type(rhs))

    def float_powf_scalar(self, lhs: Array, rhs: float) -> Array:
        if rhs == 2.0:
            return lhs * lhs  # one multiply, no pow
        return cp.power(lhs, lhs.dtype.type(rhs))

    # -- unary math ---------------------------------------------------------------------------
    float_exp = cp.exp
    float_log = cp.log
    float_log1p = cp.log1p
    float_sqrt = cp.sqrt
    float_abs = cp.absolute
    float_sin = cp.sin
    float_cos = cp.cos
    float_tanh = cp.tanh
    float_round = cp.rint  # half to even
    float_floor = cp.floor
    float_ceil = cp.ceil
    float_neg = cp.negative
    float_recip = cp.reciprocal
    float_sign = cp.sign

    def float_erf(self, tensor: Array) -> Array:
        if tensor.dtype == F16:
            return k.erf(tensor.astype(F32)).astype(F16)
        return k.erf(tensor)

    def float_clamp_min(self, tensor: Array, min: float) -> Array:
        return cp.maximum(tensor, tensor.dtype.type(min))

    def float_clamp_max(self, tensor: Array, max: float) -> Array:
        return cp.minimum(tensor, tensor.dtype.type(max))

    def float_clamp(self, tensor: Array, min: float, max: float) -> Array:
        t = tensor.dtype.type
        return cp.minimum(cp.maximum(tensor, t(min)), t(max))

    # -- comparisons --------------------------------------------------------------------------
    float_equal = cp.equal
    float_not_equal = cp.not_equal
    float_greater = cp.greater
    float_greater_equal = cp.greater_equal
    float_lower = cp.less
    float_lower_equal = cp.less_equal
    float_is_nan = cp.isnan
    float_is_inf = cp.isinf

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

    # -- reductions ---------------------------------------------------------------------------
    def float_sum_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype == F16:
            return tensor.sum(axis=dim, dtype=F32, keepdims=True).astype(F16)
        return tensor.sum(axis=dim, keepdims=True)

    def float_sum(self, tensor: Array) -> Array:
        if tensor.dtype == F16:
            return tensor.sum(dtype=F32).astype(F16).reshape(1)
        return tensor.sum().reshape(1)

    def float_mean_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype == F16:
            return tensor.mean(axis=dim, dtype=F32, keepdims=True).astype(F16)
        return tensor.mean(axis=dim, keepdims=True)

    def float_mean(self, tensor: Array) -> Array:
        if tensor.dtype == F16:
            return tensor.mean(dtype=F32).astype(F16).reshape(1)
        return tensor.mean().reshape(1)

    def float_prod_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype == F16:
            return tensor.prod(axis=dim, dtype=F32, keepdims=True).astype(F16)
        return tensor.prod(axis=dim, keepdims=True)

    def float_prod(self, tensor: Array) -> Array:
        if tensor.dtype == F16:
            return tensor.prod(dtype=F32).astype(F16).reshape(1)
        return tensor.prod().reshape(1)

    def float_cumsum(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype == F16:
            return cp.cumsum(tensor, axis=dim, dtype=F32).astype(F16)
        return cp.cumsum(tensor, axis=dim)

    float_argmax = c.argmax
    float_argmin = c.argmin
    float_max_dim = c.max_dim
    float_min_dim = c.min_dim
    float_max_dim_with_indices = c.max_dim_with_indices
    float_min_dim_with_indices = c.min_dim_with_indices
    float_max = c.max_
    float_min = c.min_

    # -- shape ops ----------------------------------------------------------------------------
    float_reshape = c.reshape
    float_permute = c.permute
    float_flip = c.flip
    float_expand = c.expand
    float_slice = c.slice_
    float_slice_assign = c.slice_assign
    float_cat = c.cat
    float_swap_dims = c.swap_dims
    float_repeat_dim = c.repeat_dim

    # -- indexing -----------------------------------------------------------------------------
    float_gather = c.gather
    float_scatter_add = c.scatter_add
    float_select = c.select
    float_select_add = c.select_add
    float_mask_where = c.mask_where
    float_mask_fill = c.mask_fill

    # -- sorting ------------------------------------------------------------------------------
    float_sort_with_indices = c.sort_with_indices
    float_sort = c.sort
    float_argsort = c.argsort
