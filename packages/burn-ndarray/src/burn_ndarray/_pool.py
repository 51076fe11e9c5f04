"""NumPy's fast paths of 2-D max pooling; the other pooling ops are the shared ones
(`burn.backend.xp.pool`), which these fall back to.

Max pooling keeps a running (first) maximum over the kernel's tap views, with ``out=`` passes: no
copy of the windows, no reduction over strided axes (slow in NumPy), and the result keeps the
input's memory layout. Its indices count, per window, the leading taps that differ from the
maximum; its gradient is one masked copy per tap when windows are disjoint (the usual stride =
kernel). The shared argmax and bincount versions stay the general paths (NaN inputs, overlapping
windows) and the references.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from burn.backend.xp import pool as _xpool
from burn.backend.xp.pool import out_shape, tap_offsets, window_origins
from burn_ndarray import _parallel
from burn_ndarray._windows import Pair, empty_as, pad, taps

Array = Any

max_pool2d_with_indices_argmax = partial(_xpool.max_pool2d_with_indices, np)
max_pool2d_backward_scatter = partial(_xpool.max_pool2d_backward, np)


def max_pool2d(x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
    x = np.asarray(x)
    shape = out_shape(x, kernel_size, stride, padding, dilation)
    views = taps(pad(x, padding, -np.inf), kernel_size, shape[2:], stride, dilation)
    values = empty_as(x, shape)
    np.copyto(values, next(views))
    for tap in views:
        np.maximum(values, tap, out=values)
    return values


# Channels-last float inputs of at least this many elements pool in the compiled kernels
# (`_pool_kernels`): below, the NumPy passes, and small models never load numba.
COMPILED_MIN_SIZE = 1 << 15


def _compiled(x: Array) -> Any:
    """`_pool_kernels` when `x` is a large channels-last float32/float64 array and numba loads."""
    if x.size < COMPILED_MIN_SIZE or x.dtype not in (np.float32, np.float64) or not _channels_last_dense(x):
        return None
    if _parallel.kernels() is None:  # numba missing
        return None
    from burn_ndarray import _pool_kernels

    return _pool_kernels


def _channels_last_dense(x: Array) -> bool:
    """Whether ``[N, C, H, W]`` `x` is a view of a C-contiguous ``[N, H, W, C]`` array."""
    return x.ndim == 4 and bool(x.transpose(0, 2, 3, 1).flags.c_contiguous)


def max_pool2d_with_indices(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, index_dtype: np.dtype
) -> tuple[Array, Array]:
    """Values and flat ``h * W + w`` indices of the first maximum of each window in kernel order
    (the first NaN where a window holds one), as PyTorch."""
    x = np.asarray(x)
    compiled = _compiled(x)
    if compiled is not None:
        shape = out_shape(x, kernel, stride, padding, dilation)
        n, c, oh, ow = shape
        values, indices = np.empty((n, oh, ow, c), x.dtype), np.empty((n, oh, ow, c), index_dtype)
        hyper = (tuple(kernel), tuple(stride), tuple(padding), tuple(dilation))
        compiled.max_pool2d(x.transpose(0, 2, 3, 1), values, indices, hyper)
        return values.transpose(0, 3, 1, 2), indices.transpose(0, 3, 1, 2)
    if x.size == 0 or np.isnan(x.max()):
        return max_pool2d_with_indices_argmax(x, kernel, stride, padding, dilation, index_dtype)
    shape = out_shape(x, kernel, stride, padding, dilation)
    views = list(taps(pad(x, padding, -np.inf), kernel, shape[2:], stride, dilation))
    values = empty_as(x, shape)
    np.copyto(values, views[0])
    for tap in views[1:]:
        np.maximum(tap, values, out=values)
    # The first tap equal to the maximum (ties keep the earliest, as argmax) is the count of
    # leading taps that differ from it. Boolean and small-int passes only: a masked copy per tap
    # would branch on random data and cost ten times more.
    count_dtype = np.uint8 if len(views) < 256 else np.intp
    count, rows = empty_as(x, shape, count_dtype), empty_as(x, shape, count_dtype)
    count.fill(0)
    rows.fill(0)
    before, differs = empty_as(x, shape, bool), empty_as(x, shape, bool)
    before.fill(True)
    for t, tap in enumerate(views[:-1]):
        np.not_equal(tap, values, out=differs)
        before &= differs
        count += before
        if (t + 1) % kernel[1] == 0:
            rows += before  # every tap of this kernel row differs: the first maximum is below
    return values, _indices(rows, count, x.shape[3], kernel, stride, padding, dilation, index_dtype)


def _indices(
    rows: np.ndarray,
    count: np.ndarray,
    width: int,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    dtype: np.dtype,
) -> np.ndarray:
    """Flat input index ``h * W + w`` of the kernel tap (`rows`, `count - rows * KW`) of each window.

    Arithmetic on small ints rather than a table lookup or a divmod: both cost more than the
    rest of the pooling."""
    index = rows.astype(dtype)
    index *= dilation[0] * width
    index += window_origins(width, count.shape[2:], tuple(stride), tuple(padding), np.dtype(dtype))
    if kernel[1] > 1:
        rows *= kernel[1]
        count -= rows  # now the tap's column in the kernel
        index += count if dilation[1] == 1 else count.astype(dtype) * dilation[1]
    return index


def _disjoint(kernel: Pair, stride: Pair, dilation: Pair) -> bool:
    """Whether no input element lies in two windows (the stride covers the dilated kernel)."""
    return all(s >= (k - 1) * d + 1 for k, s, d in zip(kernel, stride, dilation, strict=True))


def max_pool2d_backward(
    x: Array, output_grad: Array, indices: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> Array:
    offsets = tap_offsets(x.shape[3], tuple(kernel), tuple(dilation))
    if not _disjoint(kernel, stride, dilation) or len(set(offsets)) < len(offsets):
        return max_pool2d_backward_scatter(x, output_grad, indices)
    compiled = _compiled(x)
    if compiled is not None and output_grad.dtype == x.dtype:
        n, c, h, w = x.shape
        grad = np.zeros((n, h, w, c), x.dtype)
        hyper = (tuple(kernel), tuple(stride), tuple(padding), tuple(dilation))
        g, i = (np.ascontiguousarray(a.transpose(0, 2, 3, 1)) for a in (output_grad, indices))
        compiled.max_pool2d_backward(grad, g, i, hyper)
        return grad.transpose(0, 3, 1, 2)
    # Disjoint windows: every input element receives the gradient of at most one window, so no
    # sum is needed: per tap, the window's gradient where its index names that tap, else 0.
    n, c, h, w = x.shape
    ph, pw = padding
    grad = empty_as(x, (n, c, h + 2 * ph, w + 2 * pw), zero=True)
    # Everything in x's memory layout (the gradient arrives in whatever layout the next op
    # left), so that each pass below walks the tap views and its operands in one order.
    shape, out = output_grad.shape, output_grad.shape[2:]
    g = empty_as(x, shape)
    np.copyto(g, output_grad, casting="unsafe")
    relative, hit = empty_as(x, shape, indices.dtype), empty_as(x, shape, bool)
    np.subtract(indices, window_origins(w, out, tuple(stride), tuple(padding), indices.dtype), out=relative)
    # `g * hit` is branch-free (a masked copy or `where` costs three times more on random
    # masks) but spreads inf/NaN * 0 = NaN: non-finite gradients take `where`.
    finite = bool(np.isfinite(g.sum()))  # an overflowing sum only takes the exact `where` path
    for tap, offset in zip(taps(grad, kernel, out, stride, dilation), offsets, strict=True):
        np.equal(relative, offset, out=hit)
        if finite:
            np.multiply(g, hit, out=tap)
        else:
            tap[...] = np.where(hit, g, 0)
    return grad[:, :, ph : ph + h, pw : pw + w]
