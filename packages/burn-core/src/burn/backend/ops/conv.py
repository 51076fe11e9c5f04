"""The conv family of the backend contract: convolutions in 1-D, 2-D and 3-D, transposed
convolutions, deformable convolution, and im2col / col2im (``unfold4d`` / ``fold4d``), with the
backward helpers the autodiff rules call.

All are defaults written only with other contract ops, so a backend with the required ops has
them; backends override them to be faster. They loop over kernel positions (one strided slice of
the padded input each, `burn.backend.windows`) and never over pixels, batch items or channels.

Layouts are PyTorch's and Burn's: inputs ``[N, C, L]``, ``[N, C, H, W]``, ``[N, C, D, H, W]``;
conv weights ``[C_out, C_in / groups, *kernel]``, transposed-conv weights
``[C_in, C_out / groups, *kernel]``. Tuples are ``(height, width)`` and ``(depth, height, width)``.

Deformable convolution (torchvision's semantics): each kernel tap of each output pixel reads the
input at its regular position plus a learned ``(dy, dx)`` offset, by bilinear interpolation
(the four corners gathered from the input zero-padded by one pixel, so a corner outside the image
reads 0, torchvision's rule), modulated by a mask in v2; the result is the im2col matrix of
``conv2d``, finished by one grouped matmul. Layouts: ``offset [N, 2 * G * KH * KW, OH, OW]``
holding, for offset group ``g`` and tap ``k = i * KW + j``, ``dy`` at channel ``2 * (g * K + k)``
and ``dx`` right after it; ``mask [N, G * KH * KW, OH, OW]``; input channel ``c`` uses offset
group ``c // (C_in / G)``.

The column layout of ``unfold4d`` / ``fold4d`` is PyTorch's ``nn.Unfold``: ``[N, C * KH * KW, L]``
with the channel slowest, then the kernel row, then the kernel column, and ``L = OH * OW`` output
positions in row-major order.

Preconditions: the Tensor layer (`burn.tensor.module`) checks these before it calls an op, so a
backend may rely on them (a direct caller must honour them): inputs have the rank of their
layout, weights and bias the shapes that go with it, both channel counts are divisible by
`groups`; `kernel_size`, `stride`, `dilation` and `groups` are >= 1; `padding` and `padding_out`
are >= 0; ``padding_out < max(stride, dilation)`` per axis of a transposed convolution; no output
is empty: every convolution and pooling output size is >= 1.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.contract import default, family
from burn.backend.tables import (
    float_table,
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
    unfold,
    unfold_nd,
)
from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Triple = tuple[int, int, int]
Dims = tuple[int, ...]
Pair = tuple[int, int]
Quad = tuple[int, int, int, int]

# The activations a convolution can finish with (`ConvOps.conv2d_fused`): the ones that follow
# convolutions in the CNNs people deploy (ReLU in ResNets, ReLU6 / hard swish / hard sigmoid in
# MobileNets, SiLU in EfficientNets, GELU), each an elementwise function of one output value, so a
# backend can apply it while the output block it just wrote is still in cache.
CONV_ACTIVATIONS = ("none", "relu", "relu6", "hardswish", "hardsigmoid", "silu", "sigmoid", "gelu")


def _bias(b: Backend, out: P, bias: P | None) -> P:
    if bias is None:
        return out
    shape = b.float_shape(out)
    return b.float_add(out, b.float_reshape(bias, (1, shape[1], *(1,) * (len(shape) - 2))))

# -- rank-generic convolutions -----------------------------------------------------------------
def conv_nd(b: Backend, op: str, x: P, weight: P, bias: P | None, stride: Dims, padding: Dims,
            dilation: Dims, groups: int) -> P:
    """Convolution of any spatial rank: im2col, then one (batched over N and groups) matmul."""
    n, c_in, *size = b.float_shape(x)
    c_out, c_in_g, *kernel = b.float_shape(weight)
    _check_groups(op, tuple(b.float_shape(x)), tuple(b.float_shape(weight)), c_in, c_in_g * groups, c_out,
                  groups)
    out = out_size_nd(op, tuple(size), tuple(kernel), stride, padding, dilation)
    taps = c_in_g * math.prod(kernel)
    # The K axis of the columns is laid out (ci, *kernel), exactly as the weight flattens.
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, 0.0), tuple(kernel), stride, dilation, out)
    cols = b.float_reshape(cols, (n, groups, taps, math.prod(out)))
    wm = b.float_reshape(weight, (groups, c_out // groups, taps))
    return _bias(b, b.float_reshape(b.float_matmul(wm, cols), (n, c_out, *out)), bias)


def conv_nd_x_backward(b: Backend, x: P, weight: P, output_grad: P, stride: Dims, padding: Dims,
                       dilation: Dims, groups: int) -> P:
    """Gradient of `conv_nd` with respect to `x`: the transposed convolution with the same weight,
    with ``padding_out`` restoring what the forward's floor division dropped."""
    size = b.float_shape(x)[2:]
    kernel = b.float_shape(weight)[2:]
    out = b.float_shape(output_grad)[2:]
    padding_out = tuple(
        n - ((o - 1) * s - 2 * p + d * (k - 1) + 1)
        for n, o, k, s, p, d in zip(size, out, kernel, stride, padding, dilation, strict=True)
    )
    return conv_transpose_nd(b, "conv_x_backward", output_grad, weight, None, stride, padding, padding_out,
                             dilation, groups)


def conv_nd_weight_backward(b: Backend, x: P, weight: P, output_grad: P, stride: Dims, padding: Dims,
                            dilation: Dims, groups: int) -> P:
    """Gradient of `conv_nd` with respect to `weight`: output gradient times the forward's
    columns, per group, summed over the batch."""
    n = b.float_shape(x)[0]
    c_out, c_in_g, *kernel = b.float_shape(weight)
    out = tuple(b.float_shape(output_grad)[2:])
    taps = c_in_g * math.prod(kernel)
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, 0.0), tuple(kernel), stride, dilation, out)
    cols = b.float_reshape(cols, (n, groups, taps, math.prod(out)))
    dy = b.float_reshape(output_grad, (n, groups, c_out // groups, math.prod(out)))
    grad = b.float_sum_dim(b.float_matmul(dy, b.float_swap_dims(cols, 2, 3)), 0)
    return b.float_reshape(grad, (c_out, c_in_g, *kernel))


def conv_transpose_nd(b: Backend, op: str, x: P, weight: P, bias: P | None, stride: Dims, padding: Dims,
                      padding_out: Dims, dilation: Dims, groups: int) -> P:
    """Transposed convolution of any spatial rank: one matmul gives every input element's
    contribution per kernel position, col2im sums them into the output."""
    n, c_in, *size = b.float_shape(x)
    c_in_w, c_out_g, *kernel = b.float_shape(weight)
    _check_groups(op, tuple(b.float_shape(x)), tuple(b.float_shape(weight)), c_in, c_in_w, c_in, groups)
    c_in_g, c_out = c_in // groups, c_out_g * groups
    out = tuple(
        (h - 1) * s - 2 * p + d * (k - 1) + po + 1
        for h, k, s, p, po, d in zip(size, kernel, stride, padding, padding_out, dilation, strict=True)
    )
    if any(o <= 0 for o in out):
        raise ShapeError(
            f"{op}: input {(n, c_in, *size)} with kernel {tuple(kernel)}, stride {stride}, padding "
            f"{padding}, padding_out {padding_out}, dilation {dilation} gives an empty output {out}"
        )
    taps = math.prod(kernel)
    wm = b.float_swap_dims(b.float_reshape(weight, (groups, c_in_g, c_out_g * taps)), 1, 2)
    cols = b.float_matmul(wm, b.float_reshape(x, (n, groups, c_in_g, math.prod(size))))
    cols = b.float_reshape(cols, (n, c_out, taps, *size))
    head = (slice(0, n), slice(0, c_out))
    inner = tuple(slice(0, s) for s in size)
    parts = [
        b.float_reshape(b.float_slice(cols, (*head, slice(k, k + 1), *inner)), (n, c_out, *size))
        for k in range(taps)
    ]
    full = (n, c_out, *(o + 2 * p for o, p in zip(out, padding, strict=True)))
    folded = fold_nd(b, parts, full, tuple(kernel), stride, dilation, cols)
    return _bias(b, crop_nd(b, folded, padding, out), bias)


def conv_transpose_nd_x_backward(b: Backend, op: str, x: P, weight: P, output_grad: P, stride: Dims,
                                 padding: Dims, dilation: Dims, groups: int) -> P:
    """Gradient of `conv_transpose_nd` with respect to `x`: the convolution with the same weight
    (rows that ``padding_out >= stride`` added, which no input reached, are cropped)."""
    grad = conv_nd(b, op, output_grad, weight, None, stride, padding, dilation, groups)
    size = tuple(b.float_shape(x)[2:])
    return crop_nd(b, grad, (0,) * len(size), size)


def conv_transpose_nd_weight_backward(b: Backend, x: P, weight: P, output_grad: P, stride: Dims,
                                      padding: Dims, dilation: Dims, groups: int) -> P:
    """Gradient of `conv_transpose_nd` with respect to `weight`: the input times the im2col of the
    zero-padded output gradient read at each input element, per group, summed over the batch."""
    n, c_in, *size = b.float_shape(x)
    _, c_out_g, *kernel = b.float_shape(weight)
    c_in_g, length = c_in // groups, math.prod(size)
    cols = unfold_nd(b, pad_nd(b, output_grad, padding, padding, 0.0), tuple(kernel), stride, dilation,
                     tuple(size))
    cols = b.float_reshape(cols, (n, groups, c_out_g * math.prod(kernel), length))
    xm = b.float_reshape(x, (n, groups, c_in_g, length))
    grad = b.float_sum_dim(b.float_matmul(xm, b.float_swap_dims(cols, 2, 3)), 0)
    return b.float_reshape(grad, (c_in, c_out_g, *kernel))


# -- activation epilogues and per-side padding of conv2d_fused -----------------------------------
def check_activation(op: str, activation: str) -> str:
    """`activation` when it is one of `CONV_ACTIVATIONS`, else a ValueError naming `op`.

    Example:
        >>> check_activation("conv2d", "relu")
        'relu'
    """
    if activation not in CONV_ACTIVATIONS:
        raise ValueError(f"{op}: activation must be one of {', '.join(CONV_ACTIVATIONS)}; got {activation!r}")
    return activation


def conv_activation(b: Backend, activation: str, z: P) -> P:
    """`activation` applied to a convolution's output `z` with the activation family's ops
    (``hardsigmoid`` is PyTorch's: ``relu6(z + 3) / 6``)."""
    if activation == "none":
        return z
    if activation == "relu":
        return b.relu(z)
    if activation == "relu6":
        return b.relu6(z)
    if activation == "hardswish":
        return b.hard_swish(z)
    if activation == "hardsigmoid":
        return b.hard_sigmoid(z, 1.0 / 6.0, 0.5)
    if activation == "silu":
        return b.silu(z)
    if activation == "sigmoid":
        return b.sigmoid(z)
    if activation == "gelu":
        return b.gelu(z)
    raise ValueError(f"conv2d_fused: unknown activation {activation!r}")


def conv_activation_grad(b: Backend, activation: str, z: P, grad: P) -> P:
    """The gradient with respect to the pre-activation `z` of ``conv_activation(b, activation, z)``
    given the output's `grad`; at the kinks PyTorch's choice (0 at ``z = 0`` for ReLU, the bounds
    of ReLU6 and hard sigmoid excluded, hard swish's middle piece on ``[-3, 3]``)."""
    if activation == "none":
        return grad
    if activation == "relu":
        return b.relu_backward(z, grad)  # z > 0 exactly where relu(z) > 0
    if activation == "relu6":
        inside = b.float_mask_fill(grad, b.float_lower_equal_elem(z, 0.0), 0.0)
        return b.float_mask_fill(inside, b.float_greater_equal_elem(z, 6.0), 0.0)
    if activation == "hardsigmoid":
        inside = b.float_mask_fill(b.float_div_scalar(grad, 6.0), b.float_lower_equal_elem(z, -3.0), 0.0)
        return b.float_mask_fill(inside, b.float_greater_equal_elem(z, 3.0), 0.0)
    if activation == "hardswish":
        # d/dz z * relu6(z + 3) / 6 = (2z + 3) / 6 on [-3, 3], 0 below, 1 above.
        middle = b.float_mul(grad, b.float_add_scalar(b.float_div_scalar(z, 3.0), 0.5))
        low = b.float_mask_fill(middle, b.float_lower_elem(z, -3.0), 0.0)
        return b.float_mask_where(low, b.float_greater_elem(z, 3.0), grad)
    if activation == "sigmoid":
        return b.sigmoid_backward(b.sigmoid(z), grad)
    if activation == "silu":
        # d/dz z * s(z) = s * (1 + z * (1 - s)).
        s = b.sigmoid(z)
        one_minus = b.float_add_scalar(b.float_neg(s), 1.0)
        slope = b.float_mul(s, b.float_add_scalar(b.float_mul(z, one_minus), 1.0))
        return b.float_mul(grad, slope)
    if activation == "gelu":
        return b.gelu_backward(z, grad)
    raise ValueError(f"conv2d_fused: unknown activation {activation!r}")


def split_padding(padding: Quad) -> tuple[Pair, Pair, Pair]:
    """``(top, bottom, left, right)`` as ``(symmetric, extra_before, extra_after)``: the part a
    symmetric conv2d takes and what is left to pad explicitly on each side.

    Example:
        >>> split_padding((1, 2, 0, 0))
        ((1, 0), (0, 0), (1, 0))
    """
    top, bottom, left, right = padding
    sym = (min(top, bottom), min(left, right))
    return sym, (top - sym[0], left - sym[1]), (bottom - sym[0], right - sym[1])


def conv2d_fused_x_backward(b: Backend, x: P, weight: P, grad: P, stride: Pair, padding: Quad,
                            dilation: Pair, groups: int) -> P:
    """Gradient with respect to `x` of conv2d with per-side `padding` (``grad`` is the gradient of
    the convolution's output, before any activation): conv2d's input gradient on the explicitly
    padded input, cropped back."""
    sym, before, after = split_padding(padding)
    if not any(before) and not any(after):
        return b.conv2d_x_backward(x, weight, grad, stride, sym, dilation, groups)
    padded = pad_nd(b, x, before, after, 0.0)
    full = b.conv2d_x_backward(padded, weight, grad, stride, sym, dilation, groups)
    return crop_nd(b, full, before, tuple(b.float_shape(x)[2:]))


def conv2d_fused_weight_backward(b: Backend, x: P, weight: P, grad: P, stride: Pair, padding: Quad,
                                 dilation: Pair, groups: int) -> P:
    """Gradient with respect to `weight` of conv2d with per-side `padding` (``grad`` as in
    `conv2d_fused_x_backward`)."""
    sym, before, after = split_padding(padding)
    padded = pad_nd(b, x, before, after, 0.0)
    return b.conv2d_weight_backward(padded, weight, grad, stride, sym, dilation, groups)


@family("conv")
class ConvOps:
    """Convolution ops; every one has a default."""

    @default
    def conv1d(
        self, x: P, weight: P, bias: P | None, stride: int, padding: int, dilation: int, groups: int
    ) -> P:
        """``x [N, C_in, L]``, ``weight [C_out, C_in/groups, K]`` -> ``[N, C_out, L_out]``."""
        b: Backend = self  # type: ignore[assignment]
        # A 1-D convolution is a 2-D one over planes of height 1.
        n, c, length = b.float_shape(x)
        c_out, c_in_g, k = b.float_shape(weight)
        out = b.conv2d(
            b.float_reshape(x, (n, c, 1, length)), b.float_reshape(weight, (c_out, c_in_g, 1, k)),
            bias, (1, stride), (0, padding), (1, dilation), groups,
        )
        return b.float_reshape(out, (n, c_out, b.float_shape(out)[3]))

    @default
    def conv2d(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """``x [N, C_in, H, W]``, ``weight [C_out, C_in/groups, KH, KW]``, ``bias [C_out]`` or None."""
        b: Backend = self  # type: ignore[assignment]
        n, c_in, h, w = b.float_shape(x)
        c_out, c_in_g, kh, kw = b.float_shape(weight)
        _check_groups("conv2d", (n, c_in, h, w), b.float_shape(weight), c_in, c_in_g * groups, c_out, groups)
        oh, ow = out_size("conv2d", (h, w), (kh, kw), stride, padding, dilation)
        # im2col, then one (batched over N and groups) matmul: the K = c_in_g*KH*KW axis is laid
        # out (ci, kh, kw), exactly as the weight flattens.
        cols = unfold(b, pad2d(b, x, padding, 0.0), (kh, kw), stride, dilation, (oh, ow))
        cols = b.float_reshape(cols, (n, groups, c_in_g * kh * kw, oh * ow))
        wm = b.float_reshape(weight, (groups, c_out // groups, c_in_g * kh * kw))
        out = b.float_reshape(b.float_matmul(wm, cols), (n, c_out, oh, ow))
        if bias is not None:
            out = b.float_add(out, b.float_reshape(bias, (1, c_out, 1, 1)))
        return out

    @default
    def conv2d_fused(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Quad, dilation: Pair, groups: int,
        activation: str,
    ) -> P:
        """`conv2d` with per-side ``padding`` ``(top, bottom, left, right)`` and an `activation`
        epilogue (one of `CONV_ACTIVATIONS`): ``activation(conv2d(x, weight, bias))``. ONNX's
        ``Conv`` with asymmetric ``pads`` ("same" padding of stride-2 layers) and a Conv ->
        Relu / HardSwish / SiLU... pair are one call; a backend reads the input with bounds
        instead of padding it and applies the activation while the output is in cache."""
        b: Backend = self  # type: ignore[assignment]
        sym, before, after = split_padding(padding)
        x = pad_nd(b, x, before, after, 0.0)
        return conv_activation(b, activation, b.conv2d(x, weight, bias, stride, sym, dilation, groups))

    @default(backward_of="conv2d")
    def conv2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """Gradient of conv2d with respect to `x` (same shape as `x`)."""
        b: Backend = self  # type: ignore[assignment]
        # conv_transpose2d is the adjoint of conv2d with the same weight, stride, padding, dilation
        # and groups; padding_out restores the rows/columns that conv2d's floor division dropped.
        h, w = b.float_shape(x)[2:]
        _, _, kh, kw = b.float_shape(weight)
        oh, ow = b.float_shape(output_grad)[2:]
        padding_out = (
            h - ((oh - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + 1),
            w - ((ow - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + 1),
        )
        return b.conv_transpose2d(
            output_grad, weight, None, stride, padding, padding_out, dilation, groups
        )

    @default(backward_of="conv2d")
    def conv2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """Gradient of conv2d with respect to `weight` (same shape as `weight`)."""
        b: Backend = self  # type: ignore[assignment]
        # dW[co, (ci, kh, kw)] = sum over n and output pixels of dy[n, co, p] * cols[n, (ci, kh, kw), p]:
        # the im2col of conv2d, contracted with dy per group, summed over the batch.
        n = b.float_shape(x)[0]
        c_out, c_in_g, kh, kw = b.float_shape(weight)
        oh, ow = b.float_shape(output_grad)[2:]
        cols = unfold(b, pad2d(b, x, padding, 0.0), (kh, kw), stride, dilation, (oh, ow))
        cols = b.float_reshape(cols, (n, groups, c_in_g * kh * kw, oh * ow))
        dy = b.float_reshape(output_grad, (n, groups, c_out // groups, oh * ow))
        grad = b.float_sum_dim(b.float_matmul(dy, b.float_swap_dims(cols, 2, 3)), 0)
        return b.float_reshape(grad, (c_out, c_in_g, kh, kw))

    @default
    def conv_transpose2d(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        """``x [N, C_in, H, W]``, ``weight [C_in, C_out/groups, KH, KW]`` -> ``[N, C_out, H_out, W_out]``
        with ``H_out = (H-1)*stride - 2*padding + dilation*(KH-1) + padding_out + 1``."""
        b: Backend = self  # type: ignore[assignment]
        n, c_in, h, w = b.float_shape(x)
        c_in_w, c_out_g, kh, kw = b.float_shape(weight)
        _check_groups("conv_transpose2d", (n, c_in, h, w), (c_in_w, c_out_g, kh, kw), c_in, c_in_w, c_in,
                      groups)
        c_in_g, c_out = c_in // groups, c_out_g * groups
        oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + padding_out[0] + 1
        ow = (w - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + padding_out[1] + 1
        if oh <= 0 or ow <= 0:
            raise ShapeError(
                f"conv_transpose2d: input {(n, c_in, h, w)} with kernel {(kh, kw)}, stride {stride}, "
                f"padding {padding}, padding_out {padding_out}, dilation {dilation} gives an empty output"
            )
        # One matmul gives every input pixel's contribution per kernel position
        # (cols[n, (co, kh, kw), (h, w)]); col2im then sums them into the output.
        wm = b.float_swap_dims(b.float_reshape(weight, (groups, c_in_g, c_out_g * kh * kw)), 1, 2)
        cols = b.float_matmul(wm, b.float_reshape(x, (n, groups, c_in_g, h * w)))
        cols = b.float_reshape(cols, (n, c_out, kh * kw, h, w))
        everything = (slice(0, n), slice(0, c_out))
        inner = (slice(0, h), slice(0, w))
        parts = [
            b.float_reshape(b.float_slice(cols, (*everything, slice(k, k + 1), *inner)), (n, c_out, h, w))
            for k in range(kh * kw)
        ]
        full = (n, c_out, oh + 2 * padding[0], ow + 2 * padding[1])
        out = crop2d(b, fold(b, parts, full, (kh, kw), stride, dilation, cols), padding, (oh, ow))
        if bias is not None:
            out = b.float_add(out, b.float_reshape(bias, (1, c_out, 1, 1)))
        return out

    @default(backward_of="conv_transpose2d")
    def conv_transpose2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        # conv2d with the same weight and options is the adjoint of conv_transpose2d (the transposed
        # weight layout [C_in, C_out/groups, KH, KW] is conv2d's layout with the roles swapped).
        h, w = b.float_shape(x)[2:]
        grad = b.conv2d(output_grad, weight, None, stride, padding, dilation, groups)
        # padding_out >= stride adds rows that no input pixel reached; they are cropped here.
        return crop2d(b, grad, (0, 0), (h, w))

    @default(backward_of="conv_transpose2d")
    def conv_transpose2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        # dW[ci, (co, kh, kw)] = sum over n and input pixels of x[n, ci, p] * cols[n, (co, kh, kw), p],
        # where cols is the im2col of the zero-padded output_grad read with conv_transpose2d's
        # stride and dilation at each input pixel.
        n, c_in, h, w = b.float_shape(x)
        _, c_out_g, kh, kw = b.float_shape(weight)
        c_in_g = c_in // groups
        cols = unfold(b, pad2d(b, output_grad, padding, 0.0), (kh, kw), stride, dilation, (h, w))
        cols = b.float_reshape(cols, (n, groups, c_out_g * kh * kw, h * w))
        xm = b.float_reshape(x, (n, groups, c_in_g, h * w))
        grad = b.float_sum_dim(b.float_matmul(xm, b.float_swap_dims(cols, 2, 3)), 0)
        return b.float_reshape(grad, (c_in, c_out_g, kh, kw))

    @default
    def conv3d(
        self, x: P, weight: P, bias: P | None, stride: Triple, padding: Triple, dilation: Triple, groups: int
    ) -> P:
        """``x [N, C_in, D, H, W]``, ``weight [C_out, C_in/groups, KD, KH, KW]``, ``bias [C_out]`` or
        None -> ``[N, C_out, D_out, H_out, W_out]`` with
        ``D_out = (D + 2*padding - dilation*(KD-1) - 1) // stride + 1`` (same per axis)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_nd(b, "conv3d", x, weight, bias, stride, padding, dilation, groups)

    @default(backward_of="conv3d")
    def conv3d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, dilation: Triple, groups: int
    ) -> P:
        """Gradient of conv3d with respect to `x` (same shape as `x`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_nd_x_backward(b, x, weight, output_grad, stride, padding, dilation, groups)

    @default(backward_of="conv3d")
    def conv3d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, dilation: Triple, groups: int
    ) -> P:
        """Gradient of conv3d with respect to `weight` (same shape as `weight`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_nd_weight_backward(b, x, weight, output_grad, stride, padding, dilation, groups)

    @default
    def conv_transpose1d(
        self, x: P, weight: P, bias: P | None, stride: int, padding: int, padding_out: int, dilation: int,
        groups: int,
    ) -> P:
        """``x [N, C_in, L]``, ``weight [C_in, C_out/groups, K]`` -> ``[N, C_out, L_out]`` with
        ``L_out = (L-1)*stride - 2*padding + dilation*(K-1) + padding_out + 1``; requires
        ``padding_out < max(stride, dilation)``."""
        b: Backend = self  # type: ignore[assignment]
        # A 1-D transposed convolution is a 2-D one over planes of height 1.
        n, c, length = b.float_shape(x)
        c_in, c_out_g, k = b.float_shape(weight)
        out = b.conv_transpose2d(
            b.float_reshape(x, (n, c, 1, length)), b.float_reshape(weight, (c_in, c_out_g, 1, k)), bias,
            (1, stride), (0, padding), (0, padding_out), (1, dilation), groups,
        )
        return b.float_reshape(out, (n, c_out_g * groups, b.float_shape(out)[3]))

    @default
    def conv_transpose3d(
        self, x: P, weight: P, bias: P | None, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> P:
        """``x [N, C_in, D, H, W]``, ``weight [C_in, C_out/groups, KD, KH, KW]`` ->
        ``[N, C_out, D_out, H_out, W_out]`` with
        ``D_out = (D-1)*stride - 2*padding + dilation*(KD-1) + padding_out + 1`` (same per axis);
        requires ``padding_out < max(stride, dilation)`` on each axis."""
        b: Backend = self  # type: ignore[assignment]
        return conv_transpose_nd(b, "conv_transpose3d", x, weight, bias, stride, padding, padding_out,
                                 dilation, groups)

    @default(backward_of="conv_transpose3d")
    def conv_transpose3d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> P:
        """Gradient of conv_transpose3d with respect to `x` (same shape as `x`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_transpose_nd_x_backward(b, "conv_transpose3d_x_backward", x, weight, output_grad, stride,
                                            padding, dilation, groups)

    @default(backward_of="conv_transpose3d")
    def conv_transpose3d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> P:
        """Gradient of conv_transpose3d with respect to `weight` (same shape as `weight`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_transpose_nd_weight_backward(b, x, weight, output_grad, stride, padding, dilation, groups)

    @default
    def deform_conv2d(
        self, x: P, offset: P, weight: P, mask: P | None, bias: P | None, stride: Pair, padding: Pair,
        dilation: Pair, weight_groups: int, offset_groups: int,
    ) -> P:
        """``x [N, C_in, H, W]``, ``offset [N, 2*G*KH*KW, OH, OW]``, ``weight [C_out,
        C_in/weight_groups, KH, KW]``, ``mask [N, G*KH*KW, OH, OW]`` or None, ``bias [C_out]`` or
        None -> ``[N, C_out, OH, OW]`` (``G = offset_groups``; sizes as ``conv2d``'s)."""
        b: Backend = self  # type: ignore[assignment]
        n, c_in, h, w = b.float_shape(x)
        c_out, c_in_wg, kh, kw = b.float_shape(weight)
        oh, ow = out_size("deform_conv2d", (h, w), (kh, kw), stride, padding, dilation)
        g, k, length = offset_groups, kh * kw, oh * ow
        _check("deform_conv2d", b, x, offset, weight, mask, bias, (oh, ow), weight_groups, offset_groups)
        cpg = c_in // g
        device, dtype = b.float_device(x), b.float_get_dtype(x)

        # 1. Sampling positions [N, G, K, L] per axis.
        pairs = b.float_reshape(offset, (n, g, k, 2, length))
        grid_h, grid_w = _grid((kh, kw), stride, padding, dilation, (oh, ow))
        pos = []
        for axis, grid in ((0, grid_h), (1, grid_w)):
            d = b.float_slice(pairs, (slice(0, n), slice(0, g), slice(0, k), slice(axis, axis + 1),
                                      slice(0, length)))
            d = b.float_reshape(d, (n, g, k, length))
            pos.append(b.float_add(d, float_table(b, grid.reshape(1, 1, k, length), device, dtype)))

        # 2. Corner indices into the input padded by one zero pixel, and the bilinear weights.
        # The floor is taken on detached positions: it is piecewise constant, and the weights'
        # dependence on the position (frac = pos - floor) carries the offset gradient.
        hp, wp = h + 2, w + 2
        lows, fracs = [], []
        for p in pos:
            low = b.float_floor(b.float_detach(p))
            fracs.append(b.float_sub(p, low))
            lows.append(low)
        int_dtype = b.int_dtype

        def index(low: P, step: float, size: int) -> P:
            # clamp(low + step, -1, size) + 1: a corner outside the image lands on the zero border.
            clamped = b.float_clamp(b.float_add_scalar(low, step), -1.0, float(size))
            return b.float_into_int(b.float_add_scalar(clamped, 1.0), int_dtype)

        rows = [index(lows[0], s, h) for s in (0.0, 1.0)]
        cols = [index(lows[1], s, w) for s in (0.0, 1.0)]
        one_minus = [b.float_add_scalar(b.float_neg(f), 1.0) for f in fracs]
        weights_h = (one_minus[0], fracs[0])  # weight of the low / high row
        weights_w = (one_minus[1], fracs[1])

        flat = b.float_reshape(pad2d(b, x, (1, 1), 0.0), (n, g, cpg, hp * wp))
        modulation = None if mask is None else b.float_reshape(mask, (n, g, k, length))
        sampled = None
        for i in (0, 1):
            for j in (0, 1):
                idx = b.int_add(b.int_mul_scalar(rows[i], wp), cols[j])  # [N, G, K, L]
                idx = b.int_expand(b.int_reshape(idx, (n, g, 1, k * length)), (n, g, cpg, k * length))
                read = b.float_gather(3, flat, idx)  # [N, G, cpg, K * L]
                corner = b.float_mul(weights_h[i], weights_w[j])  # [N, G, K, L]
                if modulation is not None:
                    corner = b.float_mul(corner, modulation)
                term = b.float_mul(read, b.float_reshape(corner, (n, g, 1, k * length)))
                sampled = term if sampled is None else b.float_add(sampled, term)

        # 3. im2col layout (c, kh, kw) per weight group, then one batched matmul.
        cols_m = b.float_reshape(sampled, (n, weight_groups, c_in_wg * k, length))
        wm = b.float_reshape(weight, (weight_groups, c_out // weight_groups, c_in_wg * k))
        out = b.float_reshape(b.float_matmul(wm, cols_m), (n, c_out, oh, ow))
        if bias is not None:
            out = b.float_add(out, b.float_reshape(bias, (1, c_out, 1, 1)))
        return out

    @default
    def unfold4d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        """``x [N, C, H, W]`` -> ``[N, C * KH * KW, OH * OW]``: every (zero-padded) window."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        out = out_size("unfold4d", (h, w), kernel_size, stride, padding, dilation)
        cols = unfold(b, pad2d(b, x, padding, 0.0), kernel_size, stride, dilation, out)
        return b.float_reshape(cols, (n, c * kernel_size[0] * kernel_size[1], out[0] * out[1]))

    @default
    def fold4d(
        self, cols: P, output_size: Pair, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> P:
        """``cols [N, C * KH * KW, L]`` -> ``[N, C, H, W]`` (``(H, W) = output_size``): each column
        summed back into its window, overlaps added, the padding cropped (adjoint of `unfold4d`)."""
        b: Backend = self  # type: ignore[assignment]
        n, ck, length = b.float_shape(cols)
        kh, kw = kernel_size
        oh, ow = out_size("fold4d", output_size, kernel_size, stride, padding, dilation)
        if ck % (kh * kw) or length != oh * ow:
            raise ShapeError(
                f"fold4d: columns {(n, ck, length)} do not match kernel {kernel_size} and output size "
                f"{output_size} (expected [N, C * {kh * kw}, {oh * ow}])"
            )
        c = ck // (kh * kw)
        blocks = b.float_reshape(cols, (n, c, kh * kw, oh, ow))
        plane = (slice(0, oh), slice(0, ow))
        parts = [
            b.float_reshape(b.float_slice(blocks, (slice(0, n), slice(0, c), slice(i, i + 1), *plane)),
                            (n, c, oh, ow))
            for i in range(kh * kw)
        ]
        h, w = output_size
        full = (n, c, h + 2 * padding[0], w + 2 * padding[1])
        return crop2d(b, fold(b, parts, full, kernel_size, stride, dilation, cols), padding, (h, w))


def _check_groups(op: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...], channels: int,
                  expected: int, divisible: int, groups: int) -> None:
    if groups < 1 or channels != expected or divisible % groups or channels % groups:
        raise ShapeError(
            f"{op}: input {x_shape} and weight {w_shape} do not match with groups={groups}"
        )


@functools.lru_cache(maxsize=64)
def _grid(
    kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out: Pair
) -> tuple[np.ndarray, np.ndarray]:
    """``[K, L]`` row and column of the regular (undeformed) tap ``k`` of output pixel ``l``."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = kernel, stride, padding, dilation, out
    ki, kj = np.divmod(np.arange(kh * kw), kw)
    li, lj = np.divmod(np.arange(oh * ow), ow)
    rows = ((li * sh - ph)[None, :] + (ki * dh)[:, None]).astype(np.float64)
    cols = ((lj * sw - pw)[None, :] + (kj * dw)[:, None]).astype(np.float64)
    for table in (rows, cols):
        table.setflags(write=False)  # cached: shared by every call with these sizes
    return rows, cols


def _check(op: str, b: Backend, x: P, offset: P, weight: P, mask: P | None, bias: P | None, out: Pair,
           weight_groups: int, offset_groups: int) -> None:
    """Shapes the op relies on (the Tensor-level function checks them first, with more words)."""
    n, c_in, h, w = b.float_shape(x)
    c_out, c_in_wg, kh, kw = b.float_shape(weight)
    k = kh * kw
    problems = []
    if weight_groups < 1 or offset_groups < 1 or c_in % offset_groups:
        problems.append(f"{c_in} input channels must be divisible by offset_groups={offset_groups}")
    if weight_groups < 1 or c_in_wg * weight_groups != c_in or c_out % weight_groups:
        problems.append(f"weight {(c_out, c_in_wg, kh, kw)} does not match {c_in} input channels "
                        f"with weight_groups={weight_groups}")
    if b.float_shape(offset) != (n, 2 * offset_groups * k, *out):
        problems.append(f"offset must have shape {(n, 2 * offset_groups * k, *out)}, "
                        f"got {b.float_shape(offset)}")
    if mask is not None and b.float_shape(mask) != (n, offset_groups * k, *out):
        problems.append(f"mask must have shape {(n, offset_groups * k, *out)}, got {b.float_shape(mask)}")
    if bias is not None and b.float_shape(bias) != (c_out,):
        problems.append(f"bias must have shape {(c_out,)}, got {b.float_shape(bias)}")
    if problems:
        raise ShapeError(f"{op}: input {(n, c_in, h, w)}: " + "; ".join(problems))
