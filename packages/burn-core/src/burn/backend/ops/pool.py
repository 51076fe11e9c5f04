"""The pool family of the backend contract: max, average and adaptive average pooling in 1-D,
2-D and 3-D, with the backward helpers the autodiff rules call.

All are defaults written only with other contract ops (one strided slice of the padded input per
kernel position; index and weight tables that depend only on sizes are built on the host,
`burn.backend.tables`); backends override them to be faster. Max-pool indices are int primitives
holding the flat index into each input plane or volume (``h * W + w``, ``d * H * W + h * W + w``),
as PyTorch returns them.

Preconditions (checked by `burn.tensor.module`, so a backend may rely on them): pooling padding
is at most half the kernel per axis, ``padding <= kernel_size // 2`` (so every window holds at
least one input element: a max pool never returns the -inf of its padding); `kernel_size`,
`stride`, `dilation` and adaptive pooling's `output_size` are >= 1; no output is empty: every
convolution and pooling output size is >= 1, and adaptive pooling gets an input with non-empty
spatial dims.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.contract import default, family
from burn.backend.tables import (
    _first_valid,
    adjoint_table,
    avg_pool_counts,
    float_table,
    int_table,
    max_pool_index,
    resample,
    resample_table,
)
from burn.backend.windows import (
    crop2d,
    crop_nd,
    fold,
    fold_nd,
    out_size,
    out_size_nd,
    pad2d,
    pad_nd,
    regions_nd,
    unfold,
    unfold_nd,
    window_slices,
)

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Triple = tuple[int, int, int]
Dims = tuple[int, ...]
Pair = tuple[int, int]

# -- rank-generic pooling ----------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def max_pool_index_nd(size: Dims, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims,
                      out: Dims) -> np.ndarray:
    """``[prod(kernel), *out]``: for each kernel position and output element, the flat index (row
    major over `size`) of the input element it reads. Positions in the padding name the window's
    first unpadded element along that axis (what PyTorch returns for an all -inf window)."""
    rank = len(size)
    flat = np.zeros((1,) * (2 * rank), dtype=np.int64)
    step = 1
    for axis in reversed(range(rank)):
        n, k, s, p, d, o = size[axis], kernel[axis], stride[axis], padding[axis], dilation[axis], out[axis]
        pos = _first_valid(np.arange(k)[:, None] * d + np.arange(o)[None, :] * s - p, n)  # [K, O]
        shape = [1] * (2 * rank)
        shape[axis], shape[rank + axis] = k, o
        flat = flat + pos.reshape(shape) * step
        step *= n
    table = flat.reshape(math.prod(kernel), *out)
    table.setflags(write=False)
    return table


def _window_counts(size: Dims, kernel: Dims, stride: Dims, padding: Dims, out: Dims) -> np.ndarray:
    """``[*out]``: how many unpadded input elements each pooling window covers."""
    counts = np.ones((), dtype=np.float64)
    for n, k, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        axis = (np.minimum(start + k, n) - np.maximum(start, 0)).astype(np.float64)
        counts = np.multiply.outer(counts, axis)
    return counts


def _divide_by_window_nd(b: Backend, t: P, size: Dims, kernel: Dims, stride: Dims, padding: Dims,
                      count_include_pad: bool) -> P:
    """`t` ``[N, C, *out]`` divided by each window's element count (padding counted or not)."""
    if count_include_pad or not any(padding):
        return b.float_div_scalar(t, float(math.prod(kernel)))
    out = tuple(b.float_shape(t)[2:])
    counts = _window_counts(size, kernel, stride, padding, out)
    table = float_table(b, counts.reshape(1, 1, *out), b.float_device(t), b.float_get_dtype(t))
    return b.float_div(t, table)


def max_pool_nd(b: Backend, op: str, x: P, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims) -> P:
    """Max pooling of any spatial rank; padding counts as -inf."""
    n, c, *size = b.float_shape(x)
    out = out_size_nd(op, tuple(size), kernel, stride, padding, dilation)
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, float("-inf")), kernel, stride, dilation, out)
    return b.float_reshape(b.float_max_dim(cols, 2), (n, c, *out))


def max_pool_nd_with_indices(b: Backend, op: str, x: P, kernel: Dims, stride: Dims, padding: Dims,
                             dilation: Dims) -> tuple[P, P]:
    """Values and int flat indices (row major in each unpadded input volume) of the first maximum."""
    n, c, *size = b.float_shape(x)
    out = out_size_nd(op, tuple(size), kernel, stride, padding, dilation)
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, float("-inf")), kernel, stride, dilation, out)
    k = b.float_argmax(cols, 2)  # [N, C, 1, *out]: the first maximum in kernel order, as PyTorch
    values = b.float_reshape(b.float_gather(2, cols, k), (n, c, *out))
    table = max_pool_index_nd(tuple(size), tuple(kernel), tuple(stride), tuple(padding), tuple(dilation), out)
    table_p = b.int_expand(int_table(b, table.reshape(1, 1, *table.shape), b.float_device(x)),
                           b.float_shape(cols))
    return values, b.int_reshape(b.int_gather(2, table_p, k), (n, c, *out))


def max_pool_nd_backward(b: Backend, x: P, output_grad: P, indices: P) -> P:
    """`output_grad` scattered (summed) at the flat `indices` of each input volume."""
    n, c, *size = b.float_shape(x)
    length = math.prod(b.float_shape(output_grad)[2:])
    grad = b.float_zeros((n, c, math.prod(size)), b.float_device(output_grad), b.float_get_dtype(output_grad))
    grad = b.float_scatter_add(
        2, grad, b.int_reshape(indices, (n, c, length)), b.float_reshape(output_grad, (n, c, length))
    )
    return b.float_reshape(grad, (n, c, *size))


def avg_pool_nd(b: Backend, op: str, x: P, kernel: Dims, stride: Dims, padding: Dims,
                count_include_pad: bool) -> P:
    """Average pooling of any spatial rank (zero padding, counted in the divisor or not)."""
    n, c, *size = b.float_shape(x)
    ones = (1,) * len(size)
    out = out_size_nd(op, tuple(size), kernel, stride, padding, ones)
    xp = pad_nd(b, x, padding, padding, 0.0)
    parts = [b.float_slice(xp, r) for r in regions_nd(n, c, kernel, stride, ones, out)]
    total = parts[0]
    for part in parts[1:]:
        total = b.float_add(total, part)
    return _divide_by_window_nd(b, total, tuple(size), kernel, stride, padding, count_include_pad)


def avg_pool_nd_backward(b: Backend, x: P, output_grad: P, kernel: Dims, stride: Dims, padding: Dims,
                         count_include_pad: bool) -> P:
    """Each window spreads its gradient evenly over what it averaged; col2im sums the spread."""
    n, c, *size = b.float_shape(x)
    share = _divide_by_window_nd(b, output_grad, tuple(size), kernel, stride, padding, count_include_pad)
    full = (n, c, *(s + 2 * p for s, p in zip(size, padding, strict=True)))
    folded = fold_nd(b, [share] * math.prod(kernel), full, kernel, stride, (1,) * len(size), share)
    return crop_nd(b, folded, padding, tuple(size))


@family("pool")
class PoolOps:
    """Pooling ops; every one has a default."""

    @default
    def max_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        """Padding counts as -inf."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        out = out_size("max_pool2d", (h, w), kernel_size, stride, padding, dilation)
        cols = unfold(b, pad2d(b, x, padding, float("-inf")), kernel_size, stride, dilation, out)
        return b.float_reshape(b.float_max_dim(cols, 2), (n, c, *out))

    @default(results=("float", "int"))
    def max_pool2d_with_indices(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[P, P]:
        """Output and int indices (flat ``h * W + w`` into each unpadded input plane)."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        out = out_size("max_pool2d_with_indices", (h, w), kernel_size, stride, padding, dilation)
        cols = unfold(b, pad2d(b, x, padding, float("-inf")), kernel_size, stride, dilation, out)
        k = b.float_argmax(cols, 2)  # [N, C, 1, OH, OW]: first maximum in kernel order, as PyTorch
        values = b.float_reshape(b.float_gather(2, cols, k), (n, c, *out))
        # Kernel position -> flat input index, through a (cached, so hashable) host table of the
        # window geometry.
        geometry = (tuple(kernel_size), tuple(stride), tuple(padding), tuple(dilation))
        table = max_pool_index((h, w), *geometry, out)
        table = b.int_expand(
            int_table(b, table.reshape(1, 1, *table.shape), b.float_device(x)), b.float_shape(cols)
        )
        indices = b.int_reshape(b.int_gather(2, table, k), (n, c, *out))
        return values, indices

    @default(backward_of="max_pool2d_with_indices")
    def max_pool2d_with_indices_backward(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair, output_grad: P, indices: P
    ) -> P:
        """Gradient with respect to `x`: `output_grad` scattered (summed) at `indices`."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        oh, ow = b.float_shape(output_grad)[2:]
        grad = b.float_zeros((n, c, h * w), b.float_device(output_grad), b.float_get_dtype(output_grad))
        grad = b.float_scatter_add(
            2, grad, b.int_reshape(indices, (n, c, oh * ow)), b.float_reshape(output_grad, (n, c, oh * ow))
        )
        return b.float_reshape(grad, (n, c, h, w))

    @default
    def avg_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool) -> P:
        b: Backend = self  # type: ignore[assignment]
        h, w = b.float_shape(x)[2:]
        out = out_size("avg_pool2d", (h, w), kernel_size, stride, padding, (1, 1))
        parts = window_slices(b, pad2d(b, x, padding, 0.0), kernel_size, stride, (1, 1), out)
        total = parts[0]
        for part in parts[1:]:
            total = b.float_add(total, part)
        return _divide_by_window(b, total, (h, w), kernel_size, stride, padding, count_include_pad)

    @default(backward_of="avg_pool2d")
    def avg_pool2d_backward(
        self, x: P, output_grad: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        # Each window spreads its output gradient evenly over the elements it averaged; fold
        # (col2im) sums the spread over overlapping windows, then the padding is cropped off.
        n, c, h, w = b.float_shape(x)
        share = _divide_by_window(b, output_grad, (h, w), kernel_size, stride, padding, count_include_pad)
        parts = [share] * (kernel_size[0] * kernel_size[1])
        full = (n, c, h + 2 * padding[0], w + 2 * padding[1])
        return crop2d(b, fold(b, parts, full, kernel_size, stride, (1, 1), share), padding, (h, w))

    @default
    def adaptive_avg_pool2d(self, x: P, output_size: Pair) -> P:
        """PyTorch's bins: ``start = floor(i*H/out)``, ``end = ceil((i+1)*H/out)``."""
        b: Backend = self  # type: ignore[assignment]
        # Averages are separable: pool the rows, then the columns (each weight is 1/len of its bin).
        return _adaptive_avg_dim(b, _adaptive_avg_dim(b, x, 2, output_size[0]), 3, output_size[1])

    @default(backward_of="adaptive_avg_pool2d")
    def adaptive_avg_pool2d_backward(self, x: P, output_grad: P) -> P:
        b: Backend = self  # type: ignore[assignment]
        h, w = b.float_shape(x)[2:]
        grad = _adaptive_avg_dim_backward(b, output_grad, 3, w)
        return _adaptive_avg_dim_backward(b, grad, 2, h)

    @default
    def max_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, dilation: int) -> P:
        b: Backend = self  # type: ignore[assignment]
        n, c, length = b.float_shape(x)
        out = b.max_pool2d(
            b.float_reshape(x, (n, c, 1, length)), (1, kernel_size), (1, stride), (0, padding), (1, dilation)
        )
        return b.float_reshape(out, (n, c, b.float_shape(out)[3]))

    @default(results=("float", "int"))
    def max_pool1d_with_indices(
        self, x: P, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[P, P]:
        b: Backend = self  # type: ignore[assignment]
        # With planes of height 1 the flat index h * W + w is just the position along L.
        n, c, length = b.float_shape(x)
        values, indices = b.max_pool2d_with_indices(
            b.float_reshape(x, (n, c, 1, length)), (1, kernel_size), (1, stride), (0, padding), (1, dilation)
        )
        out = b.float_shape(values)[3]
        return b.float_reshape(values, (n, c, out)), b.int_reshape(indices, (n, c, out))

    @default
    def avg_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, count_include_pad: bool) -> P:
        b: Backend = self  # type: ignore[assignment]
        n, c, length = b.float_shape(x)
        x2 = b.float_reshape(x, (n, c, 1, length))
        out = b.avg_pool2d(x2, (1, kernel_size), (1, stride), (0, padding), count_include_pad)
        return b.float_reshape(out, (n, c, b.float_shape(out)[3]))

    @default
    def adaptive_avg_pool1d(self, x: P, output_size: int) -> P:
        b: Backend = self  # type: ignore[assignment]
        return _adaptive_avg_dim(b, x, 2, output_size)

    @default
    def max_pool3d(self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple) -> P:
        """Max pooling of ``[N, C, D, H, W]`` (floor mode); padding counts as -inf and is at most
        half the kernel on each axis."""
        b: Backend = self  # type: ignore[assignment]
        return max_pool_nd(b, "max_pool3d", x, kernel_size, stride, padding, dilation)

    @default(results=("float", "int"))
    def max_pool3d_with_indices(
        self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple
    ) -> tuple[P, P]:
        """Output and int indices (flat ``d * H * W + h * W + w`` into each unpadded input volume)."""
        b: Backend = self  # type: ignore[assignment]
        op = "max_pool3d_with_indices"
        return max_pool_nd_with_indices(b, op, x, kernel_size, stride, padding, dilation)

    @default(backward_of="max_pool3d_with_indices")
    def max_pool3d_with_indices_backward(
        self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple, output_grad: P,
        indices: P,
    ) -> P:
        """Gradient with respect to `x`: `output_grad` scattered (summed) at `indices`."""
        b: Backend = self  # type: ignore[assignment]
        return max_pool_nd_backward(b, x, output_grad, indices)

    @default
    def avg_pool3d(
        self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, count_include_pad: bool
    ) -> P:
        """Average pooling of ``[N, C, D, H, W]`` (floor mode); with `count_include_pad` the zero
        padding counts in the divisor. Padding is at most half the kernel on each axis."""
        b: Backend = self  # type: ignore[assignment]
        return avg_pool_nd(b, "avg_pool3d", x, kernel_size, stride, padding, count_include_pad)

    @default(backward_of="avg_pool3d")
    def avg_pool3d_backward(
        self, x: P, output_grad: P, kernel_size: Triple, stride: Triple, padding: Triple,
        count_include_pad: bool,
    ) -> P:
        """Gradient of avg_pool3d with respect to `x`."""
        b: Backend = self  # type: ignore[assignment]
        return avg_pool_nd_backward(b, x, output_grad, kernel_size, stride, padding, count_include_pad)

    @default
    def adaptive_avg_pool3d(self, x: P, output_size: Triple) -> P:
        """PyTorch's bins per axis: ``start = floor(i*D/out)``, ``end = ceil((i+1)*D/out)``."""
        b: Backend = self  # type: ignore[assignment]
        # Averages are separable: pool depth, then rows, then columns.
        for dim, out in zip((2, 3, 4), output_size, strict=True):
            x = _adaptive_avg_dim(b, x, dim, out)
        return x

    @default(backward_of="adaptive_avg_pool3d")
    def adaptive_avg_pool3d_backward(self, x: P, output_grad: P) -> P:
        """Gradient of adaptive_avg_pool3d with respect to `x`."""
        b: Backend = self  # type: ignore[assignment]
        size = b.float_shape(x)[2:]
        grad = output_grad
        for dim in (4, 3, 2):
            grad = _adaptive_avg_dim_backward(b, grad, dim, size[dim - 2])
        return grad


def _divide_by_window(b: Backend, t: P, size: Pair, kernel: Pair, stride: Pair, padding: Pair,
                      count_include_pad: bool) -> P:
    """`t` ``[N, C, OH, OW]`` divided by each window's element count (padding counted or not)."""
    if count_include_pad or (padding[0] == 0 and padding[1] == 0):
        return b.float_div_scalar(t, float(kernel[0] * kernel[1]))
    counts = avg_pool_counts(size, tuple(kernel), tuple(stride), tuple(padding), b.float_shape(t)[2:])
    counts_p = float_table(b, counts.reshape(1, 1, *counts.shape), b.float_device(t), b.float_get_dtype(t))
    return b.float_div(t, counts_p)


def _adaptive_avg_dim(b: Backend, x: P, dim: int, out: int) -> P:
    """PyTorch's adaptive average pooling of `x` along `dim` to `out` bins."""
    shape = b.float_shape(x)
    size = shape[dim]
    if out == size:
        return x
    if size % out == 0:
        # Equal bins: a reshape and a sum, no gather.
        head, tail, width = shape[:dim], shape[dim + 1:], size // out
        sums = b.float_sum_dim(b.float_reshape(x, (*head, out, width, *tail)), dim + 1)
        return b.float_reshape(b.float_div_scalar(sums, float(width)), (*head, out, *tail))
    return resample(b, x, dim, resample_table("adaptive", size, out))


def _adaptive_avg_dim_backward(b: Backend, grad: P, dim: int, size: int) -> P:
    """The adjoint of `_adaptive_avg_dim`: `grad` spread back over `size` samples along `dim`."""
    shape = b.float_shape(grad)
    out = shape[dim]
    if out == size:
        return grad
    if size % out == 0:
        head, tail, width = shape[:dim], shape[dim + 1:], size // out
        spread = b.float_expand(b.float_reshape(grad, (*head, out, 1, *tail)), (*head, out, width, *tail))
        return b.float_div_scalar(b.float_reshape(spread, (*head, size, *tail)), float(width))
    return resample(b, grad, dim, adjoint_table("adaptive", size, out))
