"""Compiled 2-D max pooling with indices (numba) on channels-last arrays, one image per chunk of
a ``prange`` (numba's TBB pool when it runs, see `_tbb`; else serial).

The NumPy path of `_pool` makes ~4 passes per kernel tap over the whole output (maximum, compare,
two counts) and its backward one masked multiply per tap; here each window is read once, the
channels innermost (contiguous in ``[N, H, W, C]`` memory, so the loop vectorizes). Same results
as `_pool`: the first maximum of each window in kernel order (a NaN, once met, stays), padding
taps count as -inf and their (out-of-image) flat index ``h * W + w`` is what a window of -inf
reports, as there. The backward pass writes each tap of each window once: the window's gradient
where its index names the tap, else zero (disjoint windows only, as `_pool`'s fast path: no
element gets two, so no sum and no rounding).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

Array = Any


@njit(cache=True, error_model="numpy", nogil=True, parallel=True)
def max_pool2d_nhwc(
    x: Array, values: Array, indices: Array, kernel: Any, stride: Any, padding: Any, dilation: Any
) -> None:
    """`values` and `indices` (``[N, OH, OW, C]``) of `x` (``[N, H, W, C]``)."""
    n_images, height, width, channels = x.shape
    out_h, out_w = values.shape[1], values.shape[2]
    minus_inf = values.dtype.type(-np.inf)
    for n in prange(n_images):
        for oh in range(out_h):
            for ow in range(out_w):
                best = values[n, oh, ow]
                where = indices[n, oh, ow]
                first = True
                for kh in range(kernel[0]):
                    h = oh * stride[0] - padding[0] + kh * dilation[0]
                    for kw in range(kernel[1]):
                        w = ow * stride[1] - padding[1] + kw * dilation[1]
                        flat = h * width + w
                        inside = 0 <= h < height and 0 <= w < width
                        for c in range(channels):
                            v = x[n, h, w, c] if inside else minus_inf
                            b = best[c]
                            if first or v > b or (v != v and b == b):
                                best[c] = v
                                where[c] = flat
                        first = False


@njit(cache=True, error_model="numpy", nogil=True, parallel=True)
def max_pool2d_backward_nhwc(
    grad: Array, output_grad: Array, indices: Array, kernel: Any, stride: Any, padding: Any, dilation: Any
) -> None:
    """Writes each window's gradient (``[N, OH, OW, C]``) into `grad` (``[N, H, W, C]``, zeros)
    at the tap its index names; windows must be disjoint. A tap in the padding is dropped."""
    n_images, height, width, channels = grad.shape
    out_h, out_w = output_grad.shape[1], output_grad.shape[2]
    zero = grad.dtype.type(0)
    for n in prange(n_images):
        for oh in range(out_h):
            top = oh * stride[0] - padding[0]
            for ow in range(out_w):
                left = ow * stride[1] - padding[1]
                g, hit = output_grad[n, oh, ow], indices[n, oh, ow]
                for kh in range(kernel[0]):
                    h = top + kh * dilation[0]
                    for kw in range(kernel[1]):
                        w = left + kw * dilation[1]
                        if 0 <= h < height and 0 <= w < width:
                            target, cell = h * width + w, grad[n, h, w]
                            for c in range(channels):  # each tap of a disjoint window once
                                cell[c] = g[c] if hit[c] == target else zero
