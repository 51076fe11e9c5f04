"""NumPy kernels for the ops of `burn.backend.math_ops`: each is one ufunc (or ufunc method) call.

The defaults in burn-core compose these ops from others (a Newton-refined ``atan``, a log-step
scan, bit-by-bit bitwise ops); NumPy has every one of them as a single kernel. Ufuncs bound as
class attributes are called with no Python frame in between (see `burn_ndarray._float_ops`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray._dtypes import BF16, BF16_SCALAR, F32, LOW

Array = Any


class MathOps:
    """The math, cumulative and bitwise ops of `burn_ndarray.NdArray`."""

    # -- trigonometric and hyperbolic functions, rounding toward zero --------------------------
    float_tan = np.tan
    float_sinh = np.sinh
    float_cosh = np.cosh
    float_asin = np.arcsin
    float_acos = np.arccos
    float_atan = np.arctan
    float_atan2 = np.arctan2
    float_asinh = np.arcsinh
    float_acosh = np.arccosh
    float_atanh = np.arctanh
    float_trunc = np.trunc
    float_fmod = np.fmod  # the dividend's sign, like C

    def float_fmod_scalar(self, lhs: Array, rhs: float) -> Array:
        return np.fmod(lhs, BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    # -- cumulative ops -----------------------------------------------------------------------
    def float_cumprod(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype in LOW:  # accumulate in float32, as the other reductions do
            return np.cumprod(tensor, axis=dim, dtype=F32).astype(tensor.dtype)
        return np.cumprod(tensor, axis=dim)

    def float_cummax(self, tensor: Array, dim: int) -> Array:
        return np.maximum.accumulate(tensor, axis=dim)

    def float_cummin(self, tensor: Array, dim: int) -> Array:
        return np.minimum.accumulate(tensor, axis=dim)

    def int_cumprod(self, tensor: Array, dim: int) -> Array:
        return np.cumprod(tensor, axis=dim, dtype=tensor.dtype)  # NumPy would widen small ints

    def int_cummax(self, tensor: Array, dim: int) -> Array:
        return np.maximum.accumulate(tensor, axis=dim)

    def int_cummin(self, tensor: Array, dim: int) -> Array:
        return np.minimum.accumulate(tensor, axis=dim)

    # -- int matmul and bitwise ops -----------------------------------------------------------
    int_matmul = np.matmul
    int_bitwise_and = int_bitwise_and_scalar = np.bitwise_and
    int_bitwise_or = int_bitwise_or_scalar = np.bitwise_or
    int_bitwise_xor = int_bitwise_xor_scalar = np.bitwise_xor
    int_bitwise_not = np.invert
    int_bitwise_left_shift = int_bitwise_left_shift_scalar = np.left_shift
    int_bitwise_right_shift = int_bitwise_right_shift_scalar = np.right_shift
