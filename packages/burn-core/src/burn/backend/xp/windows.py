"""Sliding windows over ``[N, C, H, W]`` arrays and their adjoint (col2im), for convolution and pooling.

A window view is a strided view ``[N, C, KH, KW, OH, OW]`` of the padded input (no copy); `col2im`
is its adjoint: it sums a ``[N, C, KH, KW, OH, OW]`` array back onto the input plane with one strided
slice-add per kernel tap (``KH * KW`` whole-batch ops; no loop over pixels or batch items). `taps`
gives the same windows one kernel tap at a time (``KH * KW`` strided ``[N, C, OH, OW]`` views),
which pooling can reduce over without copying the windows.

Arrays stay ``[N, C, H, W]`` logically, but their memory may be channels-last (NHWC) when a
convolution produced them: new arrays derived from `x` are allocated in `x`'s layout (`empty_as`),
so that elementwise ops between them and views of `x` walk memory in one order.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from burn.backend.xp.dtypes import work

Array = Any
Pair = tuple[int, int]


def work_dtype(*arrays: Array) -> np.dtype:
    """The dtype to compute in: the promoted one, or float32 for float16/bfloat16 (no fast BLAS or
    accurate sums for them). Any namespace: its arrays carry NumPy dtypes."""
    return work(np.result_type(*(a.dtype for a in arrays)))


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """Output size of a strided window op along one axis (floor mode; 0 or less when empty)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def channels_last(x: Array) -> bool:
    """Whether `x` ``[N, C, H, W]`` keeps its channels innermost in memory (NHWC)."""
    return x.shape[1] > 1 and x.strides[1] < x.strides[3]  # type: ignore[no-any-return]


def empty_as(
    xp: ModuleType, x: Array, shape: tuple[int, ...], dtype: Any = None, zero: bool = False
) -> Array:
    """Uninitialized (or `zero`) ``[N, C, H', W']`` array of `shape` laid out in memory like `x`
    (NCHW or NHWC)."""
    dtype = x.dtype if dtype is None else dtype
    new = xp.zeros if zero else xp.empty  # NumPy's zeros: fresh zero pages from calloc, no extra pass
    if channels_last(x):
        n, c, h, w = shape
        return new((n, h, w, c), dtype=dtype).transpose(0, 3, 1, 2)
    return new(shape, dtype=dtype)


def pad(xp: ModuleType, x: Array, padding: Pair, value: float = 0.0) -> Array:
    """`x` ``[N, C, H, W]`` with `padding` rows/cols of `value` on each side (x itself if none)."""
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    n, c, h, w = x.shape
    out = empty_as(xp, x, (n, c, h + 2 * ph, w + 2 * pw))
    out[...] = value
    out[:, :, ph : ph + h, pw : pw + w] = x
    return out


def taps(x: Array, kernel: Pair, out: Pair, stride: Pair, dilation: Pair) -> Iterator[Array]:
    """The windows of the padded `x` one kernel tap at a time, in kernel (row-major) order: for tap
    (i, j) the strided view ``[N, C, OH, OW]`` of every window's element (i, j). Writable when `x` is."""
    (sh, sw), (oh, ow) = stride, out
    for i in range(kernel[0]):
        h0 = i * dilation[0]
        rows = slice(h0, h0 + sh * (oh - 1) + 1, sh)
        for j in range(kernel[1]):
            w0 = j * dilation[1]
            yield x[:, :, rows, w0 : w0 + sw * (ow - 1) + 1 : sw]


def strided(xp: ModuleType, x: Array, shape: tuple[int, ...], strides: tuple[int, ...]) -> Array:
    """A view of `x` with `shape` and byte `strides`, never to be written (windows overlap)."""
    if xp is np:  # only NumPy's as_strided can mark the view read-only
        return as_strided(x, shape=shape, strides=strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def windows(xp: ModuleType, x: Array, kernel: Pair, out: Pair, stride: Pair, dilation: Pair) -> Array:
    """Read-only view ``[N, C, KH, KW, OH, OW]`` of the windows of the (padded) input `x`."""
    sn, sc, sh, sw = x.strides
    n, c = x.shape[:2]
    shape = (n, c, kernel[0], kernel[1], out[0], out[1])
    return strided(xp, x, shape, (sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]))


def col2im(xp: ModuleType, cols: Array, size: Pair, stride: Pair, dilation: Pair) -> Array:
    """Sum `cols` ``[N, C, KH, KW, OH, OW]`` onto a zero plane ``[N, C, *size]`` (adjoint of `windows`)."""
    n, c, kh, kw, oh, ow = cols.shape
    sh, sw = stride
    out = xp.zeros((n, c, *size), dtype=cols.dtype)
    for i in range(kh):
        h0 = i * dilation[0]
        rows = slice(h0, h0 + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            w0 = j * dilation[1]
            out[:, :, rows, w0 : w0 + sw * (ow - 1) + 1 : sw] += cols[:, :, i, j]
    return out
