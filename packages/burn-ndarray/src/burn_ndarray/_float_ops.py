"""Float ops (`burn.backend.FloatOps`) on NumPy arrays.

Ops that map 1:1 onto a ufunc are the ufunc itself, bound as a class attribute: ufuncs are not
descriptors, so ``self.float_add(a, b)`` *is* ``np.add(a, b)`` with no Python frame in between.
Scalar ops pass the Python scalar straight to NumPy, whose NEP 50 rules keep the tensor's dtype,
except for bfloat16, which ml_dtypes would widen to float32: there the scalar is typed first.
float16 and bfloat16 reductions and matmul run in float32 (NumPy has no BLAS or accumulating
kernels for them) and cast back.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.tensor.data import TensorData
from burn.tensor.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.tensor.dtype import DType
from burn_ndarray import _common as c
from burn_ndarray._dtypes import BF16, BF16_SCALAR, F32, F64, FLOAT_DTYPES, LOW, NP_OF
from burn_ndarray._erf import erf

Array = Any


class FloatOps:
    """The ``float_*`` ops of `burn_ndarray.NdArray`."""

    _device: Device
    _int_np: np.dtype
    rng: np.random.Generator

    # -- host exchange, metadata --------------------------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> Array:
        return c.from_data("float_from_data", data, FLOAT_DTYPES)

    def float_into_data(self, tensor: Array) -> TensorData:
        return c.into_data(tensor)

    float_device = c.device
    float_to_device = c.to_device
    float_shape = attrgetter("shape")  # not a descriptor: called with the tensor alone
    float_get_dtype = c.get_dtype

    def float_cast(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype], copy=False)

    def float_into_int(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    # -- creation -----------------------------------------------------------------------------
    def float_full(self, shape: tuple[int, ...], value: float, device: Device, dtype: DType) -> Array:
        return np.full(shape, value, NP_OF[dtype])

    def float_zeros(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return np.zeros(shape, NP_OF[dtype])

    def float_ones(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return np.ones(shape, NP_OF[dtype])

    def float_empty(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return np.empty(shape, NP_OF[dtype])

    def float_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        target = NP_OF[dtype]
        work = F64 if target is F64 else F32  # the generator draws float32 natively: half the work
        rng = self.rng
        if isinstance(distribution, Uniform):
            low, high = distribution.low, distribution.high
            values = rng.random(shape, dtype=work)
            values *= high - low
            values += low
            values = values.astype(target, copy=False)
            if high > low:
                # Rounding (scaling, or the cast to a narrower type) may land on `high`: keep [low, high).
                np.minimum(values, np.nextafter(target.type(high), target.type(low)), out=values)
            return values
        if isinstance(distribution, Normal):
            values = rng.standard_normal(shape, dtype=work)
            values *= distribution.std
            values += distribution.mean
            return values.astype(target, copy=False)
        if isinstance(distribution, Bernoulli):
            return (rng.random(shape) < distribution.prob).astype(target)
        raise TypeError(f"float_random: unknown distribution {distribution!r}")

    # -- arithmetic ---------------------------------------------------------------------------
    float_add = np.add
    float_sub = np.subtract
    float_mul = np.multiply
    float_div = np.true_divide
    float_remainder = np.remainder  # sign of the divisor, like Python's %
    float_powf = np.power

    def float_matmul(self, lhs: Array, rhs: Array) -> Array:
        dtype = lhs.dtype
        if rhs.dtype is dtype and (dtype is F32 or dtype is F64):
            # ndarray.dot reaches the same BLAS GEMM as np.matmul for 2-D operands, without the
            # gufunc dispatch that costs a few microseconds per call on small matrices.
            if rhs.ndim == 2:
                if lhs.ndim == 2:
                    return lhs.dot(rhs)
                if lhs.ndim > 2 and lhs.size:
                    # [..., M, K] @ [K, N] (a Linear on a sequence): one GEMM over all the rows,
                    # which BLAS threads well, instead of NumPy's one small GEMM per matrix
                    # (1.8x faster for [32, 128, 256] @ [256, 256] at two threads).
                    rows = lhs.reshape(-1, lhs.shape[-1])  # a copy only if lhs is not foldable
                    return rows.dot(rhs).reshape(*lhs.shape[:-1], rhs.shape[1])
            return np.matmul(lhs, rhs)
        if lhs.dtype in LOW or rhs.dtype in LOW:
            out_dtype = np.result_type(lhs.dtype, rhs.dtype)
            work = np.promote_types(out_dtype, F32)  # float64 when the other operand is float64
            return np.matmul(lhs.astype(work), rhs.astype(work)).astype(out_dtype)
        return np.matmul(lhs, rhs)

    def float_add_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs + (BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    def float_sub_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs - (BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    def float_mul_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs * (BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    def float_div_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs / (BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    def float_remainder_scalar(self, lhs: Array, rhs: float) -> Array:
        return np.remainder(lhs, BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    def float_powf_scalar(self, lhs: Array, rhs: float) -> Array:
        return lhs ** (BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    # -- unary math ---------------------------------------------------------------------------
    float_exp = np.exp
    float_log = np.log
    float_log1p = np.log1p
    float_sqrt = np.sqrt
    float_abs = np.absolute
    float_sin = np.sin
    float_cos = np.cos
    float_tanh = np.tanh
    float_round = np.rint  # half to even
    float_floor = np.floor
    float_ceil = np.ceil
    float_neg = np.negative
    float_recip = np.reciprocal
    float_sign = np.sign

    def float_erf(self, tensor: Array) -> Array:
        return erf(tensor).astype(tensor.dtype, copy=False)

    def float_clamp_min(self, tensor: Array, min: float) -> Array:
        return np.maximum(tensor, BF16_SCALAR(min) if tensor.dtype is BF16 else min)

    def float_clamp_max(self, tensor: Array, max: float) -> Array:
        return np.minimum(tensor, BF16_SCALAR(max) if tensor.dtype is BF16 else max)

    def float_clamp(self, tensor: Array, min: float, max: float) -> Array:
        if tensor.dtype is BF16:
            return np.minimum(np.maximum(tensor, BF16_SCALAR(min)), BF16_SCALAR(max))
        return np.clip(tensor, min, max)

    # -- comparisons --------------------------------------------------------------------------
    float_equal = float_equal_elem = np.equal
    float_not_equal = float_not_equal_elem = np.not_equal
    float_greater = float_greater_elem = np.greater
    float_greater_equal = float_greater_equal_elem = np.greater_equal
    float_lower = float_lower_elem = np.less
    float_lower_equal = float_lower_equal_elem = np.less_equal
    float_is_nan = np.isnan
    float_is_inf = np.isinf

    # -- reductions ---------------------------------------------------------------------------
    def float_sum_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype in LOW:
            return tensor.sum(axis=dim, dtype=F32, keepdims=True).astype(tensor.dtype)
        return tensor.sum(axis=dim, keepdims=True)

    def float_sum(self, tensor: Array) -> Array:
        if tensor.dtype in LOW:
            return tensor.sum(dtype=F32).astype(tensor.dtype).reshape(1)
        return tensor.sum().reshape(1)

    def float_mean_dim(self, tensor: Array, dim: int) -> Array:
        if tensor.shape[dim] == 0:  # NaN without NumPy's "mean of empty slice" warning
            return np.full(tensor.shape[:dim] + (1,) + tensor.shape[dim + 1 :], np.nan, tensor.dtype)
        if tensor.dtype in LOW:
            return tensor.mean(axis=dim, dtype=F32, keepdims=True).astype(tensor.dtype)
        return tensor.mean(axis=dim, keepdims=True)

    def float_mean(self, tensor: Array) -> Array:
        if tensor.size == 0:
            return np.full((1,), np.nan, tensor.dtype)
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
            return np.cumsum(tensor, axis=dim, dtype=F32).astype(tensor.dtype)
        return np.cumsum(tensor, axis=dim)

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
