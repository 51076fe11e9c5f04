"""Max, average and adaptive average pooling (2-D; 1-D goes through 2-D with a height of 1).

Max pooling keeps a running (first) maximum over the kernel's tap views, which copies no window
and keeps the input's memory layout; its gradient is one masked copy per tap when windows are
disjoint (the usual stride = kernel), else one float64 `np.bincount`. The argmax and bincount
versions are kept as the general paths (NaN inputs, overlapping windows) and as references.
Average pooling reduces a window view (no copy) over its kernel axes; its gradient goes through
`col2im`. Adaptive pooling is separable: ``P_h @ x @ P_w^T`` with
averaging matrices built from PyTorch's bins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray._windows import Pair, col2im, empty_as, out_size, pad, taps, windows, work_dtype

Array = Any


def _view(x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, fill: float) -> np.ndarray:
    """Window view ``[N, C, OH, OW, KH, KW]`` of `x` padded with `fill`."""
    n, c, h, w = x.shape
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    win = windows(pad(x, padding, fill), kernel, (oh, ow), stride, dilation)
    return win.transpose(0, 1, 4, 5, 2, 3)


def _out_shape(
    x: np.ndarray, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> tuple[int, int, int, int]:
    n, c, h, w = x.shape
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    return (n, c, oh, ow)


def _tap_offsets(width: int, kernel: Pair, dilation: Pair) -> list[int]:
    """Flat offset ``i*DH*W + j*DW`` of each kernel tap from its window's top-left corner."""
    return [i * dilation[0] * width + j * dilation[1] for i in range(kernel[0]) for j in range(kernel[1])]


def _window_origins(width: int, out: Pair, stride: Pair, padding: Pair, dtype: np.dtype) -> np.ndarray:
    """``[OH, OW]`` flat index ``h * W + w`` of each window's top-left corner (negative in padding)."""
    rows = (np.arange(out[0]) * stride[0] - padding[0]) * width
    return (rows[:, None] + (np.arange(out[1]) * stride[1] - padding[1])).astype(dtype)  # type: ignore[no-any-return]


def max_pool2d(x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
    # A running maximum over the KH*KW tap views: no copy of the windows, no reduction over
    # strided axes (slow in NumPy), and the result keeps the input's memory layout.
    x = np.asarray(x)
    shape = _out_shape(x, kernel, stride, padding, dilation)
    views = taps(pad(x, padding, -np.inf), kernel, shape[2:], stride, dilation)
    values = empty_as(x, shape)
    np.copyto(values, next(views))
    for tap in views:
        np.maximum(values, tap, out=values)
    return values


def max_pool2d_with_indices(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, index_dtype: np.dtype
) -> tuple[Array, Array]:
    """Values and flat ``h * W + w`` indices of the first maximum of each window in kernel order
    (the first NaN where a window holds one), as PyTorch."""
    x = np.asarray(x)
    if x.size == 0 or np.isnan(x.max()):
        return max_pool2d_with_indices_argmax(x, kernel, stride, padding, dilation, index_dtype)
    shape = _out_shape(x, kernel, stride, padding, dilation)
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
    index += _window_origins(width, count.shape[2:], stride, padding, dtype)
    if kernel[1] > 1:
        rows *= kernel[1]
        count -= rows  # now the tap's column in the kernel
        index += count if dilation[1] == 1 else count.astype(dtype) * dilation[1]
    return index


def max_pool2d_with_indices_argmax(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, index_dtype: np.dtype
) -> tuple[Array, Array]:
    """The general path (and reference): one argmax over a copy of the windows."""
    x = np.asarray(x)
    w_in = x.shape[3]
    win = _view(x, kernel, stride, padding, dilation, -np.inf)
    n, c, oh, ow, kh, kw = win.shape
    flat = win.reshape(n, c, oh, ow, kh * kw)  # the one copy: argmax needs the taps on one axis
    tap = flat.argmax(axis=4)
    values = np.take_along_axis(flat, tap[..., None], axis=4)[..., 0]
    # Position in the unpadded input plane: h = oh*s - p + kh*d (same for w), flattened h * W + w.
    rows = (np.arange(oh) * stride[0] - padding[0]).reshape(oh, 1) + (tap // kw) * dilation[0]
    cols = (np.arange(ow) * stride[1] - padding[1]) + (tap % kw) * dilation[1]
    return values, (rows * w_in + cols).astype(index_dtype, copy=False)


def _disjoint(kernel: Pair, stride: Pair, dilation: Pair) -> bool:
    """Whether no input element lies in two windows (the stride covers the dilated kernel)."""
    return all(s >= (k - 1) * d + 1 for k, s, d in zip(kernel, stride, dilation, strict=True))


def max_pool2d_backward(
    x: Array, output_grad: Array, indices: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> Array:
    offsets = _tap_offsets(x.shape[3], kernel, dilation)
    if not _disjoint(kernel, stride, dilation) or len(set(offsets)) < len(offsets):
        return max_pool2d_backward_scatter(x, output_grad, indices)
    # Disjoint windows: every input element receives the gradient of at most one window, so no
    # sum is needed: per tap, the window's gradient where its index names that tap, else 0. The
    # gradient keeps x's memory layout.
    n, c, h, w = x.shape
    ph, pw = padding
    grad = empty_as(x, (n, c, h + 2 * ph, w + 2 * pw), zero=True)
    # Everything in x's memory layout (the gradient arrives in whatever layout the next op
    # left), so that each pass below walks the tap views and its operands in one order.
    shape, out = output_grad.shape, output_grad.shape[2:]
    g = empty_as(x, shape)
    np.copyto(g, output_grad, casting="unsafe")
    relative, hit = empty_as(x, shape, indices.dtype), empty_as(x, shape, bool)
    np.subtract(indices, _window_origins(w, out, stride, padding, indices.dtype), out=relative)
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


def max_pool2d_backward_scatter(x: Array, output_grad: Array, indices: Array) -> Array:
    """The general path (overlapping windows): one float64 `bincount` sums the scattered gradient."""
    n, c, h, w = x.shape
    plane = h * w
    offsets = (np.arange(n * c, dtype=np.intp) * plane).reshape(n, c, 1, 1)
    flat = (indices.astype(np.intp) + offsets).ravel()
    sums = np.bincount(flat, weights=output_grad.astype(np.float64).ravel(), minlength=n * c * plane)
    return sums.reshape(x.shape).astype(x.dtype, copy=False)


def _avg_divisor(
    size: Pair, kernel: Pair, stride: Pair, padding: Pair, out: Pair, count_include_pad: bool
) -> float | np.ndarray:
    if count_include_pad:
        return float(kernel[0] * kernel[1])
    counts = []
    for n, k, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        counts.append(np.minimum(start + k, n) - np.maximum(start, 0))
    return counts[0].reshape(-1, 1) * counts[1]  # type: ignore[no-any-return]


def avg_pool2d(x: Array, kernel: Pair, stride: Pair, padding: Pair, count_include_pad: bool) -> Array:
    dtype = work_dtype(x)
    win = _view(x.astype(dtype, copy=False), kernel, stride, padding, (1, 1), 0.0)
    sums = win.sum(axis=(4, 5))
    sums /= _avg_divisor(x.shape[2:], kernel, stride, padding, sums.shape[2:], count_include_pad)
    return sums.astype(x.dtype, copy=False)


def avg_pool2d_backward(
    x: Array, output_grad: Array, kernel: Pair, stride: Pair, padding: Pair, count_include_pad: bool
) -> Array:
    n, c, h, w = x.shape
    oh, ow = output_grad.shape[2:]
    dtype = work_dtype(x, output_grad)
    grad = output_grad.astype(dtype) / _avg_divisor(
        (h, w), kernel, stride, padding, (oh, ow), count_include_pad
    )
    # Every tap of a window receives the window's gradient: a broadcast view, summed by col2im.
    cols = np.broadcast_to(grad[:, :, None, None], (n, c, kernel[0], kernel[1], oh, ow))
    plane = col2im(cols, (h + 2 * padding[0], w + 2 * padding[1]), stride, (1, 1))
    return plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w].astype(x.dtype, copy=False)


def adaptive_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """``[out, size]``: row i averages PyTorch's bin ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)  # type: ignore[no-any-return]


def adaptive_avg_pool2d(x: Array, output_size: Pair) -> Array:
    dtype = work_dtype(x)
    ph = adaptive_matrix(x.shape[2], output_size[0], dtype)
    pw = adaptive_matrix(x.shape[3], output_size[1], dtype)
    return np.matmul(np.matmul(ph, x.astype(dtype, copy=False)), pw.T).astype(x.dtype, copy=False)


def adaptive_avg_pool2d_backward(x: Array, output_grad: Array) -> Array:
    dtype = work_dtype(x, output_grad)
    ph = adaptive_matrix(x.shape[2], output_grad.shape[2], dtype)
    pw = adaptive_matrix(x.shape[3], output_grad.shape[3], dtype)
    return np.matmul(np.matmul(ph.T, output_grad.astype(dtype, copy=False)), pw).astype(x.dtype, copy=False)
