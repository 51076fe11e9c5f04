"""Compiled kernel of the quantization family: the dynamic int8 Linear (numba), each input row
quantized to int8 and multiplied with the int8 weight rows with int32 sums, then scaled, in one
pass (`burn_ndarray.ops.quantization`).

The products are formed as int16 (|q| <= 127, so a product and the sum of two fit) and summed in
int32, the shape of x86's ``vpmaddwd`` (and AVX-512 VNNI's ``vpdpwssd``), which LLVM emits for
this loop. The float steps are the contract default's, in the same order and in float32
(``scale = max|row| / 127``, 1 for a zero row; ``q = clamp(rint(x / scale), -127, 127)``;
``float32(sum) * scale * weight_scale + bias``), so the result is the default's, bit for bit.
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
    """Each row of the float32 ``x [m, k]`` to int8 ``q`` with its scale in ``scales [m]``."""
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
            v = -_QMAX if v < -_QMAX else (_QMAX if v > _QMAX else v)
            q[i, p] = np.int8(v)


@jit_parallel
def int8_linear(q: Array, scales: Array, w: Array, w_scales: Array, bias: Array, out: Array) -> None:
    """``out[i, j] = float32(sum_p q[i, p] * w[j, p]) * scales[i] * w_scales[j] (+ bias[j])``,
    output columns split across threads (each weight row read once per tile of 4 input rows)."""
    m, k = q.shape
    n = w.shape[0]
    one_scale = w_scales.shape[0] == 1
    for j in prange(n):
        ws = w_scales[0] if one_scale else w_scales[j]
        for i0 in range(0, m, 4):
            i1 = min(i0 + 4, m)
            a0 = np.int32(0)
            a1 = np.int32(0)
            a2 = np.int32(0)
            a3 = np.int32(0)
            if i1 - i0 == 4:
                for p in range(k):
                    wv = np.int16(w[j, p])
                    a0 += np.int32(np.int16(q[i0, p]) * wv)
                    a1 += np.int32(np.int16(q[i0 + 1, p]) * wv)
                    a2 += np.int32(np.int16(q[i0 + 2, p]) * wv)
                    a3 += np.int32(np.int16(q[i0 + 3, p]) * wv)
                sums = (a0, a1, a2, a3)
                for t in range(4):
                    v = _f32(sums[t]) * scales[i0 + t] * ws
                    out[i0 + t, j] = v if bias is None else v + bias[j]
            else:
                for i in range(i0, i1):
                    acc = np.int32(0)
                    for p in range(k):
                        acc += np.int32(np.int16(q[i, p]) * np.int16(w[j, p]))
                    v = _f32(acc) * scales[i] * ws
                    out[i, j] = v if bias is None else v + bias[j]
