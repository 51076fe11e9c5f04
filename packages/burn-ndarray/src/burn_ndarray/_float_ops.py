"""Float ops (`burn.backend.FloatOps`) on NumPy arrays: the shared bodies
(`burn.backend.xp.float`) plus what NumPy does its own way.

Ops that map 1:1 onto a ufunc are the ufunc itself, bound as a class attribute: ufuncs are not
descriptors, so ``self.float_add(a, b)`` *is* ``np.add(a, b)`` with no Python frame in between.
Scalar ops pass the Python scalar straight to NumPy, whose NEP 50 rules keep the tensor's dtype,
except for bfloat16, which ml_dtypes would widen to float32: there the scalar is typed first.
float16 and bfloat16 reductions and matmul run in float32 (NumPy has no BLAS or accumulating
kernels for them) and cast back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.backend.xp.float import FLOAT_SCALAR_UFUNCS, FLOAT_UFUNCS, XpFloatOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType
from burn_ndarray._common import CommonOps
from burn_ndarray._dtypes import BF16, BF16_SCALAR, F32, F64, LOW, NP_OF
from burn_ndarray._erf import erf

# ``x^T @ g`` with fewer rows than columns runs as ``(g^T @ x)^T`` from this many elements of x^T
# (`float_matmul`). OpenBLAS 0.3.31 (NumPy's wheel), AVX-512 EPYC, 2 threads: [256, 32] @ [32,
# 1024] 450 -> 110 us, [256, 4096] @ [4096, 1024] 13.3 -> 11.7 ms; 0.27-0.97 of the time on every
# such shape measured (1 thread: 0.71-1.01). Shapes with more rows than columns lose (up to 3x):
# they keep the plain product.
TRANSPOSED_LHS_MIN_SIZE = 1 << 13
# ``g @ W^T`` (an input gradient: W^T a transposed view of a C-order weight) with at most this many
# rows runs as ``(W @ g^T)^T``, copied back to C order, from `TRANSPOSED_RHS_MIN_WORK` multiply-adds.
# Same machine, 63 shapes of M in 8-1024, K in 128-1024, N in 128-1600, the copy included (the
# same bits on every shape): M <= 32 takes 0.41-0.99 of the time at 2 threads, 0.47-0.82 at one
# (an LSTM's [32, 1024] @ [1024, 256]^T: 239 -> 115 us); M = 64 is even (0.80-1.22) and from 128
# rows the swap loses (up to 4.5x at M = 1024). The smallest products lose too (8 x 128 x 128: 1.2).
TRANSPOSED_RHS_MAX_ROWS = 32
TRANSPOSED_RHS_MIN_WORK = 1 << 19
TRANSPOSED_RHS_MIN_SIZE = TRANSPOSED_RHS_MIN_WORK // TRANSPOSED_RHS_MAX_ROWS  # of W: below, too little work


def _swapped_product(lhs: Any, rhs: Any) -> Any:
    """``lhs @ rhs`` (2-D, float32/float64) as the transposed product of the transposed operands
    where OpenBLAS is faster that way (see the thresholds above), else None."""
    rows = lhs.shape[0]
    if lhs.size >= TRANSPOSED_LHS_MIN_SIZE and rows < rhs.shape[1]:
        if lhs.strides[0] < lhs.strides[1] and rhs.flags.c_contiguous:
            # x^T @ g (a weight gradient) with fewer rows than columns: OpenBLAS is up to 4x
            # faster on (g^T @ x)^T, the result then in F order.
            return rhs.T.dot(lhs.T).T
    if (
        rows <= TRANSPOSED_RHS_MAX_ROWS
        and rows * rhs.size >= TRANSPOSED_RHS_MIN_WORK
        and rhs.strides[0] < rhs.strides[1]
        and rhs.flags.f_contiguous
        and lhs.flags.c_contiguous
    ):
        # g @ W^T with few rows: OpenBLAS is up to 2.4x faster on (W @ g^T)^T; back to C order.
        return np.ascontiguousarray(rhs.T.dot(lhs.T).T)
    return None

Array = Any


# Comparisons with a scalar too are bare ufuncs: NumPy takes the Python scalar itself (NEP 50).
@bind_ufuncs(np, FLOAT_UFUNCS | FLOAT_SCALAR_UFUNCS)
class FloatOps(CommonOps, XpFloatOps):
    """The ``float_*`` ops of `burn_ndarray.NdArray`."""

    rng: np.random.Generator

    # -- random: NumPy's generator ------------------------------------------------------------
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

    # -- matmul: BLAS has no float16/bfloat16, and 2-D GEMM skips the gufunc dispatch ------------
    def float_matmul(self, lhs: Array, rhs: Array) -> Array:
        dtype = lhs.dtype
        if rhs.dtype is dtype and (dtype is F32 or dtype is F64):
            # ndarray.dot reaches the same BLAS GEMM as np.matmul for 2-D operands, without the
            # gufunc dispatch that costs a few microseconds per call on small matrices.
            if rhs.ndim == 2:
                if lhs.ndim == 2:
                    # Two size checks on the way for small products (the per-op overhead).
                    if lhs.size >= TRANSPOSED_LHS_MIN_SIZE or rhs.size >= TRANSPOSED_RHS_MIN_SIZE:
                        swapped = _swapped_product(lhs, rhs)
                        if swapped is not None:
                            return swapped
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

    # -- scalars: NEP 50 keeps the dtype for a Python scalar, so only bfloat16's is typed --------
    # (typing every scalar, as the shared ops do, costs ~180 ns an op here)
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

    def float_clamp_min(self, tensor: Array, min: float) -> Array:
        return np.maximum(tensor, BF16_SCALAR(min) if tensor.dtype is BF16 else min)

    def float_clamp_max(self, tensor: Array, max: float) -> Array:
        return np.minimum(tensor, BF16_SCALAR(max) if tensor.dtype is BF16 else max)

    def float_clamp(self, tensor: Array, min: float, max: float) -> Array:
        if tensor.dtype is BF16:
            return np.minimum(np.maximum(tensor, BF16_SCALAR(min)), BF16_SCALAR(max))
        return np.clip(tensor, min, max)

    # -- erf: NumPy has none (`_erf`, vectorized) -----------------------------------------------
    def float_erf(self, tensor: Array) -> Array:
        return erf(tensor).astype(tensor.dtype, copy=False)
