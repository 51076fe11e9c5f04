"""Functional module ops: convolution, pooling, embedding, interpolation.

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

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import expect_same, kind_error
from burn.tensor.kind import Float, Int
from burn.tensor.module_3d import (
    ConvPadding,
    adaptive_avg_pool3d,
    avg_pool,
    avg_pool3d,
    conv3d,
    conv_padding,
    conv_transpose1d,
    conv_transpose3d,
    max_pool,
    max_pool3d,
    max_pool3d_with_indices,
    pad_input,
)
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


# -- argument normalization -------------------------------------------------------------------
def _int(op: str, name: str, value: Any, minimum: int) -> int:
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {value!r}") from None
    if v < minimum:
        raise ValueError(f"{op}: {name} must be >= {minimum}, got {v}")
    return v


def _pair(op: str, name: str, value: Any, minimum: int) -> Pair:
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != 2:
            raise ValueError(f"{op}: {name} must be an int or a pair, got {value!r}")
        return (_int(op, name, value[0], minimum), _int(op, name, value[1], minimum))
    v = _int(op, name, value, minimum)
    return (v, v)


def _input(op: str, x: Any, rank: int, layout: str) -> tuple[int, ...]:
    """The shape of `x`, checked to be a Float tensor of `rank`."""
    if not isinstance(x, TensorBase):
        raise TypeError(f"{op}: expects a burn.Tensor input, got {type(x).__name__}")
    if x._k is not Float:
        raise kind_error(op, x, "a Float input", "convert with .float() first")
    shape = x.shape
    if len(shape) != rank:
        raise ShapeError(f"{op}: the input must have rank {rank} ({layout}), got shape {shape}")
    return shape


def _param(
    op: str, x: TensorBase, t: Any, name: str, shape: tuple[int, ...] | None, rank: int
) -> tuple[int, ...]:
    """The shape of parameter `t` (a Float tensor of `x`'s backend, of `rank` dims or exactly `shape`)."""
    expect_same(op, x, t, Float, name)
    got = t.shape
    if (shape is not None and got != shape) or len(got) != rank:
        want = shape if shape is not None else f"rank {rank}"
        raise ShapeError(f"{op}: {name} must have shape {want}, got {got} (input shape {x.shape})")
    return got  # type: ignore[no-any-return]


def _out_size(op: str, size: int, kernel: int, stride: int, padding: int, dilation: int, axis: str) -> int:
    out = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    if out < 1:
        raise ShapeError(
            f"{op}: input {axis} {size} is too small for kernel {kernel} (dilation {dilation}, padding "
            f"{padding}, stride {stride}): the output would be empty"
        )
    return out


def _groups(op: str, c_in: int, c_out: int, groups: int) -> None:
    if c_in % groups or c_out % groups:
        raise ShapeError(
            f"{op}: {c_in} input and {c_out} output channels are not divisible by groups={groups}"
        )


def _pool_padding(op: str, kernel: Pair, padding: Pair) -> None:
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"{op}: padding {padding} must be at most half the kernel size {kernel}")


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
    op = "conv1d"
    _, c_in, length = _input(op, x, 3, "[N, C_in, L]")
    sym, before, after = conv_padding(op, padding, 1)
    x = pad_input(x, before, after)
    length = x.shape[2]
    s, p, d = (
        _int(op, "stride", stride, 1),
        sym[0],
        _int(op, "dilation", dilation, 1),
    )
    g = _int(op, "groups", groups, 1)
    c_out, c_per_group, k = _param(op, x, weight, "weight", None, 3)
    _check_conv_channels(op, c_in, c_out, c_per_group, g, x.shape, weight.shape)
    if bias is not None:
        _param(op, x, bias, "bias", (c_out,), 1)
    _out_size(op, length, k, s, p, d, "length")
    b = x._b
    return wrap(b.conv1d(x._p, weight._p, None if bias is None else bias._p, s, p, d, g), b, Float)


def _check_conv_channels(
    op: str, c_in: int, c_out: int, c_per_group: int, groups: int, x_shape: Any, w_shape: Any
) -> None:
    _groups(op, c_in, c_out, groups)
    if c_per_group * groups != c_in:
        raise ShapeError(
            f"{op}: weight {w_shape} expects {c_per_group * groups} input channels "
            f"({c_per_group} per group x {groups} groups), the input {x_shape} has {c_in}"
        )


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
    op = "conv2d"
    _, c_in, h, w = _input(op, x, 4, "[N, C_in, H, W]")
    sym, before, after = conv_padding(op, padding, 2)
    x = pad_input(x, before, after)
    h, w = x.shape[2:]
    s, p, d = (
        _pair(op, "stride", stride, 1),
        (sym[0], sym[1]),
        _pair(op, "dilation", dilation, 1),
    )
    g = _int(op, "groups", groups, 1)
    c_out, c_per_group, kh, kw = _param(op, x, weight, "weight", None, 4)
    _check_conv_channels(op, c_in, c_out, c_per_group, g, x.shape, weight.shape)
    if bias is not None:
        _param(op, x, bias, "bias", (c_out,), 1)
    _out_size(op, h, kh, s[0], p[0], d[0], "height")
    _out_size(op, w, kw, s[1], p[1], d[1], "width")
    b = x._b
    return wrap(b.conv2d(x._p, weight._p, None if bias is None else bias._p, s, p, d, g), b, Float)


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
    op = "conv_transpose2d"
    _, c_in, h, w = _input(op, x, 4, "[N, C_in, H, W]")
    s, p, d = (
        _pair(op, "stride", stride, 1),
        _pair(op, "padding", padding, 0),
        _pair(op, "dilation", dilation, 1),
    )
    po = _pair(op, "padding_out", padding_out, 0)
    g = _int(op, "groups", groups, 1)
    w_in, c_out_per_group, kh, kw = _param(op, x, weight, "weight", None, 4)
    if w_in != c_in:
        raise ShapeError(
            f"{op}: weight {weight.shape} expects {w_in} input channels, the input {x.shape} has {c_in}"
        )
    c_out = c_out_per_group * g
    _groups(op, c_in, c_out, g)
    if bias is not None:
        _param(op, x, bias, "bias", (c_out,), 1)
    for axis, i in (("height", 0), ("width", 1)):
        if po[i] >= max(s[i], d[i]):
            raise ValueError(f"{op}: padding_out {po} must be smaller than stride {s} or dilation {d}")
        size = (h, w)[i]
        out = (size - 1) * s[i] - 2 * p[i] + d[i] * ((kh, kw)[i] - 1) + po[i] + 1
        if out < 1:
            raise ShapeError(
                f"{op}: the output {axis} would be {out} for input shape {x.shape}, weight {weight.shape}"
            )
    b = x._b
    return wrap(
        b.conv_transpose2d(x._p, weight._p, None if bias is None else bias._p, s, p, po, d, g), b, Float
    )


# -- pooling ----------------------------------------------------------------------------------
def _max_pool2d_args(
    op: str,
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None,
    padding: IntOrPair,
    dilation: IntOrPair,
) -> tuple[Pair, Pair, Pair, Pair]:
    _, _, h, w = _input(op, x, 4, "[N, C, H, W]")
    k = _pair(op, "kernel_size", kernel_size, 1)
    s = k if stride is None else _pair(op, "stride", stride, 1)
    p, d = _pair(op, "padding", padding, 0), _pair(op, "dilation", dilation, 1)
    _pool_padding(op, k, p)
    _out_size(op, h, k[0], s[0], p[0], d[0], "height")
    _out_size(op, w, k[1], s[1], p[1], d[1], "width")
    return k, s, p, d


def _max_pool1d_args(
    op: str, x: Tensor, kernel_size: int, stride: int | None, padding: int, dilation: int
) -> tuple[int, int, int, int]:
    _, _, length = _input(op, x, 3, "[N, C, L]")
    k = _int(op, "kernel_size", kernel_size, 1)
    s = k if stride is None else _int(op, "stride", stride, 1)
    p, d = _int(op, "padding", padding, 0), _int(op, "dilation", dilation, 1)
    _pool_padding(op, (k, k), (p, p))
    _out_size(op, length, k, s, p, d, "length")
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
    _, _, h, w = _input(op, x, 4, "[N, C, H, W]")
    k = _pair(op, "kernel_size", kernel_size, 1)
    s = k if stride is None else _pair(op, "stride", stride, 1)
    p = _pair(op, "padding", padding, 0)
    _pool_padding(op, k, p)
    _out_size(op, h, k[0], s[0], p[0], 1, "height")
    _out_size(op, w, k[1], s[1], p[1], 1, "width")
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
    _, _, length = _input(op, x, 3, "[N, C, L]")
    k = _int(op, "kernel_size", kernel_size, 1)
    s = k if stride is None else _int(op, "stride", stride, 1)
    p = _int(op, "padding", padding, 0)
    _pool_padding(op, (k, k), (p, p))
    _out_size(op, length, k, s, p, 1, "length")
    return avg_pool(op, x, (k,), (s,), (p,), bool(count_include_pad), bool(ceil_mode))


def adaptive_avg_pool2d(x: Tensor, output_size: IntOrPair) -> Tensor:
    """Average pooling of ``[N, C, H, W]`` to ``output_size`` with PyTorch's bins."""
    op = "adaptive_avg_pool2d"
    shape = _input(op, x, 4, "[N, C, H, W]")
    if shape[2] == 0 or shape[3] == 0:
        raise ShapeError(f"{op}: the input {shape} has an empty spatial dim")
    out = _pair(op, "output_size", output_size, 1)
    return wrap(x._b.adaptive_avg_pool2d(x._p, out), x._b, Float)


def adaptive_avg_pool1d(x: Tensor, output_size: int) -> Tensor:
    """Average pooling of ``[N, C, L]`` to ``output_size`` with PyTorch's bins."""
    op = "adaptive_avg_pool1d"
    shape = _input(op, x, 3, "[N, C, L]")
    if shape[2] == 0:
        raise ShapeError(f"{op}: the input {shape} has an empty length")
    out = _int(op, "output_size", output_size, 1)
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
