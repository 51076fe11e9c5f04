"""Compiled kernels of the static int8 convolution (`burn_ndarray.ops.quantized_conv`): the
depthwise convolution computed directly on int8 planes with int32 sums. A grouped convolution
with one input channel a group has too short a reduction (``KH * KW`` taps) for im2col and a GEMM
to pay: each output plane is read once from its input plane here.

The sums are exact (|q| <= 127, taps * 127 * 127 far below 2^31), so the result is the float
epilogue ``float32(sum - zero_point * sum(w)) * input_scale * weight_scale + bias`` of the same
integers the im2col path sums, the same values at any thread count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any


@jit
def depthwise_int8_range(
    lo: int, hi: int, q: Array, w: Array, corr: Array, scales: Array, bias: Array, out: Array,
    sh: int, sw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Planes ``p = n * C_out + co`` in ``[lo, hi)`` of ``out [N, C_out, OH, OW]`` (float32) from
    the padded int8 input ``q [N, C_in, Hp, Wp]`` (padding holds the zero point) and the int8
    ``w [C_out, KH, KW]`` (output channel ``co`` reads input channel ``co // (C_out / C_in)``):
    ``(sum q * w - corr[co]) * scales[co] (+ bias[co])``."""
    c_out, kh, kw = w.shape
    mult = c_out // q.shape[1]
    out_h, out_w = out.shape[2], out.shape[3]
    for p in range(lo, hi):
        n, co = p // c_out, p % c_out
        plane = q[n, co // mult]
        s = scales[co]
        for oh in range(out_h):
            for ow in range(out_w):
                acc = np.int32(0)
                for i in range(kh):
                    row = plane[oh * sh + i * dh]
                    for j in range(kw):
                        acc += np.int32(np.int16(row[ow * sw + j * dw]) * np.int16(w[co, i, j]))
                v = np.float32(acc - corr[co]) * s
                out[n, co, oh, ow] = v if bias is None else v + bias[co]


@jit_parallel
def depthwise_int8(
    parts: int, q: Array, w: Array, corr: Array, scales: Array, bias: Array, out: Array,
    sh: int, sw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """`depthwise_int8_range` over every output plane, chunks of planes on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.shape[0] * out.shape[1], c, parts)
        depthwise_int8_range(lo, hi, q, w, corr, scales, bias, out, sh, sw, dh, dw)
