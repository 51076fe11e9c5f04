"""Functional deformable convolution, im2col and col2im: `deform_conv2d`, `unfold4d`, `fold4d`.

Re-exported by `burn.tensor.module`. Each function checks kinds, ranks and sizes with a
`ShapeError` naming the op and the shapes, then calls the backend op
(`burn.backend.module_ops_deform`, `burn.backend.module_ops_fold`).

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.ones((1, 2, 4, 4))  # doctest: +SKIP
    >>> F.unfold4d(x, 2).shape, F.fold4d(F.unfold4d(x, 2), (4, 4), 2).shape  # doctest: +SKIP
    ((1, 8, 9), (1, 2, 4, 4))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.tensor.module import IntOrPair, _pair
from burn.tensor.module_3d import _input, _int, _out_size, _param

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["deform_conv2d", "fold4d", "unfold4d"]


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
    n, c_in, h, w = _input(op, x, 4, "[N, C_in, H, W]")
    s, p, d = (
        _pair(op, "stride", stride, 1),
        _pair(op, "padding", padding, 0),
        _pair(op, "dilation", dilation, 1),
    )
    wg = _int(op, "weight_groups", weight_groups, 1)
    og = _int(op, "offset_groups", offset_groups, 1)
    c_out, c_per_group, kh, kw = _param(op, x, weight, "weight", None, 4)
    if c_per_group * wg != c_in or c_out % wg:
        raise ShapeError(
            f"{op}: weight {weight.shape} with weight_groups={wg} does not match the input {x.shape} "
            f"({c_per_group} channels per group x {wg} groups, {c_out} outputs divisible by the groups)"
        )
    if c_in % og:
        raise ShapeError(f"{op}: {c_in} input channels are not divisible by offset_groups={og}")
    oh = _out_size(op, h, kh, s[0], p[0], d[0], "height")
    ow = _out_size(op, w, kw, s[1], p[1], d[1], "width")
    _param(op, x, offset, "offset", (n, 2 * og * kh * kw, oh, ow), 4)
    if mask is not None:
        _param(op, x, mask, "mask", (n, og * kh * kw, oh, ow), 4)
    if bias is not None:
        _param(op, x, bias, "bias", (c_out,), 1)
    b = x._b
    out = b.deform_conv2d(
        x._p, offset._p, weight._p, None if mask is None else mask._p, None if bias is None else bias._p,
        s, p, d, wg, og,
    )
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
    _, _, h, w = _input(op, x, 4, "[N, C, H, W]")
    k = _pair(op, "kernel_size", kernel_size, 1)
    s, p, d = (
        _pair(op, "stride", stride, 1),
        _pair(op, "padding", padding, 0),
        _pair(op, "dilation", dilation, 1),
    )
    _out_size(op, h, k[0], s[0], p[0], d[0], "height")
    _out_size(op, w, k[1], s[1], p[1], d[1], "width")
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
    n, ck, length = _input(op, cols, 3, "[N, C * KH * KW, L]")
    size = _pair(op, "output_size", output_size, 1)
    k = _pair(op, "kernel_size", kernel_size, 1)
    s, p, d = (
        _pair(op, "stride", stride, 1),
        _pair(op, "padding", padding, 0),
        _pair(op, "dilation", dilation, 1),
    )
    oh = _out_size(op, size[0], k[0], s[0], p[0], d[0], "height")
    ow = _out_size(op, size[1], k[1], s[1], p[1], d[1], "width")
    if ck % (k[0] * k[1]) or length != oh * ow:
        raise ShapeError(
            f"{op}: columns {cols.shape} do not match kernel {k} and output size {size}: expected "
            f"[N, C * {k[0] * k[1]}, {oh * ow}] ({oh} x {ow} windows)"
        )
    return wrap(cols._b.fold4d(cols._p, size, k, s, p, d), cols._b, Float)
