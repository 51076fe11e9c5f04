"""Functional module ops: convolution, pooling, embedding, interpolation, cross-entropy, LSTM cell.

Each function normalizes its arguments (an int or a pair for 2-D sizes), validates kinds, ranks,
channel counts and output sizes with a `ShapeError` that names the op and the shapes, then calls
the backend's module op (layouts in `burn.backend.module_ops`: inputs ``[N, C, H, W]`` or
``[N, C, L]``, conv weights ``[C_out, C_in / groups, KH, KW]``).

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.ones((1, 3, 8, 8)); w = Tensor.ones((4, 3, 3, 3))  # doctest: +SKIP
    >>> F.conv2d(x, w, padding=1).shape, F.max_pool2d(x, 2).shape  # doctest: +SKIP
    ((1, 4, 8, 8), (1, 3, 4, 4))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.foundations.kind import Float, Int
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import expect_same, kind_error
from burn.tensor.module_3d import (
    ConvPadding,
    _adaptive_args,
    _conv_args,
    _conv_transpose,
    _dims,
    _pool_args,
    _unwrap,
    adaptive_avg_pool3d,
    avg_pool,
    avg_pool3d,
    conv3d,
    conv_transpose1d,
    conv_transpose3d,
    max_pool,
    max_pool3d,
    max_pool3d_with_indices,
)
from burn.tensor.module_loss import cross_entropy
from burn.tensor.module_rnn import gru_cell, lstm_cell
from burn.tensor.module_sampling import (
    cross_entropy_with_logits,
    grid_sample_2d,
    interpolate,
    interpolate1d,
    linear,
)

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "deform_conv2d",
    "embedding",
    "fold4d",
    "interpolate",
    "interpolate1d",
    "grid_sample_2d",
    "linear",
    "gru_cell",
    "lstm_cell",
    "cross_entropy",
    "cross_entropy_with_logits",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "unfold4d",
]

Pair = tuple[int, int]
IntOrPair = int | Sequence[int]


def _pair_of(d: tuple[int, ...]) -> Pair:
    return (d[0], d[1])


# -- argument normalization (the checks live once, for every rank, in `module_3d`) -------------
def _pair(op: str, name: str, value: Any, minimum: int) -> Pair:
    """An int (for both axes) or a pair of ints, each at least `minimum`."""
    h, w = _dims(op, name, value, 2, minimum)
    return (h, w)


# -- convolution ------------------------------------------------------------------------------
def conv1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int = 1,
    padding: ConvPadding = 0,
    dilation: int = 1,
    groups: int = 1,
) -> Tensor:
    """1-D convolution: ``x [N, C_in, L]``, ``weight [C_out, C_in / groups, K]``, ``bias [C_out]``
    -> ``[N, C_out, L_out]``; `padding` is an int or a ``(left, right)`` pair (asymmetric: the
    difference is zero-padded explicitly)."""
    x, s, p, d, g = _conv_args("conv1d", 1, x, weight, bias, stride, padding, dilation, groups)
    b = x._b
    return wrap(b.conv1d(x._p, weight._p, _unwrap(bias), s[0], p[0], d[0], g), b, Float)


def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: ConvPadding = 0,
    dilation: IntOrPair = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution: ``x [N, C_in, H, W]``, ``weight [C_out, C_in / groups, KH, KW]``,
    ``bias [C_out]`` -> ``[N, C_out, H_out, W_out]``; sizes are ints or (height, width) pairs.
    `padding` may also be ``((top, bottom), (left, right))`` (asymmetric: the difference is
    zero-padded explicitly, then the convolution runs with the common part).

    Raises:
        ShapeError: mismatched channels, groups, or an empty output.
    """
    x, s, p, d, g = _conv_args("conv2d", 2, x, weight, bias, stride, padding, dilation, groups)
    b = x._b
    return wrap(b.conv2d(x._p, weight._p, _unwrap(bias), _pair_of(s), _pair_of(p), _pair_of(d), g), b, Float)


def conv_transpose2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: IntOrPair = 0,
    padding_out: IntOrPair = 0,
    dilation: IntOrPair = 1,
    groups: int = 1,
) -> Tensor:
    """2-D transposed convolution: ``x [N, C_in, H, W]``, ``weight [C_in, C_out / groups, KH, KW]``
    -> ``[N, C_out, H_out, W_out]`` with
    ``H_out = (H - 1) * stride - 2 * padding + dilation * (KH - 1) + padding_out + 1``."""
    s, p, po, d, g = _conv_transpose(
        "conv_transpose2d", 2, x, weight, bias, stride, padding, padding_out, dilation, groups
    )
    b = x._b
    out = b.conv_transpose2d(
        x._p, weight._p, _unwrap(bias), _pair_of(s), _pair_of(p), _pair_of(po), _pair_of(d), g
    )
    return wrap(out, b, Float)


# -- pooling ----------------------------------------------------------------------------------
def _max_pool2d_args(
    op: str,
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None,
    padding: IntOrPair,
    dilation: IntOrPair,
) -> tuple[Pair, Pair, Pair, Pair]:
    k, s, p, d = _pool_args(op, 2, x, kernel_size, stride, padding, dilation)
    return _pair_of(k), _pair_of(s), _pair_of(p), _pair_of(d)


def _max_pool1d_args(
    op: str, x: Tensor, kernel_size: int, stride: int | None, padding: int, dilation: int
) -> tuple[int, int, int, int]:
    (k,), (s,), (p,), (d,) = _pool_args(op, 1, x, kernel_size, stride, padding, dilation)
    return k, s, p, d


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
    k, s, p, d = _max_pool2d_args("max_pool2d", x, kernel_size, stride, padding, dilation)
    if ceil_mode:
        return max_pool("max_pool2d", x, k, s, p, d, True, False)  # type: ignore[no-any-return]
    return wrap(x._b.max_pool2d(x._p, k, s, p, d), x._b, Float)


def max_pool2d_with_indices(
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """`max_pool2d` and the Int indices of the maxima (flat ``h * W + w`` in each input plane)."""
    k, s, p, d = _max_pool2d_args("max_pool2d_with_indices", x, kernel_size, stride, padding, dilation)
    if ceil_mode:
        return max_pool("max_pool2d_with_indices", x, k, s, p, d, True, True)  # type: ignore[no-any-return]
    out, indices = x._b.max_pool2d_with_indices(x._p, k, s, p, d)
    return wrap(out, x._b, Float), wrap(indices, x._b, Int)


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
    k, s, p, d = _max_pool1d_args("max_pool1d", x, kernel_size, stride, padding, dilation)
    if ceil_mode:
        return max_pool("max_pool1d", x, (k,), (s,), (p,), (d,), True, False)  # type: ignore[no-any-return]
    return wrap(x._b.max_pool1d(x._p, k, s, p, d), x._b, Float)


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
    k, s, p, d = _max_pool1d_args(op, x, kernel_size, stride, padding, dilation)
    if ceil_mode:
        return max_pool(op, x, (k,), (s,), (p,), (d,), True, True)  # type: ignore[no-any-return]
    out, indices = x._b.max_pool1d_with_indices(x._p, k, s, p, d)
    return wrap(out, x._b, Float), wrap(indices, x._b, Int)


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
    op = "avg_pool2d"
    k, s, p, _ = _pool_args(op, 2, x, kernel_size, stride, padding, 1)
    return avg_pool(op, x, k, s, p, bool(count_include_pad), bool(ceil_mode))


def avg_pool1d(
    x: Tensor,
    kernel_size: int,
    stride: int | None = None,
    padding: int = 0,
    count_include_pad: bool = True,
    ceil_mode: bool = False,
) -> Tensor:
    """1-D average pooling of ``[N, C, L]``; `count_include_pad` and `ceil_mode` as in `avg_pool2d`."""
    op = "avg_pool1d"
    k, s, p, _ = _pool_args(op, 1, x, kernel_size, stride, padding, 1)
    return avg_pool(op, x, k, s, p, bool(count_include_pad), bool(ceil_mode))


def adaptive_avg_pool2d(x: Tensor, output_size: IntOrPair) -> Tensor:
    """Average pooling of ``[N, C, H, W]`` to ``output_size`` with PyTorch's bins."""
    out = _pair_of(_adaptive_args("adaptive_avg_pool2d", 2, x, output_size))
    return wrap(x._b.adaptive_avg_pool2d(x._p, out), x._b, Float)


def adaptive_avg_pool1d(x: Tensor, output_size: int) -> Tensor:
    """Average pooling of ``[N, C, L]`` to ``output_size`` with PyTorch's bins."""
    (out,) = _adaptive_args("adaptive_avg_pool1d", 1, x, output_size)
    return wrap(x._b.adaptive_avg_pool1d(x._p, out), x._b, Float)


# -- embedding and interpolation --------------------------------------------------------------
def embedding(weights: Tensor, indices: Tensor) -> Tensor:
    """Rows of ``weights [V, D]`` picked by the Int tensor `indices` (any shape) -> ``[..., D]``."""
    op = "embedding"
    if not isinstance(weights, TensorBase) or weights._k is not Float:
        if isinstance(weights, TensorBase):
            raise kind_error(op, weights, "Float weights")
        raise TypeError(f"{op}: weights must be a burn.Tensor, got {type(weights).__name__}")
    if len(weights.shape) != 2:
        raise ShapeError(f"{op}: weights must have shape [V, D], got {weights.shape}")
    expect_same(op, weights, indices, Int, "indices")
    return wrap(weights._b.embedding(weights._p, indices._p), weights._b, Float)


# Deformable convolution, im2col and col2im live in their own module (it imports the helpers above).
from burn.tensor.module_window import deform_conv2d, fold4d, unfold4d  # noqa: E402
