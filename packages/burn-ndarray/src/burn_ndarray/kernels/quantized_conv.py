"""Compiled kernels of the static int8 convolution (`burn_ndarray.ops.quantized_conv`): the input
quantized into a padded int8 (or float32-held) buffer in one pass, the depthwise convolution
computed directly on int8 planes with int32 sums, and the epilogue that takes the zero point out
of the sums and scales them, in one pass.

A grouped convolution with one input channel a group has too short a reduction (``KH * KW``
taps) for im2col and a GEMM to pay: each output row is summed from its input rows here, tap by
tap over a contiguous row of accumulators (what LLVM vectorizes). The integers are held in
float32, as the GEMM path's BLAS product holds them: a sum of at most 1032 products of values in
[-127, 127] stays below 2^24, where float32 holds every integer, so the sums are exact, and float32
lanes multiply-add twice as many values an instruction as int32 ones on AVX2 (an int32 row ran
the 240@28 5x5 layer at 1 ns a product, 4x the float32 row; docs/benchmarks-log.md).

The result is the epilogue ``float32(sum - zero_point * sum(w)) * input_scale * weight_scale +
bias`` of the same integers the im2col path sums, the same values at any thread count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any
_QMAX = np.float32(127.0)


@jit
def quantize_padded_range(
    lo: int, hi: int, x: Array, scale: float, zp: int, out: Array, ph: int, pw: int, nhwc: bool
) -> None:
    """Images `lo` to `hi` of the float32 ``x [N, C, H, W]`` quantized
    (``clamp(rint(x / scale) + zp, -127, 127)``, the contract's formula) into the interior of
    `out`, ``[N, Hp, Wp, C]`` when `nhwc` else ``[N, C, Hp, Wp]`` (int8 or float32), which the
    caller filled with the zero point."""
    _, c, h, w = x.shape
    s = np.float32(scale)
    z = np.float32(zp)
    for n in range(lo, hi):
        for ch in range(c):
            for i in range(h):
                for j in range(w):
                    v = np.rint(x[n, ch, i, j] / s) + z
                    v = -_QMAX if v < -_QMAX else (_QMAX if v > _QMAX else v)
                    if nhwc:
                        out[n, i + ph, j + pw, ch] = v
                    else:
                        out[n, ch, i + ph, j + pw] = v


@jit_parallel
def quantize_padded(
    parts: int, x: Array, scale: float, zp: int, out: Array, ph: int, pw: int, nhwc: bool
) -> None:
    """`quantize_padded_range` over every image, chunks of images on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        quantize_padded_range(lo, hi, x, scale, zp, out, ph, pw, nhwc)


@jit
def epilogue_range(
    lo: int, hi: int, sums: Array, corr: Array, scales: Array, bias: Array, out: Array
) -> None:
    """Rows `lo` to `hi` of ``out [M, O] = float32(int32(sums) - corr) * scales (+ bias)``;
    `sums` int32, or float32 holding integers below 2^24 (exact)."""
    o = sums.shape[1]
    for i in range(lo, hi):
        for j in range(o):
            v = np.float32(np.int32(sums[i, j]) - corr[j]) * scales[j]
            out[i, j] = v if bias is None else v + bias[j]


@jit_parallel
def epilogue(parts: int, sums: Array, corr: Array, scales: Array, bias: Array, out: Array) -> None:
    """`epilogue_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(sums.shape[0], c, parts)
        epilogue_range(lo, hi, sums, corr, scales, bias, out)


@jit
def depthwise_int8_range(
    lo: int, hi: int, q: Array, w: Array, corr: Array, scales: Array, bias: Array, out: Array,
    sh: int, sw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Planes ``p = n * C_out + co`` in ``[lo, hi)`` of ``out [N, C_out, OH, OW]`` (float32) from
    the padded quantized input ``q [N, C_in, Hp, Wp]`` (float32 integers; the padding holds the
    zero point) and the weight ``w [C_out, KH, KW]`` (float32 integers; output channel ``co``
    reads input channel ``co // (C_out / C_in)``): ``(sum q * w - corr[co]) * scales[co]
    (+ bias[co])``, each sum exact for ``KH * KW <= 1032``."""
    c_out, kh, kw = w.shape
    mult = c_out // q.shape[1]
    out_h, out_w = out.shape[2], out.shape[3]
    acc = np.empty(out_w, np.float32)
    for p in range(lo, hi):
        n, co = p // c_out, p % c_out
        plane = q[n, co // mult]
        s = scales[co]
        for oh in range(out_h):
            acc[:] = 0
            for i in range(kh):
                row = plane[oh * sh + i * dh]
                for j in range(kw):
                    wv = w[co, i, j]
                    base = j * dw
                    if sw == 1:  # contiguous taps: whole vectors
                        taps = row[base : base + out_w]
                        for ow in range(out_w):
                            acc[ow] += taps[ow] * wv
                    else:
                        for ow in range(out_w):
                            acc[ow] += row[base + ow * sw] * wv
            for ow in range(out_w):
                v = np.float32(np.int32(acc[ow]) - corr[co]) * s
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
