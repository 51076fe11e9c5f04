"""Convolutions, transposed convolutions and their gradients: im2col + one matmul per call.

Weights are grouped as ``[G, out/G, in/G * KH * KW]`` and the columns as ``[G, in/G * KH * KW, N * L]``
(batch and positions side by side), so each group is ONE large 2-D GEMM over the whole batch: faster
in OpenBLAS than a stacked matmul of N small ones. The ``[C_out, N, L]`` result is returned as a
``[N, C_out, OH, OW]`` transposed view (primitives may be views; whoever needs it contiguous copies
once). Gradients with respect to the input go back through `col2im`; gradients with respect to the
weight contract over batch and positions in the same single matmul per group.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray._windows import Pair, col2im, out_size, pad, windows, work_dtype

Array = Any


def _gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` over a leading group axis: one 2-D matmul (one BLAS GEMM) per group.

    NumPy's stacked matmul is slower than its 2-D one here (a batch of one, transposed operands);
    the per-group products land in one fresh output buffer.
    """
    if a.shape[0] == 1:
        return (a[0] @ b[0])[None]  # type: ignore[no-any-return]
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=np.result_type(a, b))
    for g in range(a.shape[0]):
        np.matmul(a[g], b[g], out=out[g])
    return out


def _columns(
    xp: np.ndarray, kernel: Pair, out: Pair, stride: Pair, dilation: Pair, groups: int
) -> np.ndarray:
    """im2col: ``[G, C/G * KH * KW, N * OH * OW]`` (the one copy of the windows)."""
    n, c = xp.shape[:2]
    win = windows(xp, kernel, out, stride, dilation)  # [N, C, KH, KW, OH, OW], a view
    return win.transpose(1, 2, 3, 0, 4, 5).reshape(groups, c // groups * kernel[0] * kernel[1], -1)


def _channels_first(x: np.ndarray, groups: int) -> np.ndarray:
    """``[N, C, H, W]`` as ``[G, C/G, N * H * W]`` (a copy unless N == 1)."""
    n, c = x.shape[:2]
    return x.reshape(n, c, -1).transpose(1, 0, 2).reshape(groups, c // groups, -1)


def conv2d(
    x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    if c != cg * groups or o % groups:
        raise ValueError(
            f"conv2d: input {x.shape} and weight {weight.shape} do not fit groups={groups} "
            f"(need C_in = weight.shape[1] * groups and C_out divisible by groups)"
        )
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    oh = out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = out_size(w, kw, stride[1], padding[1], dilation[1])
    cols = _columns(pad(x.astype(dtype, copy=False), padding), (kh, kw), (oh, ow), stride, dilation, groups)
    out = _gemm(weight.astype(dtype, copy=False).reshape(groups, o // groups, cg * kh * kw), cols)
    if bias is not None:
        out = out.reshape(o, -1)
        out += bias.astype(dtype, copy=False).reshape(o, 1)  # `out` is our own fresh result
    out = out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3)
    return out.astype(np.result_type(x, weight), copy=False)


def conv2d_x_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    _, _, oh, ow = output_grad.shape
    dtype = work_dtype(weight, output_grad)
    wt = weight.astype(dtype, copy=False).reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    cols = _gemm(wt, _channels_first(output_grad.astype(dtype, copy=False), groups))
    cols = cols.reshape(c, kh, kw, n, oh, ow).transpose(3, 0, 1, 2, 4, 5)
    plane = col2im(cols, (h + 2 * padding[0], w + 2 * padding[1]), stride, dilation)
    return plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w].astype(x.dtype, copy=False)


def _weight_grad(
    inp: Array, out_grad: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> np.ndarray:
    """``dW[o, c, kh, kw] = sum over n, l of out_grad[n, o, l] * window(inp)[n, c, kh, kw, l]``."""
    c = inp.shape[1]
    o, oh, ow = out_grad.shape[1:]
    dtype = work_dtype(inp, out_grad)
    cols = _columns(pad(inp.astype(dtype, copy=False), padding), kernel, (oh, ow), stride, dilation, groups)
    grads = _channels_first(out_grad.astype(dtype, copy=False), groups)  # [G, O/G, N * L]
    # The transposed operand costs nothing: 2-D matmul hands BLAS a transpose flag.
    return _gemm(grads, cols.transpose(0, 2, 1)).reshape(o, c // groups, *kernel)


def conv2d_weight_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    grad = _weight_grad(x, output_grad, weight.shape[2:], stride, padding, dilation, groups)
    return grad.astype(weight.dtype, copy=False)


def conv_transpose2d(
    x: Array,
    weight: Array,
    bias: Array | None,
    stride: Pair,
    padding: Pair,
    padding_out: Pair,
    dilation: Pair,
    groups: int,
) -> Array:
    n, c_in, h, w = x.shape
    c_in_w, og, kh, kw = weight.shape
    if c_in != c_in_w or c_in % groups:
        raise ValueError(
            f"conv_transpose2d: input {x.shape} and weight {weight.shape} do not fit groups={groups} "
            f"(need weight.shape[0] = C_in, divisible by groups)"
        )
    ig = c_in // groups
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    wt = weight.astype(dtype, copy=False).reshape(groups, ig, og * kh * kw).transpose(0, 2, 1)
    cols = _gemm(wt, _channels_first(x.astype(dtype, copy=False), groups))  # [G, OG*KH*KW, N*H*W]
    cols = cols.reshape(groups * og, kh, kw, n, h, w).transpose(3, 0, 1, 2, 4, 5)
    full_h = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1
    full_w = (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1
    plane = col2im(cols, (full_h + padding_out[0], full_w + padding_out[1]), stride, dilation)
    oh = full_h - 2 * padding[0] + padding_out[0]
    ow = full_w - 2 * padding[1] + padding_out[1]
    out = plane[:, :, padding[0] : padding[0] + oh, padding[1] : padding[1] + ow]
    if bias is not None:
        out = out + bias.astype(dtype, copy=False).reshape(-1, 1, 1)
    return out.astype(np.result_type(x, weight), copy=False)


def conv_transpose2d_x_backward(
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
    grad = conv2d(output_grad, weight, None, stride, padding, dilation, groups)
    return grad[:, :, : x.shape[2], : x.shape[3]].astype(x.dtype, copy=False)


def conv_transpose2d_weight_backward(
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
    grad = _weight_grad(output_grad, x, weight.shape[2:], stride, padding, dilation, groups)
    return grad.astype(weight.dtype, copy=False)
