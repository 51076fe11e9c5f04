"""Compiled kernels of the pool family: 2-D max pooling with indices (numba) on channels-last
arrays, and its gradient (`burn_ndarray.ops.pool`): a range of images per call, the images split
between threads by `burn_ndarray.runtime.split.run_ranges` (a ``prange`` on numba's TBB pool when
it runs) as far as the size and burn-ndarray's thread count warrant.

The NumPy path makes ~4 passes per kernel tap over the whole output (maximum, compare, two counts)
and its backward one masked multiply per tap; here each window is read once, the channels
innermost (contiguous in ``[N, H, W, C]`` memory, so the loop vectorizes). Same results as the
NumPy path: the first maximum of each window in kernel order (a NaN, once met, stays), padding
taps count as -inf and their (out-of-image) flat index ``h * W + w`` is what a window of -inf
reports, as there. The backward pass writes each tap of each window once: the window's gradient
where its index names the tap, else zero (disjoint windows only, as the NumPy path's fast path:
no element gets two, so no sum and no rounding).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel
from burn_ndarray.runtime.split import copy_parts, run_ranges

Array = Any


@jit
def max_pool2d_images(
    lo: int, hi: int, x: Array, values: Array, indices: Array,
    kernel_h: int, kernel_w: int, sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """`values` and `indices` (``[N, OH, OW, C]``) of images `lo` to `hi` of `x`
    (``[N, H, W, C]``)."""
    _, height, width, channels = x.shape
    out_h, out_w = values.shape[1], values.shape[2]
    minus_inf = values.dtype.type(-np.inf)
    for n in range(lo, hi):
        for oh in range(out_h):
            for ow in range(out_w):
                best = values[n, oh, ow]
                where = indices[n, oh, ow]
                first = True
                for kh in range(kernel_h):
                    h = oh * sh - ph + kh * dh
                    for kw in range(kernel_w):
                        w = ow * sw - pw + kw * dw
                        flat = h * width + w
                        inside = 0 <= h < height and 0 <= w < width
                        for c in range(channels):
                            v = x[n, h, w, c] if inside else minus_inf
                            b = best[c]
                            if first or v > b or (v != v and b == b):
                                best[c] = v
                                where[c] = flat
                        first = False


@jit
def max_pool2d_backward_images(
    lo: int, hi: int, grad: Array, output_grad: Array, indices: Array,
    kernel_h: int, kernel_w: int, sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Writes each window's gradient (``[N, OH, OW, C]``) of images `lo` to `hi` into `grad`
    (``[N, H, W, C]``, zeros) at the tap its index names; windows must be disjoint. A tap in the
    padding is dropped."""
    _, height, width, channels = grad.shape
    out_h, out_w = output_grad.shape[1], output_grad.shape[2]
    zero = grad.dtype.type(0)
    for n in range(lo, hi):
        for oh in range(out_h):
            top = oh * sh - ph
            for ow in range(out_w):
                left = ow * sw - pw
                g, hit = output_grad[n, oh, ow], indices[n, oh, ow]
                for kh in range(kernel_h):
                    h = top + kh * dh
                    for kw in range(kernel_w):
                        w = left + kw * dw
                        if 0 <= h < height and 0 <= w < width:
                            target, cell = h * width + w, grad[n, h, w]
                            for c in range(channels):  # each tap of a disjoint window once
                                cell[c] = g[c] if hit[c] == target else zero


@jit_parallel
def max_pool2d_parallel(parts: int, x: Array, values: Array, indices: Array, *hyper: Any) -> None:
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        max_pool2d_images(lo, hi, x, values, indices, *hyper)


@jit_parallel
def max_pool2d_backward_parallel(
    parts: int, grad: Array, output_grad: Array, indices: Array, *hyper: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(grad.shape[0], c, parts)
        max_pool2d_backward_images(lo, hi, grad, output_grad, indices, *hyper)


def max_pool2d(x: Array, values: Array, indices: Array, hyper: tuple[Any, ...]) -> None:
    """`max_pool2d_images` over every image of `x`, on the threads its size warrants; `hyper` is
    ``(kernel, stride, padding, dilation)``, pairs of ints."""
    sizes = tuple(int(v) for pair in hyper for v in pair)  # ints: a tuple cannot enter a prange
    n = x.shape[0]
    run_ranges(max_pool2d_images, max_pool2d_parallel, n, copy_parts(x.size), x, values, indices, *sizes)


def max_pool2d_backward(grad: Array, output_grad: Array, indices: Array, hyper: tuple[Any, ...]) -> None:
    """`max_pool2d_backward_images` over every image, on the threads its size warrants."""
    sizes = tuple(int(v) for pair in hyper for v in pair)
    run_ranges(
        max_pool2d_backward_images, max_pool2d_backward_parallel, grad.shape[0], copy_parts(grad.size),
        grad, output_grad, indices, *sizes,
    )  # fmt: skip
