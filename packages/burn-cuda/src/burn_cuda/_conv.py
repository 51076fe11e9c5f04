"""Convolutions, transposed convolutions and their gradients: im2col + one batched cuBLAS GEMM.

CuPy 14 has no public cuDNN convolution API (``cupyx.cudnn`` was removed in v14), so convolutions
are im2col (one copy of the strided window view) contracted by ``cupy.matmul``: weights grouped as
``[G, out/G, in/G * KH * KW]``, columns as ``[G, in/G * KH * KW, N * OH * OW]`` (batch and positions
side by side), one strided-batched GEMM over the groups. Input gradients go back through `col2im`;
weight gradients contract over batch and positions in the same single GEMM. float16 computes in
float32 and rounds once.
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn.errors import ShapeError
from burn_cuda._windows import Pair, col2im, out_size, pad, windows, work_dtype

Array = Any


def _columns(xp: Array, kernel: Pair, out: Pair, stride: Pair, dilation: Pair, groups: int) -> Array:
    """im2col: ``[G, C/G * KH * KW, N * OH * OW]`` (the one copy of the windows)."""
    c = xp.shape[1]
    win = windows(xp, kernel, out, stride, dilation)  # [N, C, KH, KW, OH, OW], a view
    return win.transpose(1, 2, 3, 0, 4, 5).reshape(groups, c // groups * kernel[0] * kernel[1], -1)


def _channels_first(x: Array, groups: int) -> Array:
    """``[N, C, H, W]`` as ``[G, C/G, N * H * W]``."""
    n, c = x.shape[:2]
    return x.reshape(n, c, -1).transpose(1, 0, 2).reshape(groups, c // groups, -1)


def _check(
    op: str, x: Array, weight: Array, channels: int, expected: int, divisible: int, groups: int
) -> None:
    if groups < 1 or channels != expected or divisible % groups or channels % groups:
        raise ShapeError(f"{op}: input {x.shape} and weight {weight.shape} do not fit groups={groups}")


def conv2d(
    x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    _check("conv2d", x, weight, c, cg * groups, o, groups)
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    oh = out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = out_size(w, kw, stride[1], padding[1], dilation[1])
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"conv2d: input {x.shape} with kernel {(kh, kw)} gives an empty output")
    cols = _columns(pad(x.astype(dtype, copy=False), padding), (kh, kw), (oh, ow), stride, dilation, groups)
    out = cp.matmul(weight.astype(dtype, copy=False).reshape(groups, o // groups, cg * kh * kw), cols)
    out = out.reshape(o, n, oh, ow)
    if bias is not None:
        out += bias.astype(dtype, copy=False).reshape(o, 1, 1, 1)  # `out` is our own fresh result
    return out.transpose(1, 0, 2, 3).astype(cp.result_type(x, weight), copy=False)


def conv2d_x_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    oh, ow = output_grad.shape[2:]
    dtype = work_dtype(weight, output_grad)
    wt = weight.astype(dtype, copy=False).reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    cols = cp.matmul(wt, _channels_first(output_grad.astype(dtype, copy=False), groups))
    cols = cols.reshape(c, kh, kw, n, oh, ow).transpose(3, 0, 1, 2, 4, 5)
    plane = col2im(cols, (h + 2 * padding[0], w + 2 * padding[1]), stride, dilation)
    return plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w].astype(x.dtype)


def _weight_grad(
    inp: Array, out_grad: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    """``dW[o, c, kh, kw] = sum over n, l of out_grad[n, o, l] * window(inp)[n, c, kh, kw, l]``."""
    c = inp.shape[1]
    o, oh, ow = out_grad.shape[1:]
    dtype = work_dtype(inp, out_grad)
    cols = _columns(pad(inp.astype(dtype, copy=False), padding), kernel, (oh, ow), stride, dilation, groups)
    grads = _channels_first(out_grad.astype(dtype, copy=False), groups)  # [G, O/G, N * L]
    return cp.matmul(grads, cols.transpose(0, 2, 1)).reshape(o, c // groups, *kernel)


def conv2d_weight_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    grad = _weight_grad(x, output_grad, weight.shape[2:], stride, padding, dilation, groups)
    return grad.astype(weight.dtype, copy=False)


def conv_transpose2d(
    x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair, padding_out: Pair,
    dilation: Pair, groups: int,
) -> Array:
    n, c_in, h, w = x.shape
    c_in_w, og, kh, kw = weight.shape
    _check("conv_transpose2d", x, weight, c_in, c_in_w, c_in, groups)
    ig = c_in // groups
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    full_h = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1
    full_w = (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1
    oh = full_h - 2 * padding[0] + padding_out[0]
    ow = full_w - 2 * padding[1] + padding_out[1]
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"conv_transpose2d: input {x.shape} and weight {weight.shape} give an empty output")
    wt = weight.astype(dtype, copy=False).reshape(groups, ig, og * kh * kw).transpose(0, 2, 1)
    cols = cp.matmul(wt, _channels_first(x.astype(dtype, copy=False), groups))  # [G, OG*KH*KW, N*H*W]
    cols = cols.reshape(groups * og, kh, kw, n, h, w).transpose(3, 0, 1, 2, 4, 5)
    plane = col2im(cols, (full_h + padding_out[0], full_w + padding_out[1]), stride, dilation)
    out = plane[:, :, padding[0] : padding[0] + oh, padding[1] : padding[1] + ow]
    if bias is not None:
        out = out + bias.astype(dtype, copy=False).reshape(-1, 1, 1)
    return out.astype(cp.result_type(x, weight), copy=False)


def conv_transpose2d_x_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, padding_out: Pair,
    dilation: Pair, groups: int,
) -> Array:
    # The adjoint of a transposed convolution is the convolution with the same weight.
    grad = conv2d(output_grad, weight, None, stride, padding, dilation, groups)
    return grad[:, :, : x.shape[2], : x.shape[3]].astype(x.dtype, copy=False)


def conv_transpose2d_weight_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, padding_out: Pair,
    dilation: Pair, groups: int,
) -> Array:
    # conv2d's weight gradient with the roles of input and output gradient swapped.
    grad = _weight_grad(output_grad, x, weight.shape[2:], stride, padding, dilation, groups)
    return grad.astype(weight.dtype, copy=False)
