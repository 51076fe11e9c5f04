"""The pool family (`burn.backend.ops.pool`) on NumPy arrays: the shared ops
(`burn.backend.xp.pool`: 1-D and 2-D average, adaptive and max pooling) and NumPy's own: the fast
paths of 2-D max pooling, which fall back to the shared ones, and 3-D max, average and adaptive
average pooling with their gradients.

2-D max pooling keeps a running (first) maximum over the kernel's tap views, with ``out=``
passes: no copy of the windows, no reduction over strided axes (slow in NumPy), and the result
keeps the input's memory layout. Its indices count, per window, the leading taps that differ from
the maximum; its gradient is one masked copy per tap when windows are disjoint (the usual stride =
kernel). The shared argmax and bincount versions stay the general paths (NaN inputs, overlapping
windows) and the references. Large channels-last inputs pool in compiled kernels
(`burn_ndarray.kernels.pool`).

3-D, on ``[N, C, D, H, W]``: the windows are strided views of the padded input. Max pooling keeps
a running maximum over the kernel's tap views (no copy of the windows); with indices it counts
the leading taps that differ from the maximum (one argmax over a copy of the windows when NaN is
present) and maps the winning tap to its flat input index with burn-core's table
(`burn.backend.ops.pool.max_pool_index_nd`: a window lying all in the padding names the element
the default names). Average pooling sums a window view; its gradient adds each tap's share back
with one strided slice-add per tap. Adaptive pooling is separable: one averaging matrix per axis
(PyTorch's bins, the shared `burn.backend.xp.pool.adaptive_matrix`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from burn.backend.ops.pool import max_pool_index_nd
from burn.backend.windows import out_size_nd
from burn.backend.xp import pool as _xpool
from burn.backend.xp.pool import XpPoolOps, adaptive_matrix, out_shape, tap_offsets, window_origins
from burn_ndarray import kernels
from burn_ndarray.ops.rounding import to_dtype
from burn_ndarray.ops.windows import Pair, empty_as, pad, taps, work_dtype
from burn_ndarray.runtime.dtypes import LOW

Array = Any
Triple = tuple[int, int, int]
Dims = tuple[int, ...]


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
# (`kernels.pool`): below, the NumPy passes, and small models never load numba.
COMPILED_MIN_SIZE = 1 << 15


def _compiled(x: Array) -> Any:
    """`burn_ndarray.kernels.pool` when `x` is a large channels-last float32/float64 array and
    numba loads."""
    if x.size < COMPILED_MIN_SIZE or x.dtype not in (np.float32, np.float64) or not _channels_last_dense(x):
        return None
    return kernels.load("pool")  # None: numba missing


def _channels_last_dense(x: Array) -> bool:
    """Whether ``[N, C, H, W]`` `x` is a view of a C-contiguous ``[N, H, W, C]`` array."""
    return x.ndim == 4 and bool(x.transpose(0, 2, 3, 1).flags.c_contiguous)


def max_pool2d_with_indices(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, index_dtype: np.dtype
) -> tuple[Array, Array]:
    """Values and flat ``h * W + w`` indices of the first maximum of each window in kernel order
    (the first NaN where a window holds one), as PyTorch."""
    x = np.asarray(x)
    if x.dtype in LOW and x.size >= COMPILED_MIN_SIZE:
        # A window's maximum is one of its values: pooled by the compiled float32 kernel (the
        # widening keeps the channels-last layout) and narrowed back exactly.
        wide = x.astype(np.float32)
        values, indices = max_pool2d_with_indices(wide, kernel, stride, padding, dilation, index_dtype)
        return to_dtype(values, x.dtype), indices
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
    if output_grad.dtype in LOW and x.size >= COMPILED_MIN_SIZE:
        # In float32 on the compiled path (overlapping windows sum there), rounded once. Only x's
        # shape and memory layout matter here (the indices say where each gradient goes): an
        # uninitialized float32 array of its layout stands in, not a widened copy of its values.
        stand_in = np.empty_like(x, dtype=np.float32)
        wide = max_pool2d_backward(stand_in, output_grad.astype(np.float32), indices, kernel,
                                   stride, padding, dilation)
        return to_dtype(wide, output_grad.dtype)
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


def _pad3d(x: np.ndarray, padding: Triple, value: float) -> np.ndarray:
    if not any(padding):
        return x
    n, c, *size = x.shape
    out = np.full((n, c, *(s + 2 * p for s, p in zip(size, padding, strict=True))), value, x.dtype)
    out[(slice(None), slice(None), *(slice(p, p + s) for s, p in zip(size, padding, strict=True)))] = x
    return out


def _regions3d(kernel: Dims, out: Dims, stride: Dims, dilation: Dims) -> Iterator[tuple[slice, ...]]:
    """The strided ``[N, C, OD, OH, OW]`` region each kernel tap reads, in kernel (row-major) order."""
    axes = [
        [slice(i * d, i * d + (o - 1) * s + 1, s) for i in range(k)]
        for k, s, d, o in zip(kernel, stride, dilation, out, strict=True)
    ]
    for pick in itertools.product(*axes):
        yield (slice(None), slice(None), *pick)


def _windows3d(xp: np.ndarray, kernel: Dims, out: Dims, stride: Dims, dilation: Dims) -> np.ndarray:
    """Read-only view ``[N, C, OD, OH, OW, KD, KH, KW]`` of the windows of the padded `xp`."""
    sn, sc, sd, sh, sw = xp.strides
    return as_strided(  # type: ignore[no-any-return]
        xp,
        shape=(*xp.shape[:2], *out, *kernel),
        strides=(
            sn,
            sc,
            sd * stride[0],
            sh * stride[1],
            sw * stride[2],
            sd * dilation[0],
            sh * dilation[1],
            sw * dilation[2],
        ),
        writeable=False,
    )


def max_pool3d(x: Array, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple) -> Array:
    x = np.asarray(x)
    out = out_size_nd("max_pool3d", x.shape[2:], kernel_size, stride, padding, dilation)
    xp = _pad3d(x, padding, -np.inf)
    regions = _regions3d(kernel_size, out, stride, dilation)
    values = np.array(xp[next(regions)])
    for region in regions:
        np.maximum(values, xp[region], out=values)  # propagates NaN, as the default's max does
    return values


def max_pool3d_with_indices(
    x: Array, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple, index_dtype: np.dtype
) -> tuple[Array, Array]:
    """Values and flat ``d * H * W + h * W + w`` indices of the first maximum (first NaN) of each
    window in kernel order."""
    x = np.asarray(x)
    size = tuple(x.shape[2:])
    out = out_size_nd("max_pool3d_with_indices", size, kernel_size, stride, padding, dilation)
    xp = _pad3d(x, padding, -np.inf)
    regions = list(_regions3d(kernel_size, out, stride, dilation))
    values = np.array(xp[regions[0]])
    for region in regions[1:]:
        np.maximum(values, xp[region], out=values)
    if np.isnan(values).any():  # NaN equals nothing: the tap count below needs the argmax
        tap = _argmax_taps(xp, kernel_size, out, stride, dilation)
    else:
        # The first tap equal to the maximum is the count of leading taps that differ from it:
        # boolean and small-int passes, no copy of the windows.
        tap = np.zeros(values.shape, np.uint8 if len(regions) < 256 else np.intp)
        before, differs = np.ones(values.shape, bool), np.empty(values.shape, bool)
        for region in regions[:-1]:
            np.not_equal(xp[region], values, out=differs)
            before &= differs
            tap += before
    # burn-core's table maps (tap, output position) to the flat input index; a window lying all
    # in the padding names what the default names.
    table = max_pool_index_nd(size, *map(tuple, (kernel_size, stride, padding, dilation)), out)
    length = math.prod(out)
    flat = tap.reshape(*tap.shape[:2], length).astype(np.intp) * length + np.arange(length)
    indices = table.reshape(-1).take(flat).reshape(tap.shape)
    return values, indices.astype(index_dtype, copy=False)


def _argmax_taps(xp: np.ndarray, kernel: Triple, out: Dims, stride: Triple, dilation: Triple) -> np.ndarray:
    """The first maximum's tap of each window (the first NaN where one holds NaN), by one argmax
    over a copy of the windows."""
    n, c = xp.shape[:2]
    flat = _windows3d(xp, kernel, out, stride, dilation).reshape(n, c, *out, math.prod(kernel))
    return flat.argmax(axis=-1)  # type: ignore[no-any-return]


def max_pool3d_backward(x: Array, output_grad: Array, indices: Array) -> Array:
    """`output_grad` summed at the flat `indices` of each input volume (one float64 bincount)."""
    n, c = x.shape[:2]
    volume = math.prod(x.shape[2:])
    offsets = (np.arange(n * c, dtype=np.intp) * volume).reshape(n, c, 1, 1, 1)
    flat = (indices.astype(np.intp) + offsets).ravel()
    sums = np.bincount(flat, weights=output_grad.astype(np.float64).ravel(), minlength=n * c * volume)
    return sums.reshape(x.shape).astype(output_grad.dtype, copy=False)


def _divisor(
    size: Dims, kernel: Dims, stride: Dims, padding: Dims, out: Dims, count_include_pad: bool
) -> float | np.ndarray:
    """What each window's sum is divided by: the kernel volume, or the unpadded elements it covers."""
    if count_include_pad or not any(padding):
        return float(math.prod(kernel))
    counts = np.ones((), dtype=np.float64)
    for n, k, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        counts = np.multiply.outer(counts, np.minimum(start + k, n) - np.maximum(start, 0))
    return counts


def avg_pool3d(
    x: Array, kernel_size: Triple, stride: Triple, padding: Triple, count_include_pad: bool
) -> Array:
    size = tuple(x.shape[2:])
    out = out_size_nd("avg_pool3d", size, kernel_size, stride, padding, (1, 1, 1))
    xp = _pad3d(np.asarray(x).astype(work_dtype(x), copy=False), padding, 0.0)
    sums = _windows3d(xp, kernel_size, out, stride, (1, 1, 1)).sum(axis=(5, 6, 7))
    sums /= _divisor(size, kernel_size, stride, padding, out, count_include_pad)
    return sums.astype(x.dtype, copy=False)


def avg_pool3d_backward(
    x: Array,
    output_grad: Array,
    kernel_size: Triple,
    stride: Triple,
    padding: Triple,
    count_include_pad: bool,
) -> Array:
    n, c = x.shape[:2]
    size: Dims = tuple(x.shape[2:])
    out: Dims = tuple(output_grad.shape[2:])
    dtype = work_dtype(x, output_grad)
    share = output_grad.astype(dtype) / _divisor(size, kernel_size, stride, padding, out, count_include_pad)
    plane = np.zeros((n, c, *(s + 2 * p for s, p in zip(size, padding, strict=True))), dtype)
    for region in _regions3d(kernel_size, out, stride, (1, 1, 1)):
        plane[region] += share
    crop = tuple(slice(p, p + s) for s, p in zip(size, padding, strict=True))
    return plane[(slice(None), slice(None), *crop)].astype(x.dtype, copy=False)


def adaptive_avg_pool3d(x: Array, output_size: Triple) -> Array:
    n, c, d, h, w = x.shape
    od, oh, ow = output_size
    dtype = work_dtype(x)
    y = np.matmul(x.astype(dtype, copy=False), adaptive_matrix(w, ow, dtype).T)  # [N, C, D, H, OW]
    y = np.matmul(adaptive_matrix(h, oh, dtype), y)  # [N, C, D, OH, OW]
    y = np.matmul(adaptive_matrix(d, od, dtype), y.reshape(n, c, d, oh * ow))
    return y.reshape(n, c, od, oh, ow).astype(x.dtype, copy=False)


def adaptive_avg_pool3d_backward(x: Array, output_grad: Array) -> Array:
    n, c, d, h, w = x.shape
    od, oh, ow = output_grad.shape[2:]
    dtype = work_dtype(x, output_grad)
    g = output_grad.astype(dtype, copy=False).reshape(n, c, od, oh * ow)
    g = np.matmul(adaptive_matrix(d, od, dtype).T, g)  # [N, C, D, OH * OW]
    g = np.matmul(adaptive_matrix(h, oh, dtype).T, g.reshape(n, c, d, oh, ow))  # [N, C, D, H, OW]
    g = np.matmul(g, adaptive_matrix(w, ow, dtype))
    return g.astype(x.dtype, copy=False)


class PoolOps(XpPoolOps):
    """The pool ops of `burn_ndarray.NdArray`."""

    _int_np: np.dtype

    # -- max pooling: running maximum over tap views with out= passes ---------------------------
    _max_pool2d = max_pool2d = staticmethod(max_pool2d)

    def _max_pool2d_with_indices(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[Array, Array]:
        return max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, self._int_np)

    max_pool2d_with_indices = _max_pool2d_with_indices

    def max_pool2d_with_indices_backward(
        self,
        x: Array,
        kernel_size: Pair,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        output_grad: Array,
        indices: Array,
    ) -> Array:
        return max_pool2d_backward(x, output_grad, indices, kernel_size, stride, padding, dilation)

    # -- 3-D pooling --------------------------------------------------------------------------
    max_pool3d = staticmethod(max_pool3d)

    def max_pool3d_with_indices(
        self, x: Array, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple
    ) -> tuple[Array, Array]:
        return max_pool3d_with_indices(x, kernel_size, stride, padding, dilation, self._int_np)

    def max_pool3d_with_indices_backward(
        self,
        x: Array,
        kernel_size: Triple,
        stride: Triple,
        padding: Triple,
        dilation: Triple,
        output_grad: Array,
        indices: Array,
    ) -> Array:
        return max_pool3d_backward(x, output_grad, indices)

    avg_pool3d = staticmethod(avg_pool3d)
    avg_pool3d_backward = staticmethod(avg_pool3d_backward)
    adaptive_avg_pool3d = staticmethod(adaptive_avg_pool3d)
    adaptive_avg_pool3d_backward = staticmethod(adaptive_avg_pool3d_backward)
