"""Sliding windows and their adjoint (col2im) for convolution and pooling.

A window view is an `as_strided` view of shape ``[N, C, KH, KW, OH, OW]`` (no copy); `col2im` is
its adjoint: it sums a ``[N, C, KH, KW, OH, OW]`` array back onto the input plane with one strided
slice-add per kernel tap (``KH * KW`` whole-batch NumPy ops; no loop over pixels or batch items).
`taps` gives the same windows one kernel tap at a time (``KH * KW`` strided ``[N, C, OH, OW]``
views), which is what pooling reduces over without copying the windows.

Arrays stay ``[N, C, H, W]`` logically, but their memory may be channels-last (NHWC) when a
convolution produced them: new arrays derived from `x` are allocated in `x`'s layout
(`empty_as`), so that elementwise ops between them and views of `x` walk memory in one order.
"""

from __future__ import annotations

from collections.abc import Iterator
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


def channels_last(x: np.ndarray) -> bool:
    """Whether `x` ``[N, C, H, W]`` keeps its channels innermost in memory (NHWC)."""
    return x.shape[1] > 1 and x.strides[1] < x.strides[3]


def empty_as(x: np.ndarray, shape: tuple[int, ...], dtype: Any = None, zero: bool = False) -> np.ndarray:
    """Uninitialized (or `zero`) ``[N, C, H', W']`` array of `shape` laid out in memory like `x`
    (NCHW or NHWC)."""
    dtype = x.dtype if dtype is None else dtype
    new = np.zeros if zero else np.empty  # zeros: fresh zero pages from calloc, no extra pass
    if channels_last(x):
        n, c, h, w = shape
        return new((n, h, w, c), dtype=dtype).transpose(0, 3, 1, 2)  # type: ignore[no-any-return]
    return new(shape, dtype=dtype)  # type: ignore[no-any-return]


def pad(x: np.ndarray, padding: Pair, value: float = 0.0) -> np.ndarray:
    """`x` ``[N, C, H, W]`` with `padding` rows/cols of `value` on each side (x itself if none)."""
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    n, c, h, w = x.shape
    out = empty_as(x, (n, c, h + 2 * ph, w + 2 * pw))
    out[...] = value
    out[:, :, ph : ph + h, pw : pw + w] = x
    return out


def taps(xp: np.ndarray, kernel: Pair, out: Pair, stride: Pair, dilation: Pair) -> Iterator[np.ndarray]:
    """The windows of `xp` one kernel tap at a time, in kernel (row-major) order: for tap (i, j) the
    strided view ``[N, C, OH, OW]`` of every window's element (i, j). Writable when `xp` is."""
    (sh, sw), (oh, ow) = stride, out
    for i in range(kernel[0]):
        h0 = i * dilation[0]
        rows = slice(h0, h0 + sh * (oh - 1) + 1, sh)
        for j in range(kernel[1]):
            w0 = j * dilation[1]
            yield xp[:, :, rows, w0 : w0 + sw * (ow - 1) + 1 : sw]


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
