"""Compiled kernels of the quantization family (numba): the dynamic int8 Linear's row
quantization, its integer dot products for few rows, and the scaling epilogue
(`burn_ndarray.ops.quantization`).

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

from burn_ndarray.kernels.jit import jit, jit_parallel

Array = Any
_f32 = np.float32
_QMAX = _f32(127.0)


@jit
def quantize_rows(x: Array, q: Array, scales: Array) -> None:
    """Each row of the float32 ``x [m, k]`` into ``q`` (int8, or float32 holding the same
    integers) with its scale in ``scales [m]``."""
    m, k = x.shape
    for i in range(m):
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


@jit_parallel
def int8_dots(q: Array, w: Array, sums: Array) -> None:
    """``sums[i, j] = sum_p q[i, p] * w[j, p]`` for int8 ``q [m, k]`` and ``w [n, k]``, in
    int32; the weight rows are split across threads (each read once per input row)."""
    m, k = q.shape
    n = w.shape[0]
    for j in prange(n):
        for i in range(m):
            acc = np.int32(0)
            for p in range(k):
                acc += np.int32(np.int16(q[i, p]) * np.int16(w[j, p]))
            sums[i, j] = acc


@jit_parallel
def scale_sums(sums: Array, scales: Array, w_scales: Array, bias: Array, out: Array) -> None:
    """``out[i, j] = float32(sums[i, j]) * scales[i] * w_scales[j or 0] (+ bias[j])``."""
    m, n = sums.shape
    one_scale = w_scales.shape[0] == 1
    for i in prange(m):
        s = scales[i]
        for j in range(n):
            v = _f32(sums[i, j]) * s * (w_scales[0] if one_scale else w_scales[j])
            out[i, j] = v if bias is None else v + bias[j]
