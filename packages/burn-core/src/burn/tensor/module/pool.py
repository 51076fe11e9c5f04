"""Functional pooling (the pool family): max pooling (with or without the indices of the maxima),
average pooling and adaptive average pooling, in 1-D, 2-D and 3-D.

Each function checks kinds, ranks and sizes with one check for every rank, then calls the backend
op of its rank (`burn.backend.ops.pool`). Layouts: inputs ``[N, C, L]``, ``[N, C, H, W]`` or
``[N, C, D, H, W]``; sizes are ints or one int per spatial axis; `stride` defaults to the kernel
size; padding is at most half the kernel.

``ceil_mode`` (PyTorch's) is written with the contract's floor-mode ops, so every backend has it:
the end of each axis is padded with what the last window lacks (-inf for max, zeros for average,
`burn.tensor.module._padding.ceil_extra`) and the floor-mode op runs; average pooling then
rescales each window to PyTorch's divisor (elements in the input, plus those in the padding with
`count_include_pad`, never those past the padding), and max pooling's indices are mapped back
into the unpadded input.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.ones((1, 2, 5, 5, 5))  # doctest: +SKIP
    >>> F.max_pool3d(x, 2, ceil_mode=True).shape, F.avg_pool3d(x, 2).shape  # doctest: +SKIP
    ((1, 2, 3, 3, 3), (1, 2, 2, 2, 2))
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.tables import float_table
from burn.errors import ShapeError
from burn.foundations.kind import Float, Int
from burn.tensor._base import wrap
from burn.tensor.module._args import (
    Dims,
    IntOrPair,
    IntOrTriple,
    as_op_args,
    dims,
    input_of_rank,
    layout,
    out_sizes,
)
from burn.tensor.module._padding import ceil_extra, pad_input

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.tensor.tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
]


# -- checks of every rank ------------------------------------------------------------------------
def _pool_args(
    op: str, rank: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
    ceil_mode: bool,
) -> tuple[Dims, Dims, Dims, Dims]:  # fmt: skip
    """Checks a pooling of any rank (`stride` None: the kernel size); returns kernel, stride,
    padding and dilation. In ceil mode a kernel longer than the padded input is one window over
    what there is (PyTorch's and onnxruntime's reading, ONNX's ceil-mode output size)."""
    input_of_rank(op, x, rank + 2, layout(rank))
    k = dims(op, "kernel_size", kernel_size, rank, 1)
    s = k if stride is None else dims(op, "stride", stride, rank, 1)
    p, d = dims(op, "padding", padding, rank, 0), dims(op, "dilation", dilation, rank, 1)
    if any(pi > ki // 2 for ki, pi in zip(k, p, strict=True)):
        raise ValueError(f"{op}: padding {p} must be at most half the kernel size {k}")
    size = tuple(x.shape[2:])
    if ceil_mode:
        # A kernel longer than the padded input makes one window, starting at the left padding;
        # what it holds past the right padding never counts (zeros out of the divisor, -inf), so
        # it is cut to the padded input, rather than the input padded to the kernel: 1280x1280
        # per channel for EfficientNet's 7x7 map.
        k = tuple(min(ki, n + 2 * pi) if di == 1 else ki for ki, n, pi, di in zip(k, size, p, d, strict=True))
        # the ceil-mode output is the floor-mode output of the end-extended input
        size = tuple(n + e for n, e in zip(size, ceil_extra(size, k, s, p, d), strict=True))
    out_sizes(op, size, k, s, p, d)
    return k, s, p, d


# -- ceil mode, for every rank -------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _ceil_avg_scale(size: Dims, kernel: Dims, stride: Dims, padding: Dims, out: Dims,
                    count_include_pad: bool) -> np.ndarray:
    """``[*out]``: ``prod(kernel) / divisor`` per window, PyTorch's ceil-mode divisor."""
    scale = np.ones((), dtype=np.float64)
    for n, k, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        scale = np.multiply.outer(scale, k / count.astype(np.float64))
    scale.setflags(write=False)
    return scale


def _unpad_indices(b: Backend, indices: Any, padded: Dims, size: Dims) -> Any:
    """Flat indices into volumes of shape `padded` (grown at the end of each axis) as flat indices
    into the `size` volumes they came from."""
    if padded == size:
        return indices
    rest = indices
    result = None
    for axis in range(len(size)):
        step = math.prod(padded[axis + 1:])
        coord = b.int_div_scalar(rest, step) if step > 1 else rest
        if step > 1:
            rest = b.int_sub(rest, b.int_mul_scalar(coord, step))
        term = b.int_mul_scalar(coord, math.prod(size[axis + 1:])) if axis < len(size) - 1 else coord
        result = term if result is None else b.int_add(result, term)
    return result


def max_pool(op: str, x: Tensor, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims,
             ceil_mode: bool, with_indices: bool) -> Any:
    """Max pooling of any rank (arguments already checked) with PyTorch's `ceil_mode`; returns
    the values, or ``(values, indices)``."""
    b, rank = x._b, len(kernel)
    size = tuple(x.shape[2:])
    extra = ceil_extra(size, kernel, stride, padding, dilation) if ceil_mode else (0,) * rank
    xp = pad_input(x, (0,) * rank, extra, float("-inf"))
    name = {1: "max_pool1d", 2: "max_pool2d", 3: "max_pool3d"}[rank]
    args = as_op_args(rank, kernel, stride, padding, dilation)
    if not with_indices:
        return wrap(getattr(b, name)(xp._p, *args), b, Float)
    values, indices = getattr(b, name + "_with_indices")(xp._p, *args)
    padded = tuple(s + e for s, e in zip(size, extra, strict=True))
    return wrap(values, b, Float), wrap(_unpad_indices(b, indices, padded, size), b, Int)


def avg_pool(op: str, x: Tensor, kernel: Dims, stride: Dims, padding: Dims, count_include_pad: bool,
             ceil_mode: bool) -> Tensor:
    """Average pooling of any rank (arguments already checked) with PyTorch's `ceil_mode`."""
    b, rank = x._b, len(kernel)
    size = tuple(x.shape[2:])
    name = {1: "avg_pool1d", 2: "avg_pool2d", 3: "avg_pool3d"}[rank]
    ones = (1,) * rank
    extra = ceil_extra(size, kernel, stride, padding, ones) if ceil_mode else (0,) * rank
    if not any(extra):
        args = as_op_args(rank, kernel, stride, padding)
        return wrap(getattr(b, name)(x._p, *args, bool(count_include_pad)), b, Float)
    # The floor-mode op over the zero-extended input, counting every element, is sum / prod(kernel);
    # one multiply by prod(kernel) / divisor gives PyTorch's divisor for every window.
    xp = pad_input(x, (0,) * rank, extra, 0.0)
    out = getattr(b, name)(xp._p, *as_op_args(rank, kernel, stride, padding), True)
    shape = tuple(b.float_shape(out)[2:])
    scale = _ceil_avg_scale(size, kernel, stride, padding, shape, bool(count_include_pad))
    scale_p = float_table(b, scale.reshape(1, 1, *shape), b.float_device(out), b.float_get_dtype(out))
    return wrap(b.float_mul(out, scale_p), b, Float)


def _max_pool(op: str, rank: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, with_indices: bool) -> Any:
    """Checks a max pooling of any rank and runs it; the values, or ``(values, indices)``."""
    k, s, p, d = _pool_args(op, rank, x, kernel_size, stride, padding, dilation, ceil_mode)
    return max_pool(op, x, k, s, p, d, bool(ceil_mode), with_indices)


def _avg_pool(op: str, rank: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
              count_include_pad: bool, ceil_mode: bool) -> Tensor:
    """Checks an average pooling of any rank and runs it."""
    k, s, p, _ = _pool_args(op, rank, x, kernel_size, stride, padding, 1, ceil_mode)
    return avg_pool(op, x, k, s, p, bool(count_include_pad), bool(ceil_mode))


def _adaptive_avg_pool(op: str, rank: int, x: Tensor, output_size: Any) -> Tensor:
    """Checks an adaptive average pooling of any rank and runs the backend's op of `rank`."""
    shape = input_of_rank(op, x, rank + 2, layout(rank))
    if 0 in shape[2:]:
        raise ShapeError(f"{op}: the input {shape} has an empty spatial dim")
    out = dims(op, "output_size", output_size, rank, 1)
    b = x._b
    return wrap(getattr(b, f"adaptive_avg_pool{rank}d")(x._p, *as_op_args(rank, out)), b, Float)


# -- max pooling ------------------------------------------------------------------------------
def max_pool1d(
    x: Tensor,
    kernel_size: int,
    stride: int | None = None,
    padding: int = 0,
    dilation: int = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """1-D max pooling of ``[N, C, L]``; `stride` defaults to the kernel size; `ceil_mode` as
    PyTorch's."""
    return _max_pool("max_pool1d", 1, x, kernel_size, stride, padding, dilation, ceil_mode, False)


def max_pool1d_with_indices(
    x: Tensor,
    kernel_size: int,
    stride: int | None = None,
    padding: int = 0,
    dilation: int = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """`max_pool1d` and the Int indices of the maxima along each input row."""
    op = "max_pool1d_with_indices"
    return _max_pool(op, 1, x, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d(
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """2-D max pooling of ``[N, C, H, W]``; `stride` defaults to the kernel size; padding
    counts as -inf and is at most half the kernel; `ceil_mode` as PyTorch's (a last partial
    window when it starts inside the input or the left padding)."""
    return _max_pool("max_pool2d", 2, x, kernel_size, stride, padding, dilation, ceil_mode, False)


def max_pool2d_with_indices(
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """`max_pool2d` and the Int indices of the maxima (flat ``h * W + w`` in each input plane)."""
    op = "max_pool2d_with_indices"
    return _max_pool(op, 2, x, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d(
    x: Tensor,
    kernel_size: IntOrTriple,
    stride: IntOrTriple | None = None,
    padding: IntOrTriple = 0,
    dilation: IntOrTriple = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """3-D max pooling of ``[N, C, D, H, W]``; `stride` defaults to the kernel size; padding counts
    as -inf and is at most half the kernel; `ceil_mode` as PyTorch's.

    Example:
        >>> max_pool3d(x, 2, ceil_mode=True).shape  # x [1, 1, 5, 5, 5]  # doctest: +SKIP
        (1, 1, 3, 3, 3)
    """
    return _max_pool("max_pool3d", 3, x, kernel_size, stride, padding, dilation, ceil_mode, False)


def max_pool3d_with_indices(
    x: Tensor,
    kernel_size: IntOrTriple,
    stride: IntOrTriple | None = None,
    padding: IntOrTriple = 0,
    dilation: IntOrTriple = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """`max_pool3d` and the Int indices of the maxima (flat ``d * H * W + h * W + w`` in each input
    volume, as PyTorch's)."""
    op = "max_pool3d_with_indices"
    return _max_pool(op, 3, x, kernel_size, stride, padding, dilation, ceil_mode, True)


# -- average pooling --------------------------------------------------------------------------
def avg_pool1d(
    x: Tensor,
    kernel_size: int,
    stride: int | None = None,
    padding: int = 0,
    count_include_pad: bool = True,
    ceil_mode: bool = False,
) -> Tensor:
    """1-D average pooling of ``[N, C, L]``; `count_include_pad` and `ceil_mode` as in `avg_pool2d`."""
    return _avg_pool("avg_pool1d", 1, x, kernel_size, stride, padding, count_include_pad, ceil_mode)


def avg_pool2d(
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    count_include_pad: bool = True,
    ceil_mode: bool = False,
) -> Tensor:
    """2-D average pooling of ``[N, C, H, W]``; with `count_include_pad` the zero padding counts
    in the divisor (PyTorch's default); `ceil_mode` as PyTorch's (a last partial window divides
    by what it covers of the input, and of the padding with `count_include_pad`)."""
    return _avg_pool("avg_pool2d", 2, x, kernel_size, stride, padding, count_include_pad, ceil_mode)


def avg_pool3d(
    x: Tensor,
    kernel_size: IntOrTriple,
    stride: IntOrTriple | None = None,
    padding: IntOrTriple = 0,
    count_include_pad: bool = True,
    ceil_mode: bool = False,
) -> Tensor:
    """3-D average pooling of ``[N, C, D, H, W]``; with `count_include_pad` the zero padding counts
    in the divisor (PyTorch's default); `ceil_mode` as PyTorch's.

    Example:
        >>> avg_pool3d(x, (1, 2, 2)).shape  # x [1, 3, 4, 6, 6]  # doctest: +SKIP
        (1, 3, 4, 3, 3)
    """
    return _avg_pool("avg_pool3d", 3, x, kernel_size, stride, padding, count_include_pad, ceil_mode)


# -- adaptive average pooling -----------------------------------------------------------------
def adaptive_avg_pool1d(x: Tensor, output_size: int) -> Tensor:
    """Average pooling of ``[N, C, L]`` to ``output_size`` with PyTorch's bins."""
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, x, output_size)


def adaptive_avg_pool2d(x: Tensor, output_size: IntOrPair) -> Tensor:
    """Average pooling of ``[N, C, H, W]`` to ``output_size`` with PyTorch's bins."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, x, output_size)


def adaptive_avg_pool3d(x: Tensor, output_size: IntOrTriple) -> Tensor:
    """Average pooling of ``[N, C, D, H, W]`` to ``output_size`` with PyTorch's bins.

    Example:
        >>> adaptive_avg_pool3d(x, (1, 2, 2)).shape  # x [2, 3, 5, 7, 7]  # doctest: +SKIP
        (2, 3, 1, 2, 2)
    """
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, x, output_size)
