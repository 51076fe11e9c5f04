"""Max, average and adaptive average pooling (2-D; 1-D goes through 2-D with a height of 1).

Max and average pooling reduce a strided window view (no copy) over its kernel axes with one CuPy
reduction; indices of the maxima come from one argmax over a ``[..., KH*KW]`` copy. Gradients
scatter with one atomic-add kernel (max) or go through `col2im` (average). Adaptive pooling is
separable: ``P_h @ x @ P_w^T`` (two cuBLAS GEMMs) with averaging matrices of PyTorch's bins.
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

from burn.errors import ShapeError
from burn_cuda import _kernels as k
from burn_cuda._dtypes import F16, F32, I64
from burn_cuda._windows import Pair, col2im, out_size, pad, windows, work_dtype

Array = Any


def _view(x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, fill: float) -> Array:
    """Window view ``[N, C, OH, OW, KH, KW]`` of `x` padded with `fill`."""
    n, c, h, w = x.shape
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    if oh <= 0 or ow <= 0:
        raise ShapeError(
            f"pool2d: input {x.shape} with kernel {kernel}, padding {padding} gives an empty output"
        )
    win = windows(pad(x, padding, fill), kernel, (oh, ow), stride, dilation)
    return win.transpose(0, 1, 4, 5, 2, 3)


def max_pool2d(x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
    return _view(x, kernel, stride, padding, dilation, float("-inf")).max(axis=(4, 5))


def max_pool2d_with_indices(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, index_dtype: np.dtype
) -> tuple[Array, Array]:
    w_in = x.shape[3]
    win = _view(x, kernel, stride, padding, dilation, float("-inf"))
    n, c, oh, ow, kh, kw = win.shape
    flat = win.reshape(n, c, oh, ow, kh * kw)  # the one copy: argmax needs the taps on one axis
    tap = flat.argmax(axis=4)
    values = cp.take_along_axis(flat, tap[..., None], axis=4)[..., 0]
    # Position in the unpadded input plane: h = oh*s - p + kh*d (same for w), flattened h * W + w.
    rows = (cp.arange(oh, dtype=I64) * stride[0] - padding[0]).reshape(oh, 1) + (tap // kw) * dilation[0]
    cols = (cp.arange(ow, dtype=I64) * stride[1] - padding[1]) + (tap % kw) * dilation[1]
    return values, (rows * w_in + cols).astype(index_dtype, copy=False)


def max_pool2d_backward(x: Array, output_grad: Array, indices: Array) -> Array:
    n, c, h, w = x.shape
    plane = h * w
    dtype = F32 if x.dtype == F16 else x.dtype
    out = cp.zeros(n * c * plane, dtype=dtype)
    offsets = (cp.arange(n * c, dtype=I64) * plane).reshape(n, c, 1, 1)
    index = indices.astype(I64)
    k.scatter_add(index + offsets, output_grad.astype(dtype), index, plane, out)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def _avg_divisor(
    size: Pair, kernel: Pair, stride: Pair, padding: Pair, out: Pair, count_include_pad: bool
) -> Any:
    if count_include_pad:
        return float(kernel[0] * kernel[1])
    counts = []
    for n, kk, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        counts.append(np.minimum(start + kk, n) - np.maximum(start, 0))
    return cp.asarray(counts[0].reshape(-1, 1) * counts[1])


def avg_pool2d(x: Array, kernel: Pair, stride: Pair, padding: Pair, count_include_pad: bool) -> Array:
    dtype = work_dtype(x)
    win = _view(x.astype(dtype, copy=False), kernel, stride, padding, (1, 1), 0.0)
    divisor = _avg_divisor(x.shape[2:], kernel, stride, padding, win.shape[2:4], count_include_pad)
    return (win.sum(axis=(4, 5)) / divisor).astype(x.dtype, copy=False)


def avg_pool2d_backward(
    x: Array, output_grad: Array, kernel: Pair, stride: Pair, padding: Pair, count_include_pad: bool
) -> Array:
    n, c, h, w = x.shape
    oh, ow = output_grad.shape[2:]
    dtype = work_dtype(x, output_grad)
    divisor = _avg_divisor((h, w), kernel, stride, padding, (oh, ow), count_include_pad)
    grad = output_grad.astype(dtype) / divisor
    # Each window spreads its share over its taps: a broadcast view, summed by col2im.
    cols = cp.broadcast_to(grad[:, :, None, None], (n, c, kernel[0], kernel[1], oh, ow))
    plane = col2im(cols, (h + 2 * padding[0], w + 2 * padding[1]), stride, (1, 1))
    return plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w].astype(x.dtype)


def adaptive_matrix(size: int, out: int, dtype: np.dtype) -> Array:
    """``[out, size]``: row i averages PyTorch's bin ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return cp.asarray((inside / (end - start)[:, None]).astype(dtype))


def adaptive_avg_pool2d(x: Array, output_size: Pair) -> Array:
    dtype = work_dtype(x)
    ph = adaptive_matrix(x.shape[2], output_size[0], dtype)
    pw = adaptive_matrix(x.shape[3], output_size[1], dtype)
    return cp.matmul(cp.matmul(ph, x.astype(dtype, copy=False)), pw.T).astype(x.dtype, copy=False)


def adaptive_avg_pool2d_backward(x: Array, output_grad: Array) -> Array:
    dtype = work_dtype(x, output_grad)
    ph = adaptive_matrix(x.shape[2], output_grad.shape[2], dtype)
    pw = adaptive_matrix(x.shape[3], output_grad.shape[3], dtype)
    grad = cp.matmul(cp.matmul(ph.T, output_grad.astype(dtype, copy=False)), pw)
    return grad.astype(x.dtype, copy=False)
