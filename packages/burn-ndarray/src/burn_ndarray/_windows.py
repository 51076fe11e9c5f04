"""Sliding windows and their adjoint (col2im) for convolution and pooling.

A window view is an `as_strided` view of shape ``[N, C, KH, KW, OH, OW]`` (no copy); convolutions
reshape it once (the im2col copy) and contract it in one matmul. `col2im` is the adjoint: it sums a
``[N, C, KH, KW, OH, OW]`` array back onto the input plane with one strided slice-add per kernel
tap (``KH * KW`` whole-batch NumPy ops; no loop over pixels or batch items).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from burn_ndarray._dtypes import F32, LOW

Pair = tuple[int, int]


def work_dtype(*arrays: Any) -> np.dtype:
    """The dtype to compute in: the promoted one, or float32 for float16/bfloat16."""
    dtype = np.result_type(*(a.dtype for a in arrays))
    return F32 if dtype in LOW else dtype


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def pad(x: np.ndarray, padding: Pair, value: float = 0.0) -> np.ndarray:
    """`x` ``[N, C, H, W]`` with `padding` rows/cols of `value` on each side (x itself if none)."""
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + 2 * ph, w + 2 * pw), value, dtype=x.dtype)
    out[:, :, ph : ph + h, pw : pw + w] = x
    return out


def windows(xp: np.ndarray, kernel: Pair, out: Pair, stride: Pair, dilation: Pair) -> np.ndarray:
    """Read-only view ``[N, C, KH, KW, OH, OW]`` of the windows of the (padded) input `xp`."""
    sn, sc, sh, sw = xp.strides
    n, c = xp.shape[:2]
    return as_strided(  # type: ignore[no-any-return]
        xp,
        shape=(n, c, kernel[0], kernel[1], out[0], out[1]),
        strides=(sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
        writeable=False,
    )


def col2im(cols: np.ndarray, size: Pair, stride: Pair, dilation: Pair) -> np.ndarray:
    """Sum `cols` ``[N, C, KH, KW, OH, OW]`` onto a zero plane ``[N, C, *size]`` (adjoint of `windows`)."""
    n, c, kh, kw, oh, ow = cols.shape
    sh, sw = stride
    out = np.zeros((n, c) + tuple(size), dtype=cols.dtype)
    for i in range(kh):
        h0 = i * dilation[0]
        rows = slice(h0, h0 + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            w0 = j * dilation[1]
            out[:, :, rows, w0 : w0 + sw * (ow - 1) + 1 : sw] += cols[:, :, i, j]
    return out
