"""Compiled kernels of the quantization family (numba): the dynamic int8 Linear's row
quantization, its integer dot products for few rows, and the scaling epilogue
(`burn_ndarray.ops.quantization`). Each is a serial kernel over a range of rows and a launcher
over chunks of them (`burn_ndarray.kernels.jit`): the same bits at any thread count.

The float steps are the contract default's, in the same order and in float32
(``scale = max|row| / 127``, 1 for a zero row; ``q = clamp(rint(x / scale), -127, 127)``;
``float32(sum) * scale * weight_scale + bias``), so results are the default's, bit for bit.

`int8_dots` forms each product as int16 (|q| <= 127) and sums in int32 along the contiguous
input dim: the shape of x86's ``vpmaddwd``, which LLVM emits for the loop (checked in the asm).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any
_f32 = np.float32
_QMAX = _f32(127.0)


@jit
def quantize_rows_range(lo: int, hi: int, x: Array, q: Array, scales: Array) -> None:
    """Rows `lo` to `hi` of the float32 ``x [m, k]`` into ``q`` (int8, or float32 holding the
    same integers), each row's scale into ``scales [m]``."""
    k = x.shape[1]
    for i in range(lo, hi):
        amax = _f32(0.0)
        for p in range(k):
            a = abs(x[i, p])
            amax = a if a > amax else amax
        s = amax / _QMAX
        s = _f32(1.0) if amax == _f32(0.0) else s
        scales[i] = s
        for p in range(k):
            v = np.rint(x[i, p] / s)
            q[i, p] = -_QMAX if v < -_QMAX else (_QMAX if v > _QMAX else v)


@jit
def int8_dots_range(lo: int, hi: int, q: Array, w: Array, sums: Array) -> None:
    """``sums[i, j] = sum_p q[i, p] * w[j, p]`` in int32 for the weight rows `lo` to `hi` of the
    int8 ``w [n, k]`` and every row of the int8 ``q [m, k]``."""
    m, k = q.shape
    for j in range(lo, hi):
        for i in range(m):
            acc = np.int32(0)
            for p in range(k):
                acc += np.int32(np.int16(q[i, p]) * np.int16(w[j, p]))
            sums[i, j] = acc


@jit
def scale_sums_range(
    lo: int, hi: int, sums: Array, scales: Array, w_scales: Array, bias: Array, out: Array
) -> None:
    """Rows `lo` to `hi` of ``out = float32(sums) * scales[:, None] * w_scales (+ bias)``."""
    n = sums.shape[1]
    for i in range(lo, hi):
        s = scales[i]
        for j in range(n):
            v = _f32(sums[i, j]) * s * w_scales[j]
            out[i, j] = v if bias is None else v + bias[j]


@jit_parallel
def quantize_rows(parts: int, x: Array, q: Array, scales: Array) -> None:
    """`quantize_rows_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        quantize_rows_range(lo, hi, x, q, scales)


@jit_parallel
def int8_dots(parts: int, q: Array, w: Array, sums: Array) -> None:
    """`int8_dots_range` over every weight row, chunks of weight rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(w.shape[0], c, parts)
        int8_dots_range(lo, hi, q, w, sums)


@jit_parallel
def scale_sums(parts: int, sums: Array, scales: Array, w_scales: Array, bias: Array, out: Array) -> None:
    """`scale_sums_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(sums.shape[0], c, parts)
        scale_sums_range(lo, hi, sums, scales, w_scales, bias, out)
