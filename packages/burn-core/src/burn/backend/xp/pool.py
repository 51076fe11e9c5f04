"""Max, average and adaptive average pooling over ``[N, C, H, W]`` (1-D through 2-D with a height of 1).

The general versions, for any namespace: max pooling reduces a strided window view (no copy) over
its kernel axes; with indices, it takes one argmax over a ``[..., KH*KW]`` copy of the windows,
gathers the values there, and maps each winning tap to its input index with a host table of tap
offsets and window origins (one upload, one gather, one add); its gradient sums
the scattered output gradient with one float64 `bincount`. Average pooling reduces the window view;
its gradient goes through `col2im`. Adaptive pooling is separable, ``P_h @ x @ P_w^T``, with
averaging matrices of PyTorch's bins. Host tables depend only on sizes and are cached read-only.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from burn.backend.tables import avg_pool_counts
from burn.backend.windows import out_size
from burn.backend.xp.windows import Pair, col2im, pad, windows, work_dtype

Array = Any


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # cached: shared by every caller
    return array


def out_shape(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> tuple[int, int, int, int]:
    """``[N, C, OH, OW]`` of pooling `x` (an empty output is a `ShapeError`)."""
    n, c, h, w = x.shape
    oh, ow = out_size("pool2d", (h, w), kernel, stride, padding, dilation)
    return n, c, oh, ow


def window_view(
    xp: ModuleType, x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, fill: float
) -> Array:
    """Window view ``[N, C, OH, OW, KH, KW]`` of `x` padded with `fill`."""
    out = out_shape(x, kernel, stride, padding, dilation)[2:]
    return windows(xp, pad(xp, x, padding, fill), kernel, out, stride, dilation).transpose(0, 1, 4, 5, 2, 3)


@functools.lru_cache(maxsize=256)
def tap_offsets(width: int, kernel: Pair, dilation: Pair) -> tuple[int, ...]:
    """Flat offset ``i*DH*W + j*DW`` of each kernel tap from its window's top-left corner."""
    return tuple(
        i * dilation[0] * width + j * dilation[1] for i in range(kernel[0]) for j in range(kernel[1])
    )


@functools.lru_cache(maxsize=256)
def window_origins(width: int, out: Pair, stride: Pair, padding: Pair, dtype: np.dtype) -> np.ndarray:
    """``[OH, OW]`` flat index ``h * W + w`` of each window's top-left corner (negative in padding)."""
    rows = (np.arange(out[0]) * stride[0] - padding[0]) * width
    return _frozen((rows[:, None] + (np.arange(out[1]) * stride[1] - padding[1])).astype(dtype))


@functools.lru_cache(maxsize=256)
def _index_parts(
    width: int, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out: Pair, dtype: np.dtype
) -> np.ndarray:
    """The ``KH*KW`` tap offsets then the ``OH*OW`` window origins, as one array (one upload)."""
    offsets = np.array(tap_offsets(width, kernel, dilation), dtype=dtype)
    return _frozen(np.concatenate([offsets, window_origins(width, out, stride, padding, dtype).ravel()]))


def max_pool2d(xp: ModuleType, x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
    return window_view(xp, x, kernel, stride, padding, dilation, float("-inf")).max(axis=(4, 5))


def max_pool2d_with_indices(
    xp: ModuleType, x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, index_dtype: np.dtype
) -> tuple[Array, Array]:
    """Values and flat ``h * W + w`` indices of the first maximum of each window in kernel order
    (the first NaN where a window holds one), as PyTorch."""
    win = window_view(xp, x, kernel, stride, padding, dilation, float("-inf"))
    n, c, oh, ow, kh, kw = win.shape
    flat = win.reshape(n, c, oh, ow, kh * kw)  # the one copy: argmax needs the taps on one axis
    tap = flat.argmax(axis=4)
    # The value at `tap`: one flat gather (a max over the short tap axis is 30x slower in NumPy,
    # take_along_axis is a dozen array calls in CuPy).
    rows = xp.arange(0, tap.size * kh * kw, kh * kw, dtype=np.int64).reshape(tap.shape)
    values = flat.reshape(-1).take(rows + tap)
    # Input index = the window's origin + the winning tap's offset from it.
    table = _index_parts(x.shape[3], *map(tuple, (kernel, stride, padding, dilation)), (oh, ow), index_dtype)
    parts = xp.asarray(table)
    return values, parts[: kh * kw].take(tap) + parts[kh * kw :].reshape(oh, ow)


def max_pool2d_backward(xp: ModuleType, x: Array, output_grad: Array, indices: Array) -> Array:
    """Scatter-sum of `output_grad` at `indices` (overlapping windows too): one float64 `bincount`."""
    n, c, h, w = x.shape
    plane = h * w
    offsets = (xp.arange(n * c, dtype=np.int64) * plane).reshape(n, c, 1, 1)
    flat = (indices.astype(np.int64) + offsets).ravel()
    sums = xp.bincount(flat, weights=output_grad.astype(np.float64).ravel(), minlength=n * c * plane)
    return sums.reshape(x.shape).astype(x.dtype, copy=False)


def _avg_divisor(
    xp: ModuleType,
    size: Pair,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    out: Pair,
    include: bool,
    dtype: np.dtype,
) -> float | Array:
    """Each window's element count: the kernel's size, or (padding not counted) a ``[OH, OW]`` table
    in the work dtype (small integers: the quotient is the float64 one, rounded once)."""
    if include or (padding[0] == 0 and padding[1] == 0):
        return float(kernel[0] * kernel[1])
    counts = avg_pool_counts(*map(tuple, (size, kernel, stride, padding, out)))  # cached: hashable sizes
    return xp.asarray(counts.astype(dtype))


def avg_pool2d(
    xp: ModuleType, x: Array, kernel: Pair, stride: Pair, padding: Pair, count_include_pad: bool
) -> Array:
    dtype = work_dtype(x)
    win = window_view(xp, x.astype(dtype, copy=False), kernel, stride, padding, (1, 1), 0.0)
    sums = win.sum(axis=(4, 5))  # a fresh array: divided in place
    sums /= _avg_divisor(xp, x.shape[2:], kernel, stride, padding, sums.shape[2:], count_include_pad, dtype)
    return sums.astype(x.dtype, copy=False)


def avg_pool2d_backward(
    xp: ModuleType,
    x: Array,
    output_grad: Array,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    count_include_pad: bool,
) -> Array:
    n, c, h, w = x.shape
    oh, ow = output_grad.shape[2:]
    dtype = work_dtype(x, output_grad)
    divisor = _avg_divisor(xp, (h, w), kernel, stride, padding, (oh, ow), count_include_pad, dtype)
    grad = output_grad.astype(dtype, copy=False) / divisor
    # Every tap of a window receives the window's gradient: a broadcast view, summed by col2im.
    cols = xp.broadcast_to(grad[:, :, None, None], (n, c, kernel[0], kernel[1], oh, ow))
    plane = col2im(xp, cols, (h + 2 * padding[0], w + 2 * padding[1]), stride, (1, 1))
    return plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w].astype(x.dtype, copy=False)


@functools.lru_cache(maxsize=256)
def adaptive_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """``[out, size]`` host matrix: row i averages PyTorch's bin
    ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return _frozen((inside / (end - start)[:, None]).astype(dtype))


def adaptive_avg_pool2d(xp: ModuleType, x: Array, output_size: Pair) -> Array:
    dtype = work_dtype(x)
    ph = xp.asarray(adaptive_matrix(x.shape[2], output_size[0], dtype))
    pw = xp.asarray(adaptive_matrix(x.shape[3], output_size[1], dtype))
    return xp.matmul(xp.matmul(ph, x.astype(dtype, copy=False)), pw.T).astype(x.dtype, copy=False)


def adaptive_avg_pool2d_backward(xp: ModuleType, x: Array, output_grad: Array) -> Array:
    dtype = work_dtype(x, output_grad)
    ph = xp.asarray(adaptive_matrix(x.shape[2], output_grad.shape[2], dtype))
    pw = xp.asarray(adaptive_matrix(x.shape[3], output_grad.shape[3], dtype))
    grad = xp.matmul(xp.matmul(ph.T, output_grad.astype(dtype, copy=False)), pw)
    return grad.astype(x.dtype, copy=False)


class XpPoolOps:
    """The 2-D and 1-D pooling ops of a backend on the namespace ``self.xp``.

    A backend with faster max pooling of its own replaces the implementations `_max_pool2d` and
    `_max_pool2d_with_indices` (and may bind the public names to them directly): the 2-D and 1-D
    ops call those, never another public op, so wrappers of the backend see each op once.
    """

    xp: ClassVar[ModuleType]
    _int_np: np.dtype  # the index dtype (the backend's int dtype)

    def _max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
        return max_pool2d(self.xp, x, kernel_size, stride, padding, dilation)

    def _max_pool2d_with_indices(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[Array, Array]:
        return max_pool2d_with_indices(self.xp, x, kernel_size, stride, padding, dilation, self._int_np)

    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
        return self._max_pool2d(x, kernel_size, stride, padding, dilation)

    def max_pool2d_with_indices(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[Array, Array]:
        return self._max_pool2d_with_indices(x, kernel_size, stride, padding, dilation)

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
        return max_pool2d_backward(self.xp, x, output_grad, indices)

    def avg_pool2d(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> Array:
        return avg_pool2d(self.xp, x, kernel_size, stride, padding, count_include_pad)

    def avg_pool2d_backward(
        self,
        x: Array,
        output_grad: Array,
        kernel_size: Pair,
        stride: Pair,
        padding: Pair,
        count_include_pad: bool,
    ) -> Array:
        return avg_pool2d_backward(self.xp, x, output_grad, kernel_size, stride, padding, count_include_pad)

    def adaptive_avg_pool2d(self, x: Array, output_size: Pair) -> Array:
        return adaptive_avg_pool2d(self.xp, x, output_size)

    def adaptive_avg_pool2d_backward(self, x: Array, output_grad: Array) -> Array:
        return adaptive_avg_pool2d_backward(self.xp, x, output_grad)

    # -- 1-D: 2-D over views with a height of 1 -------------------------------------------------
    def max_pool1d(self, x: Array, kernel_size: int, stride: int, padding: int, dilation: int) -> Array:
        out = self._max_pool2d(x[:, :, None, :], (1, kernel_size), (1, stride), (0, padding), (1, dilation))
        return out[:, :, 0]

    def max_pool1d_with_indices(
        self, x: Array, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[Array, Array]:
        values, indices = self._max_pool2d_with_indices(
            x[:, :, None, :], (1, kernel_size), (1, stride), (0, padding), (1, dilation)
        )
        return values[:, :, 0], indices[:, :, 0]  # with a height of 1, h * W + w is w

    def avg_pool1d(
        self, x: Array, kernel_size: int, stride: int, padding: int, count_include_pad: bool
    ) -> Array:
        x2 = x[:, :, None, :]
        return avg_pool2d(self.xp, x2, (1, kernel_size), (1, stride), (0, padding), count_include_pad)[
            :, :, 0
        ]

    def adaptive_avg_pool1d(self, x: Array, output_size: int) -> Array:
        return adaptive_avg_pool2d(self.xp, x[:, :, None, :], (1, output_size))[:, :, 0]
