"""Functional convolutions (the conv family): `conv1d` to `conv3d`, `conv_transpose1d` to
`conv_transpose3d`, the deformable `deform_conv2d`, and im2col / col2im (`unfold4d`, `fold4d`).

Each function checks kinds, ranks, channel counts and output sizes with a `ShapeError` that names
the op and the shapes (one check for every rank), then calls the backend op of its rank
(`burn.backend.ops.conv`). Layouts: inputs ``[N, C_in, L]``, ``[N, C_in, H, W]`` or
``[N, C_in, D, H, W]``; conv weights ``[C_out, C_in / groups, *kernel]``, transposed-conv weights
``[C_in, C_out / groups, *kernel]``; sizes are ints or one int per spatial axis. A convolution's
`padding` may also give one ``(before, after)`` pair per axis: the difference is zero-padded
explicitly, then the backend op runs with the common part (`burn.tensor.module._padding`).

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.ones((1, 2, 4, 4))  # doctest: +SKIP
    >>> F.unfold4d(x, 2).shape, F.fold4d(F.unfold4d(x, 2), (4, 4), 2).shape  # doctest: +SKIP
    ((1, 8, 9), (1, 2, 4, 4))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.ops.conv import check_activation
from burn.errors import ShapeError
from burn.foundations.kind import Float
from burn.tensor import autocast as _amp
from burn.tensor._base import wrap
from burn.tensor.module._args import (
    AXES,
    IntOrPair,
    IntOrTriple,
    Pair,
    as_op_args,
    dims,
    input_of_rank,
    int_arg,
    layout,
    out_sizes,
    pair,
    param,
    unwrap,
)
from burn.tensor.module._padding import ConvPadding, conv_padding, pad_input

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "deform_conv2d",
    "fold4d",
    "unfold4d",
]


# -- checks of every rank ------------------------------------------------------------------------
def _conv_groups(op: str, c_in: int, c_out: int, groups: int) -> None:
    if c_in % groups or c_out % groups:
        raise ShapeError(
            f"{op}: {c_in} input and {c_out} output channels are not divisible by groups={groups}"
        )


def _conv_channels(op: str, c_in: int, c_out: int, c_per_group: int, groups: int, x_shape: Any,
                   w_shape: Any) -> None:
    _conv_groups(op, c_in, c_out, groups)
    if c_per_group * groups != c_in:
        raise ShapeError(
            f"{op}: weight {w_shape} expects {c_per_group * groups} input channels "
            f"({c_per_group} per group x {groups} groups), the input {x_shape} has {c_in}"
        )


# Resolved arguments of recent convolutions, by their shapes and options: a model calls each layer
# with the same ones every step, and resolving them (ints to tuples, padding pairs, channel and
# output-size checks) cost about as much as a small backend convolution (26 us against 24 us,
# docs/benchmarks-log.md "conv epilogues"). Bounded: a workload of ever-new shapes clears it.
_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_PLANS_MAX = 1024


def _conv_plan(
    op: str, rank: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: ConvPadding,
    dilation: Any, groups: int, activation: str,
) -> tuple[Any, ...]:
    """Every check of a convolution of any rank; returns ``(backend op, its args after the
    tensors, (extra before, extra after) or None)``: for a 2-D one with asymmetric padding or an
    `activation`, ``conv2d_fused`` with four sides, else the symmetric op of `rank`, with the
    asymmetric part to pad explicitly."""
    input_of_rank(op, x, rank + 2, layout(rank, "C_in"))
    s, d = dims(op, "stride", stride, rank, 1), dims(op, "dilation", dilation, rank, 1)
    p, before, after = conv_padding(op, padding, rank)
    g = int_arg(op, "groups", groups, 1)
    c_out, c_per_group, *kernel = param(op, x, weight, "weight", None, rank + 2)
    _conv_channels(op, x.shape[1], c_out, c_per_group, g, x.shape, weight.shape)
    if bias is not None:
        param(op, x, bias, "bias", (c_out,), 1)
    padded = tuple(n + lo + hi for n, lo, hi in zip(x.shape[2:], before, after, strict=True))
    out_sizes(op, padded, tuple(kernel), s, p, d)
    act = check_activation(op, activation)
    if rank == 2 and (act != "none" or any(before) or any(after)):
        sides = (p[0] + before[0], p[0] + after[0], p[1] + before[1], p[1] + after[1])
        return "conv2d_fused", (s, sides, d, g, activation), None
    explicit = (before, after) if any(before) or any(after) else None
    return f"conv{rank}d", (*as_op_args(rank, s, p, d), g), explicit


def _conv(
    op: str, rank: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: ConvPadding,
    dilation: Any, groups: int, activation: str = "none",
) -> Tensor:
    """A convolution of any rank: checks it and runs the backend's op of `rank` with the stride,
    symmetric padding, dilation and groups, the asymmetric part of `padding` padded explicitly;
    a 2-D one with asymmetric padding or an `activation` runs the backend's ``conv2d_fused``.
    The checks run once per shapes and options (`_PLANS`); the kinds and backends every call."""
    plan = None
    try:
        key = (op, x.shape, weight.shape, None if bias is None else bias.shape, stride, padding, dilation,
               groups, activation)
        plan = _PLANS.get(key)
    except (AttributeError, TypeError):  # not tensors, or options in lists: checked in full
        key = None
    same = (
        plan is not None
        and x._k is Float
        and weight._k is Float
        and weight._b is x._b
        and (bias is None or (bias._k is Float and bias._b is x._b))
    )
    if not same:
        plan = _conv_plan(op, rank, x, weight, bias, stride, padding, dilation, groups, activation)
        if key is not None:
            if len(_PLANS) >= _PLANS_MAX:
                _PLANS.clear()
            _PLANS[key] = plan
    assert plan is not None
    name, args, explicit = plan
    if _amp.active:
        x, weight, bias = _amp.low_precision(op, x, weight, bias)
    if explicit is not None:
        x = pad_input(x, *explicit)
    b = x._b
    return wrap(getattr(b, name)(x._p, weight._p, None if bias is None else bias._p, *args), b, Float)


def _conv_transpose(
    op: str, rank: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
    padding_out: Any, dilation: Any, groups: int,
) -> Tensor:
    """A transposed convolution of any rank: checks it and runs the backend's op of `rank` with
    the stride, padding, padding_out, dilation and groups."""
    _, c_in, *size = input_of_rank(op, x, rank + 2, layout(rank, "C_in"))
    s, p = dims(op, "stride", stride, rank, 1), dims(op, "padding", padding, rank, 0)
    po, d = dims(op, "padding_out", padding_out, rank, 0), dims(op, "dilation", dilation, rank, 1)
    g = int_arg(op, "groups", groups, 1)
    w_in, c_out_per_group, *kernel = param(op, x, weight, "weight", None, rank + 2)
    if w_in != c_in:
        raise ShapeError(
            f"{op}: weight {weight.shape} expects {w_in} input channels, the input {x.shape} has {c_in}"
        )
    c_out = c_out_per_group * g
    _conv_groups(op, c_in, c_out, g)
    if bias is not None:
        param(op, x, bias, "bias", (c_out,), 1)
    for i, axis in enumerate(AXES[rank]):
        if po[i] >= max(s[i], d[i]):
            raise ValueError(f"{op}: padding_out {po} must be smaller than stride {s} or dilation {d}")
        out = (size[i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + po[i] + 1
        if out < 1:
            raise ShapeError(
                f"{op}: the output {axis} would be {out} for input shape {x.shape}, weight {weight.shape}"
            )
    if _amp.active:
        x, weight, bias = _amp.low_precision(op, x, weight, bias)
    b = x._b
    args = as_op_args(rank, s, p, po, d)
    return wrap(getattr(b, f"conv_transpose{rank}d")(x._p, weight._p, unwrap(bias), *args, g), b, Float)


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
    return _conv("conv1d", 1, x, weight, bias, stride, padding, dilation, groups)


def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: ConvPadding = 0,
    dilation: IntOrPair = 1,
    groups: int = 1,
    activation: str = "none",
) -> Tensor:
    """2-D convolution: ``x [N, C_in, H, W]``, ``weight [C_out, C_in / groups, KH, KW]``,
    ``bias [C_out]`` -> ``[N, C_out, H_out, W_out]``; sizes are ints or (height, width) pairs.
    `padding` may also be ``((top, bottom), (left, right))`` (asymmetric: the backend's
    ``conv2d_fused`` takes the four sides). `activation` (``"relu"``, ``"relu6"``,
    ``"hardswish"``, ``"hardsigmoid"``, ``"silu"``, ``"sigmoid"``, ``"gelu"`` or ``"none"``) is
    applied to the result in the same op: on burn-ndarray in the convolution's output pass.

    Example:
        >>> import burn
        >>> from burn import Tensor
        >>> from burn.tensor import module as F
        >>> B = burn.backend("ndarray")
        >>> x, w = Tensor.ones((1, 1, 3, 3), backend=B), -Tensor.ones((1, 1, 2, 2), backend=B)
        >>> F.conv2d(x, w).sum().item(), F.conv2d(x, w, activation="relu").sum().item()
        (-16.0, 0.0)

    Raises:
        ShapeError: mismatched channels, groups, or an empty output.
        ValueError: an unknown `activation`.
    """
    return _conv("conv2d", 2, x, weight, bias, stride, padding, dilation, groups, activation)


def conv3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrTriple = 1,
    padding: ConvPadding = 0,
    dilation: IntOrTriple = 1,
    groups: int = 1,
) -> Tensor:
    """3-D convolution: ``x [N, C_in, D, H, W]``, ``weight [C_out, C_in / groups, KD, KH, KW]``,
    ``bias [C_out]`` -> ``[N, C_out, D_out, H_out, W_out]``.

    `padding` is an int, a ``(depth, height, width)`` triple, or three ``(before, after)`` pairs
    (asymmetric: the difference is zero-padded explicitly).

    Raises:
        ShapeError: mismatched channels, groups, or an empty output.

    Example:
        >>> y = conv3d(x, w, padding=((1, 0), 1, 1))  # doctest: +SKIP
    """
    return _conv("conv3d", 3, x, weight, bias, stride, padding, dilation, groups)


# -- transposed convolution -------------------------------------------------------------------
def conv_transpose1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int = 1,
    padding: int = 0,
    padding_out: int = 0,
    dilation: int = 1,
    groups: int = 1,
) -> Tensor:
    """1-D transposed convolution: ``x [N, C_in, L]``, ``weight [C_in, C_out / groups, K]`` ->
    ``[N, C_out, L_out]`` with ``L_out = (L - 1) * stride - 2 * padding + dilation * (K - 1) +
    padding_out + 1``; `padding_out` must be smaller than `stride` or `dilation`.

    Example:
        >>> # x [1, 4, 5], w [4, 2, 3]
        >>> conv_transpose1d(x, w, stride=2, padding_out=1).shape  # doctest: +SKIP
        (1, 2, 12)
    """
    op = "conv_transpose1d"
    return _conv_transpose(op, 1, x, weight, bias, stride, padding, padding_out, dilation, groups)


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
    return _conv_transpose(op, 2, x, weight, bias, stride, padding, padding_out, dilation, groups)


def conv_transpose3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrTriple = 1,
    padding: IntOrTriple = 0,
    padding_out: IntOrTriple = 0,
    dilation: IntOrTriple = 1,
    groups: int = 1,
) -> Tensor:
    """3-D transposed convolution: ``x [N, C_in, D, H, W]``, ``weight [C_in, C_out / groups, KD, KH,
    KW]`` -> ``[N, C_out, D_out, H_out, W_out]``, per axis ``(D - 1) * stride - 2 * padding +
    dilation * (KD - 1) + padding_out + 1``; `padding_out` must be smaller than `stride` or
    `dilation` on each axis.

    Example:
        >>> conv_transpose3d(x, w, stride=2).shape  # x [1, 4, 2, 3, 3], w [4, 2, 2, 2, 2]  # doctest: +SKIP
        (1, 2, 4, 6, 6)
    """
    op = "conv_transpose3d"
    return _conv_transpose(op, 3, x, weight, bias, stride, padding, padding_out, dilation, groups)


# -- deformable convolution, im2col and col2im (2-D only) ---------------------------------------
def _window_args(
    op: str, stride: IntOrPair, padding: IntOrPair, dilation: IntOrPair
) -> tuple[Pair, Pair, Pair]:
    """The stride, padding and dilation of a 2-D window op."""
    return pair(op, "stride", stride, 1), pair(op, "padding", padding, 0), pair(op, "dilation", dilation, 1)


def deform_conv2d(
    x: Tensor,
    offset: Tensor,
    weight: Tensor,
    mask: Tensor | None = None,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
    weight_groups: int = 1,
    offset_groups: int = 1,
) -> Tensor:
    """Deformable 2-D convolution (v1; v2 with a `mask`), torchvision's ``deform_conv2d``.

    Args:
        x: ``[N, C_in, H, W]``.
        offset: ``[N, 2 * offset_groups * KH * KW, OH, OW]``: a ``(dy, dx)`` pair per offset
            group and kernel tap, added to the tap's regular position (bilinear sampling,
            zero outside the image).
        weight: ``[C_out, C_in / weight_groups, KH, KW]``.
        mask: ``[N, offset_groups * KH * KW, OH, OW]`` scaling each sample, or None.
        bias: ``[C_out]`` or None.
        stride, padding, dilation: ints or (height, width) pairs, as `conv2d`'s.
        weight_groups: `conv2d`'s groups. offset_groups: input channels split into this many
            groups, each with its own offsets.

    Returns:
        ``[N, C_out, OH, OW]``; zero offsets (and a mask of ones) give `conv2d`.

    Example:
        >>> y = F.deform_conv2d(x, offset, weight, padding=1)  # doctest: +SKIP
    """
    op = "deform_conv2d"
    n, c_in, h, w = input_of_rank(op, x, 4, "[N, C_in, H, W]")
    s, p, d = _window_args(op, stride, padding, dilation)
    wg = int_arg(op, "weight_groups", weight_groups, 1)
    og = int_arg(op, "offset_groups", offset_groups, 1)
    c_out, c_per_group, kh, kw = param(op, x, weight, "weight", None, 4)
    if c_per_group * wg != c_in or c_out % wg:
        raise ShapeError(
            f"{op}: weight {weight.shape} with weight_groups={wg} does not match the input {x.shape} "
            f"({c_per_group} channels per group x {wg} groups, {c_out} outputs divisible by the groups)"
        )
    if c_in % og:
        raise ShapeError(f"{op}: {c_in} input channels are not divisible by offset_groups={og}")
    oh, ow = out_sizes(op, (h, w), (kh, kw), s, p, d)
    param(op, x, offset, "offset", (n, 2 * og * kh * kw, oh, ow), 4)
    if mask is not None:
        param(op, x, mask, "mask", (n, og * kh * kw, oh, ow), 4)
    if bias is not None:
        param(op, x, bias, "bias", (c_out,), 1)
    b = x._b
    out = b.deform_conv2d(x._p, offset._p, weight._p, unwrap(mask), unwrap(bias), s, p, d, wg, og)
    return wrap(out, b, Float)


def unfold4d(
    x: Tensor, kernel_size: IntOrPair, stride: IntOrPair = 1, padding: IntOrPair = 0, dilation: IntOrPair = 1
) -> Tensor:
    """im2col (PyTorch's ``F.unfold``): ``[N, C, H, W]`` -> ``[N, C * KH * KW, L]``, every
    zero-padded window as a column, ``L`` windows in row-major order.

    Example:
        >>> F.unfold4d(Tensor.ones((1, 3, 5, 5)), 3, padding=1).shape  # doctest: +SKIP
        (1, 27, 25)
    """
    op = "unfold4d"
    _, _, h, w = input_of_rank(op, x, 4, "[N, C, H, W]")
    k = pair(op, "kernel_size", kernel_size, 1)
    s, p, d = _window_args(op, stride, padding, dilation)
    out_sizes(op, (h, w), k, s, p, d)
    return wrap(x._b.unfold4d(x._p, k, s, p, d), x._b, Float)


def fold4d(
    cols: Tensor,
    output_size: IntOrPair,
    kernel_size: IntOrPair,
    stride: IntOrPair = 1,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
) -> Tensor:
    """col2im (PyTorch's ``F.fold``): ``[N, C * KH * KW, L]`` -> ``[N, C, H, W]``, each column
    summed back into its window (overlaps add up); the adjoint of `unfold4d`.

    Example:
        >>> F.fold4d(Tensor.ones((1, 4, 9)), (4, 4), 2).shape  # doctest: +SKIP
        (1, 1, 4, 4)
    """
    op = "fold4d"
    n, ck, length = input_of_rank(op, cols, 3, "[N, C * KH * KW, L]")
    size = pair(op, "output_size", output_size, 1)
    k = pair(op, "kernel_size", kernel_size, 1)
    s, p, d = _window_args(op, stride, padding, dilation)
    oh, ow = out_sizes(op, size, k, s, p, d)
    if ck % (k[0] * k[1]) or length != oh * ow:
        raise ShapeError(
            f"{op}: columns {cols.shape} do not match kernel {k} and output size {size}: expected "
            f"[N, C * {k[0] * k[1]}, {oh * ow}] ({oh} x {ow} windows)"
        )
    return wrap(cols._b.fold4d(cols._p, size, k, s, p, d), cols._b, Float)
