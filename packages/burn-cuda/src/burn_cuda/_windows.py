"""Sliding windows and their adjoint (col2im) for convolution and pooling.

A window view is a `cupy.lib.stride_tricks.as_strided` view ``[N, C, KH, KW, OH, OW]`` of the padded
input (no copy); convolutions copy it once into columns (im2col) and contract them in one cuBLAS
GEMM. `col2im` sums a ``[N, C, KH, KW, OH, OW]`` array back onto the plane with one strided add
per kernel tap (``KH * KW`` launches, none per pixel, channel or batch item).
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np
from cupy.lib.stride_tricks import as_strided

from burn_cuda._dtypes import work

Array = Any
Pair = tuple[int, int]


def work_dtype(*arrays: Array) -> np.dtype:
    """The dtype to compute in: the promoted one, float32 for float16."""
    return work(cp.result_type(*arrays))


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def pad(x: Array, padding: Pair, value: float = 0.0) -> Array:
    """`x` ``[N, C, H, W]`` with `padding` rows/cols of `value` on each side (x itself if none)."""
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    n, c, h, w = x.shape
    out = cp.full((n, c, h + 2 * ph, w + 2 * pw), value, dtype=x.dtype)
    out[:, :, ph : ph + h, pw : pw + w] = x
    return out


def windows(xp: Array, kernel: Pair, out: Pair, stride: Pair, dilation: Pair) -> Array:
    """View ``[N, C, KH, KW, OH, OW]`` of the windows of the (padded) input `xp` (never written)."""
    sn, sc, sh, sw = xp.strides
    n, c = xp.shape[:2]
    return as_strided(
        xp,
        shape=(n, c, kernel[0], kernel[1], out[0], out[1]),
        strides=(sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
    )


def col2im(cols: Array, size: Pair, stride: Pair, dilation: Pair) -> Array:
    """Sum `cols` ``[N, C, KH, KW, OH, OW]`` onto a zero plane ``[N, C, *size]`` (adjoint of `windows`)."""
    n, c, kh, kw, oh, ow = cols.shape
    sh, sw = stride
    out = cp.zeros((n, c, *size), dtype=cols.dtype)
    for i in range(kh):
        h0 = i * dilation[0]
        rows = slice(h0, h0 + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            w0 = j * dilation[1]
            out[:, :, rows, w0 : w0 + sw * (ow - 1) + 1 : sw] += cols[:, :, i, j]
    return out
