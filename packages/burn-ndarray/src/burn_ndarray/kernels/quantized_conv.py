"""Compiled passes of the static int8 convolution (`burn_ndarray.ops.quantization`): the input
quantized into a zero-point-padded (or centred) buffer in one pass, and the epilogue that takes
the zero point out of the integer sums and scales them, in one pass. The sums themselves come from
the int8 GEMM entry (`burn_ndarray.ops.quantization.int8_sums`) or, for grouped and depthwise
layers, from the direct grouped kernels (`burn_ndarray.kernels.grouped`) run on the integers held
in float32 (exact: see `burn_ndarray.ops.quantization`).
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
    lo: int, hi: int, x: Array, scale: float, zp: int, shift: int, out: Array, ph: int, pw: int, nhwc: bool
) -> None:
    """Images `lo` to `hi` of the float32 ``x [N, C, H, W]`` quantized
    (``clamp(rint(x / scale) + zp, -127, 127)``, the contract's formula) minus `shift` (0, or
    `zp` for centred values) into the interior of `out`, ``[N, Hp, Wp, C]`` when `nhwc` else
    ``[N, C, Hp, Wp]`` (int8 or float32), whose padding the caller filled."""
    _, c, h, w = x.shape
    s = np.float32(scale)
    z = np.float32(zp)
    d = np.float32(shift)
    for n in range(lo, hi):
        for ch in range(c):
            for i in range(h):
                for j in range(w):
                    v = np.rint(x[n, ch, i, j] / s) + z
                    v = (-_QMAX if v < -_QMAX else (_QMAX if v > _QMAX else v)) - d
                    if nhwc:
                        out[n, i + ph, j + pw, ch] = v
                    else:
                        out[n, ch, i + ph, j + pw] = v


@jit_parallel
def quantize_padded(
    parts: int, x: Array, scale: float, zp: int, shift: int, out: Array, ph: int, pw: int, nhwc: bool
) -> None:
    """`quantize_padded_range` over every image, chunks of images on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        quantize_padded_range(lo, hi, x, scale, zp, shift, out, ph, pw, nhwc)


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
