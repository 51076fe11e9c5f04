"""3-D max, average and adaptive average pooling and their gradients on ``[N, C, D, H, W]``.

The windows are strided views of the padded input (as in `burn_ndarray._conv3d`). Max pooling
keeps a running maximum over the kernel's tap views (no copy of the windows); with indices it
counts the leading taps that differ from the maximum (one argmax over a copy of the windows when
NaN is present) and maps the winning tap to its flat input index with burn-core's table
(`burn.backend.module_ops_3d.max_pool_index_nd`: a window lying all in the padding names the
element the default names). Average pooling sums a window view; its gradient adds each tap's
share back with one strided slice-add per tap. Adaptive pooling is separable: one averaging
matrix per axis (PyTorch's bins, the shared `burn.backend.xp.pool.adaptive_matrix`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from burn.backend.ops.pool import max_pool_index_nd
from burn.backend.windows import out_size_nd
from burn.backend.xp.pool import adaptive_matrix
from burn_ndarray._windows import work_dtype

Array = Any
Triple = tuple[int, int, int]
Dims = tuple[int, ...]


def _pad(x: np.ndarray, padding: Triple, value: float) -> np.ndarray:
    if not any(padding):
        return x
    n, c, *size = x.shape
    out = np.full((n, c, *(s + 2 * p for s, p in zip(size, padding, strict=True))), value, x.dtype)
    out[(slice(None), slice(None), *(slice(p, p + s) for s, p in zip(size, padding, strict=True)))] = x
    return out


def _regions(kernel: Dims, out: Dims, stride: Dims, dilation: Dims) -> Iterator[tuple[slice, ...]]:
    """The strided ``[N, C, OD, OH, OW]`` region each kernel tap reads, in kernel (row-major) order."""
    axes = [
        [slice(i * d, i * d + (o - 1) * s + 1, s) for i in range(k)]
        for k, s, d, o in zip(kernel, stride, dilation, out, strict=True)
    ]
    for pick in itertools.product(*axes):
        yield (slice(None), slice(None), *pick)


def _windows(xp: np.ndarray, kernel: Dims, out: Dims, stride: Dims, dilation: Dims) -> np.ndarray:
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
    xp = _pad(x, padding, -np.inf)
    regions = _regions(kernel_size, out, stride, dilation)
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
    xp = _pad(x, padding, -np.inf)
    regions = list(_regions(kernel_size, out, stride, dilation))
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
    flat = _windows(xp, kernel, out, stride, dilation).reshape(n, c, *out, math.prod(kernel))
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
    xp = _pad(np.asarray(x).astype(work_dtype(x), copy=False), padding, 0.0)
    sums = _windows(xp, kernel_size, out, stride, (1, 1, 1)).sum(axis=(5, 6, 7))
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
    for region in _regions(kernel_size, out, stride, (1, 1, 1)):
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


class Pool3dOps:
    """The 3-D pooling ops of `burn_ndarray.NdArray`."""

    _int_np: np.dtype

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
