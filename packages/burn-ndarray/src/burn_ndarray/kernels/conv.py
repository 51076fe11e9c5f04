"""Compiled kernels of the conv family: the im2col / col2im copies and bias add of the NHWC
convolutions (`burn_ndarray.ops.conv`), numba: a range of images (or rows) per call, split between
threads by `burn_ndarray.runtime.split.run_ranges` (a ``prange`` on numba's TBB pool when it runs)
as far as the size and thread count warrant.

NumPy makes both with strided whole-batch copies on one thread: the im2col copy of a window view of
the padded input, and col2im as one strided add per kernel tap. The compiled im2col reads the
unpadded input in place instead (any strides, so a network's NCHW input needs no channels-last copy;
taps in the padding written as zeros) and splits output rows, not images, between threads. These
write the same values in the same order (col2im adds the taps to a zero plane in kernel order, as
the NumPy path does), so the results are NumPy's bits. im2col here builds the channels-innermost
layout only (``[N * OH * OW, KH * KW * C]``, one group), the one the NumPy path picks unless a
window row is longer than C.

The activation epilogue of ``conv2d_fused`` (`activate`) runs over a block of output values the
caller has just written (a row of the GEMM result, a direct kernel's output position or row),
one loop per activation so that each is a plain loop LLVM vectorizes; the codes are the indices
of `burn.backend.ops.conv.CONV_ACTIVATIONS`.
"""

from __future__ import annotations

import math
from typing import Any

from numba import prange, types
from numba.core.extending import overload

from burn_ndarray.kernels.activation import _cdf, _sigmoid
from burn_ndarray.kernels.jit import bounds, jit, jit_parallel
from burn_ndarray.runtime.split import copy_parts, run_ranges

Array = Any


@jit
def im2col_rows(
    lo: int, hi: int, x: Array, cols: Array, out_w: int,
    kernel_h: int, kernel_w: int, sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Rows ``r * OW + ow`` of `cols` (``[N * OH * OW, KH * KW * C]``: taps, then channels) for
    output rows ``r = n * OH + oh`` in ``[lo, hi)``, read from the unpadded `x` (``[N, H, W, C]``,
    any strides: an NCHW array's channels-last view is read in place), zeros where a tap falls in
    the padding."""
    _, height, width, channels = x.shape
    out_h = cols.shape[0] // (x.shape[0] * out_w)
    for r in range(lo, hi):
        n, oh = r // out_h, r % out_h
        for ow in range(out_w):
            row = cols[r * out_w + ow]
            for i in range(kernel_h):
                h = oh * sh - ph + i * dh
                for j in range(kernel_w):
                    w = ow * sw - pw + j * dw
                    start = (i * kernel_w + j) * channels
                    if h < 0 or h >= height or w < 0 or w >= width:
                        for c in range(channels):
                            row[start + c] = 0
                    else:
                        src = x[n, h, w]
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
def im2col_parallel(parts: int, x: Array, cols: Array, out_w: int, *sizes: int) -> None:
    rows = cols.shape[0] // out_w
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        im2col_rows(lo, hi, x, cols, out_w, *sizes)


@jit_parallel
def col2im_parallel(parts: int, cols: Array, plane: Array, *sizes: int) -> None:
    for c in prange(parts):
        lo, hi = bounds(plane.shape[0], c, parts)
        col2im_images(lo, hi, cols, plane, *sizes)


def im2col(x: Array, cols: Array, out_w: int, sizes: tuple[int, ...]) -> None:
    """`im2col_rows` over every output row, split by rows (not images, so that one image gets every
    thread); `sizes` is ``(KH, KW, SH, SW, PH, PW, DH, DW)``."""
    rows = cols.shape[0] // out_w
    run_ranges(im2col_rows, im2col_parallel, rows, copy_parts(cols.size), x, cols, out_w, *sizes)


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


# Codes of the activations (their index in `burn.backend.ops.conv.CONV_ACTIVATIONS`).
NONE, RELU, RELU6, HARDSWISH, HARDSIGMOID, SILU, SIGMOID, GELU = range(8)


def activate(row: Array, act: int) -> None:
    """``row[:] = activation(row)`` in place for the activation code `act` (PyTorch's
    definitions; GELU the erf form), from compiled code only: float32 rows take the activation
    kernels' exp and erf, computed in registers so the loop vectorizes and the values are those
    of burn-ndarray's own activation ops (`burn_ndarray.kernels.activation`); float64 rows libm's."""
    raise TypeError("activate runs inside compiled kernels only")


def _activate32(row: Array, act: int) -> None:
    three, six, zero = row.dtype.type(3), row.dtype.type(6), row.dtype.type(0)
    if act == RELU:
        for c in range(row.shape[0]):
            v = row[c]
            row[c] = v if v > zero or v != v else zero
    elif act == RELU6:
        for c in range(row.shape[0]):
            v = row[c]
            v = v if v > zero or v != v else zero
            row[c] = v if v < six or v != v else six
    elif act == HARDSWISH:
        for c in range(row.shape[0]):
            v = row[c]
            t = v + three
            t = t if t > zero or t != t else zero
            t = t if t < six or t != t else six
            row[c] = (t / six) * v
    elif act == HARDSIGMOID:
        for c in range(row.shape[0]):
            t = row[c] + three
            t = t if t > zero or t != t else zero
            t = t if t < six or t != t else six
            row[c] = t / six
    elif act == SILU:
        for c in range(row.shape[0]):
            v = row[c]
            row[c] = _sigmoid(v) * v
    elif act == SIGMOID:
        for c in range(row.shape[0]):
            row[c] = _sigmoid(row[c])
    elif act == GELU:
        for c in range(row.shape[0]):
            v = row[c]
            row[c] = _cdf(v) * v


def _activate_wide(row: Array, act: int) -> None:
    if act == RELU:
        for c in range(row.shape[0]):
            row[c] = max(row[c], 0.0)
    elif act == RELU6:
        for c in range(row.shape[0]):
            row[c] = min(max(row[c], 0.0), 6.0)
    elif act == HARDSWISH:
        for c in range(row.shape[0]):
            v = row[c]
            row[c] = min(max(v + 3.0, 0.0), 6.0) / 6.0 * v
    elif act == HARDSIGMOID:
        for c in range(row.shape[0]):
            row[c] = min(max(row[c] + 3.0, 0.0), 6.0) / 6.0
    elif act == SILU:
        for c in range(row.shape[0]):
            v = row[c]
            row[c] = v / (1.0 + math.exp(-v))
    elif act == SIGMOID:
        for c in range(row.shape[0]):
            row[c] = 1.0 / (1.0 + math.exp(-row[c]))
    elif act == GELU:
        for c in range(row.shape[0]):
            v = row[c]
            row[c] = 0.5 * v * (1.0 + math.erf(v * 0.7071067811865476))


@overload(activate, jit_options={"error_model": "numpy"})
def _activate_typed(row: Array, act: int) -> Any:  # numba wants the implementations' parameters
    return _activate32 if row.dtype == types.float32 else _activate_wide


# Elements of the output the epilogue finishes at a time: the rows' bias adds, then the
# activation over the block as one flat loop (a row of 16 channels alone is too short a loop for
# the call and the vector remainders), while the block (16 KiB of float32) is in L1.
EPILOGUE_BLOCK = 4096


@jit
def epilogue_rows(lo: int, hi: int, out: Array, bias: Array | None, act: int) -> None:
    """Rows `lo` to `hi` of `out` (``[rows, O]``, C-contiguous): ``out[r] = activation(out[r] +
    bias)`` in place, a block of rows at a time."""
    width = out.shape[1]
    step = max(1, EPILOGUE_BLOCK // max(width, 1))
    flat = out.reshape(out.shape[0] * width)
    for start in range(lo, hi, step):
        stop = min(start + step, hi)
        if bias is not None:
            for r in range(start, stop):
                row = out[r]
                for c in range(width):
                    row[c] += bias[c]
        activate(flat[start * width : stop * width], act)


@jit_parallel
def epilogue_parallel(parts: int, out: Array, bias: Array | None, act: int) -> None:
    for c in prange(parts):
        lo, hi = bounds(out.shape[0], c, parts)
        epilogue_rows(lo, hi, out, bias, act)


def epilogue(out: Array, bias: Array | None, act: int) -> None:
    """`epilogue_rows` over every row of `out`, on the threads its size warrants."""
    run_ranges(epilogue_rows, epilogue_parallel, out.shape[0], copy_parts(out.size), out, bias, act)
