"""Compiled kernels of the conv family: the im2col / col2im copies and bias add of the NHWC
convolutions (`burn_ndarray.ops.conv`), numba: a range of images (or rows) per call, split between
threads by `burn_ndarray.runtime.split.run_ranges` (a ``prange`` on numba's TBB pool when it runs)
as far as the size and thread count warrant.

NumPy makes both with strided whole-batch copies on one thread: the im2col copy of a window view,
and col2im as one strided add per kernel tap. These write the same values in the same order
(col2im adds the taps to a zero plane in kernel order, as the NumPy path does), so the results
are NumPy's bits. im2col here builds the channels-innermost layout only (``[N * OH * OW, KH * KW
* C]``, one group), the one the NumPy path picks unless a window row is longer than C.
"""

from __future__ import annotations

from typing import Any

from numba import prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel
from burn_ndarray.runtime.split import copy_parts, run_ranges

Array = Any


@jit
def im2col_images(
    lo: int, hi: int, padded: Array, cols: Array, out_w: int,
    kernel_h: int, kernel_w: int, sh: int, sw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Rows ``(n * OH + oh) * OW + ow`` of `cols` (``[N * OH * OW, KH * KW * C]``: taps, then
    channels) for images `lo` to `hi` of `padded` (``[N, H, W, C]``)."""
    channels = padded.shape[3]
    per_image = cols.shape[0] // padded.shape[0]
    for n in range(lo, hi):
        for r in range(per_image):
            oh, ow = r // out_w, r % out_w
            row = cols[n * per_image + r]
            for i in range(kernel_h):
                h = oh * sh + i * dh
                for j in range(kernel_w):
                    src = padded[n, h, ow * sw + j * dw]
                    start = (i * kernel_w + j) * channels
                    for c in range(channels):
                        row[start + c] = src[c]


@jit
def col2im_images(lo: int, hi: int, cols: Array, plane: Array, sh: int, sw: int, dh: int, dw: int) -> None:
    """``plane[n]`` (``[H, W, C]``, zeroed here) = the sum of every tap's slab of `cols`
    (``[KH, KW, N, OH, OW, C]``) at its strided place, taps in kernel order, for images `lo` to `hi`."""
    kernel_h, kernel_w, _, out_h, out_w, channels = cols.shape
    for n in range(lo, hi):
        plane[n, :, :, :] = 0
        for i in range(kernel_h):
            for j in range(kernel_w):
                for oh in range(out_h):
                    dst_row = plane[n, oh * sh + i * dh]
                    for ow in range(out_w):
                        dst = dst_row[ow * sw + j * dw]
                        src = cols[i, j, n, oh, ow]
                        for c in range(channels):
                            dst[c] += src[c]


@jit_parallel
def im2col_parallel(parts: int, padded: Array, cols: Array, *sizes: int) -> None:
    for c in prange(parts):
        lo, hi = bounds(padded.shape[0], c, parts)
        im2col_images(lo, hi, padded, cols, *sizes)


@jit_parallel
def col2im_parallel(parts: int, cols: Array, plane: Array, *sizes: int) -> None:
    for c in prange(parts):
        lo, hi = bounds(plane.shape[0], c, parts)
        col2im_images(lo, hi, cols, plane, *sizes)


def im2col(padded: Array, cols: Array, out_w: int, sizes: tuple[int, ...]) -> None:
    """`im2col_images` over every image; `sizes` is ``(KH, KW, SH, SW, DH, DW)``."""
    n = padded.shape[0]
    run_ranges(im2col_images, im2col_parallel, n, copy_parts(cols.size), padded, cols, out_w, *sizes)


def col2im(cols: Array, plane: Array, sizes: tuple[int, ...]) -> None:
    """`col2im_images` over every image; `sizes` is ``(SH, SW, DH, DW)``."""
    run_ranges(col2im_images, col2im_parallel, plane.shape[0], copy_parts(cols.size), cols, plane, *sizes)


@jit
def add_bias_rows(lo: int, hi: int, out: Array, bias: Array) -> None:
    """``out[r] += bias`` for rows `lo` to `hi` of `out` (``[rows, O]``), in place."""
    for r in range(lo, hi):
        row = out[r]
        for c in range(row.shape[0]):
            row[c] += bias[c]


@jit_parallel
def add_bias_parallel(parts: int, out: Array, bias: Array) -> None:
    for c in prange(parts):
        lo, hi = bounds(out.shape[0], c, parts)
        add_bias_rows(lo, hi, out, bias)


def add_bias(out: Array, bias: Array) -> None:
    """`add_bias_rows` over every row of `out`, on the threads its size warrants."""
    run_ranges(add_bias_rows, add_bias_parallel, out.shape[0], copy_parts(out.size), out, bias)
