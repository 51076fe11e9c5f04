"""Convolutions, transposed convolutions and their gradients over ``[N, C, H, W]``: im2col + one GEMM.

The general versions, for any namespace: the columns are one copy of the strided window view,
``[G, C/G * KH * KW, N * OH * OW]`` (batch and positions side by side), contracted with the weight
grouped as ``[G, O/G, C/G * KH * KW]`` in one batched matmul over the groups. Input gradients go
back through `col2im`; weight gradients contract over batch and positions in the same single
matmul. Three kernels serve six ops: the transposed convolution is the input gradient of a
convolution, its input gradient is the convolution, and its weight gradient is the convolution's
with input and output gradient swapped. float16/bfloat16 compute in float32 and round once.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from burn.backend.windows import out_size
from burn.backend.xp.windows import Pair, col2im, pad, windows, work_dtype
from burn.errors import ShapeError

Array = Any
Gemm = Callable[[Array, Array], Array]


def check_groups(
    op: str, x: Array, weight: Array, channels: int, expected: int, divisible: int, groups: int
) -> None:
    if groups < 1 or channels != expected or divisible % groups or channels % groups:
        raise ShapeError(f"{op}: input {x.shape} and weight {weight.shape} do not fit groups={groups}")


def channels_first(x: Array, groups: int) -> Array:
    """``[N, C, H, W]`` as ``[G, C/G, N * H * W]`` (a copy unless N == 1)."""
    n, c = x.shape[:2]
    return x.reshape(n, c, -1).transpose(1, 0, 2).reshape(groups, c // groups, -1)


def _columns(
    xp: ModuleType, x: Array, kernel: Pair, out: Pair, stride: Pair, dilation: Pair, groups: int
) -> Array:
    """im2col of the padded `x`: ``[G, C/G * KH * KW, N * OH * OW]`` (the one copy of the windows)."""
    c = x.shape[1]
    win = windows(xp, x, kernel, out, stride, dilation)  # [N, C, KH, KW, OH, OW], a view
    return win.transpose(1, 2, 3, 0, 4, 5).reshape(groups, c // groups * kernel[0] * kernel[1], -1)


def conv2d(
    xp: ModuleType,
    x: Array,
    weight: Array,
    bias: Array | None,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: int,
    gemm: Gemm | None = None,
) -> Array:
    """`gemm` multiplies ``[G, M, K] @ [G, K, L]`` (the backend's best batched matmul; default
    ``xp.matmul``)."""
    gemm = gemm or xp.matmul
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    check_groups("conv2d", x, weight, c, cg * groups, o, groups)
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    oh, ow = out_size("conv2d", (h, w), (kh, kw), stride, padding, dilation)
    cols = _columns(
        xp, pad(xp, x.astype(dtype, copy=False), padding), (kh, kw), (oh, ow), stride, dilation, groups
    )
    out = gemm(weight.astype(dtype, copy=False).reshape(groups, o // groups, cg * kh * kw), cols)
    out = out.reshape(o, n, oh, ow)
    if bias is not None:
        out += bias.astype(dtype, copy=False).reshape(o, 1, 1, 1)  # `out` is our own fresh result
    return out.transpose(1, 0, 2, 3).astype(np.result_type(x.dtype, weight.dtype), copy=False)


def conv2d_x_backward(
    xp: ModuleType,
    x: Array,
    weight: Array,
    output_grad: Array,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: int,
    gemm: Gemm | None = None,
) -> Array:
    gemm = gemm or xp.matmul
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    oh, ow = output_grad.shape[2:]
    dtype = work_dtype(weight, output_grad)
    wt = weight.astype(dtype, copy=False).reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    cols = gemm(wt, channels_first(output_grad.astype(dtype, copy=False), groups))
    cols = cols.reshape(c, kh, kw, n, oh, ow).transpose(3, 0, 1, 2, 4, 5)
    plane = col2im(xp, cols, (h + 2 * padding[0], w + 2 * padding[1]), stride, dilation)
    return plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w].astype(x.dtype, copy=False)


def weight_grad(
    xp: ModuleType,
    inp: Array,
    out_grad: Array,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: int,
    gemm: Gemm | None = None,
) -> Array:
    """``dW[o, c, kh, kw] = sum over n, l of out_grad[n, o, l] * window(inp)[n, c, kh, kw, l]``, in the
    work dtype."""
    gemm = gemm or xp.matmul
    c = inp.shape[1]
    o, oh, ow = out_grad.shape[1:]
    dtype = work_dtype(inp, out_grad)
    cols = _columns(
        xp, pad(xp, inp.astype(dtype, copy=False), padding), kernel, (oh, ow), stride, dilation, groups
    )
    grads = channels_first(out_grad.astype(dtype, copy=False), groups)  # [G, O/G, N * L]
    return gemm(grads, cols.transpose(0, 2, 1)).reshape(o, c // groups, *kernel)


def conv_transpose2d(
    xp: ModuleType,
    x: Array,
    weight: Array,
    bias: Array | None,
    stride: Pair,
    padding: Pair,
    padding_out: Pair,
    dilation: Pair,
    groups: int,
    gemm: Gemm,
) -> Array:
    """`gemm` multiplies ``[G, M, K] @ [G, K, L]`` (the backend's best batched matmul)."""
    n, c_in, h, w = x.shape
    c_in_w, og, kh, kw = weight.shape
    check_groups("conv_transpose2d", x, weight, c_in, c_in_w, c_in, groups)
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    full_h = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1
    full_w = (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1
    oh = full_h - 2 * padding[0] + padding_out[0]
    ow = full_w - 2 * padding[1] + padding_out[1]
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"conv_transpose2d: input {x.shape} and weight {weight.shape} give an empty output")
    wt = weight.astype(dtype, copy=False).reshape(groups, c_in // groups, og * kh * kw).transpose(0, 2, 1)
    cols = gemm(wt, channels_first(x.astype(dtype, copy=False), groups))  # [G, OG*KH*KW, N*H*W]
    cols = cols.reshape(groups * og, kh, kw, n, h, w).transpose(3, 0, 1, 2, 4, 5)
    plane = col2im(xp, cols, (full_h + padding_out[0], full_w + padding_out[1]), stride, dilation)
    out = plane[:, :, padding[0] : padding[0] + oh, padding[1] : padding[1] + ow]
    if bias is not None:
        out = out + bias.astype(dtype, copy=False).reshape(-1, 1, 1)
    return out.astype(np.result_type(x.dtype, weight.dtype), copy=False)


class XpConvOps:
    """The 2-D and 1-D convolution ops of a backend on the namespace ``self.xp``.

    A backend replaces what it does faster with its own: `conv2d_x_backward` and
    `conv2d_weight_backward`, and the implementations the other ops share: `_conv2d` (the
    convolution; the public `conv2d` may be bound to it directly), `_conv_weight_grad` (the weight
    gradient in the work dtype) and `_conv_gemm` (a batched ``[G, M, K] @ [G, K, L]``). No op calls
    another public op, so wrappers of the backend see each op once.
    """

    xp: ClassVar[ModuleType]

    def _conv2d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        return conv2d(self.xp, x, weight, bias, stride, padding, dilation, groups, self._conv_gemm)

    def _conv_weight_grad(
        self,
        inp: Array,
        out_grad: Array,
        kernel: Pair,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        return weight_grad(self.xp, inp, out_grad, kernel, stride, padding, dilation, groups, self._conv_gemm)

    def _conv_gemm(self, a: Array, b: Array) -> Array:
        return self.xp.matmul(a, b)

    def _conv_transpose2d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: Pair,
        padding: Pair,
        padding_out: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        return conv_transpose2d(
            self.xp, x, weight, bias, stride, padding, padding_out, dilation, groups, self._conv_gemm
        )

    def conv2d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        return self._conv2d(x, weight, bias, stride, padding, dilation, groups)

    def conv2d_x_backward(
        self,
        x: Array,
        weight: Array,
        output_grad: Array,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        return conv2d_x_backward(
            self.xp, x, weight, output_grad, stride, padding, dilation, groups, self._conv_gemm
        )

    def conv2d_weight_backward(
        self,
        x: Array,
        weight: Array,
        output_grad: Array,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        grad = self._conv_weight_grad(x, output_grad, weight.shape[2:], stride, padding, dilation, groups)
        return grad.astype(weight.dtype, copy=False)

    def conv_transpose2d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: Pair,
        padding: Pair,
        padding_out: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        return self._conv_transpose2d(x, weight, bias, stride, padding, padding_out, dilation, groups)

    def conv_transpose2d_x_backward(
        self,
        x: Array,
        weight: Array,
        output_grad: Array,
        stride: Pair,
        padding: Pair,
        padding_out: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        # The adjoint of a transposed convolution is the convolution with the same weight.
        grad = self._conv2d(output_grad, weight, None, stride, padding, dilation, groups)
        return grad[:, :, : x.shape[2], : x.shape[3]].astype(x.dtype, copy=False)

    def conv_transpose2d_weight_backward(
        self,
        x: Array,
        weight: Array,
        output_grad: Array,
        stride: Pair,
        padding: Pair,
        padding_out: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        # dW[ci, co, k] = sum x[n, ci, l] * window(output_grad)[n, co, k, l]: conv2d's weight gradient
        # with the roles of input and output gradient swapped.
        grad = self._conv_weight_grad(output_grad, x, weight.shape[2:], stride, padding, dilation, groups)
        return grad.astype(weight.dtype, copy=False)

    # -- 1-D: 2-D over views with a height of 1 -------------------------------------------------
    def conv1d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: int,
        padding: int,
        dilation: int,
        groups: int,
    ) -> Array:
        out = self._conv2d(
            x[:, :, None, :], weight[:, :, None, :], bias, (1, stride), (0, padding), (1, dilation), groups
        )
        return out[:, :, 0, :]

    def conv_transpose1d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: int,
        padding: int,
        padding_out: int,
        dilation: int,
        groups: int,
    ) -> Array:
        out = self._conv_transpose2d(
            x[:, :, None, :],
            weight[:, :, None, :],
            bias,
            (1, stride),
            (0, padding),
            (0, padding_out),
            (1, dilation),
            groups,
        )
        return out[:, :, 0, :]
