"""Direct grouped convolutions (depthwise: one input channel per group) on channels-last arrays,
numba: the forward sum, the input gradient and the weight gradient of `burn_ndarray.ops.grouped`.

Layouts: input and input gradient ``[N, H, W, C]``, output and output gradient ``[N, OH, OW, O]``,
the weight as ``[KH, KW, C/G, O]`` (``wt[kh, kw, i, o]`` is ``weight[o, i, kh, kw]``), so that a
tap's weights for every output channel are one contiguous row. Output channel ``o`` belongs to
group ``o // (O/G)`` and reads input channels ``group * C/G + i``.

Every kernel walks one row of its result at a time (an output row for the forward sum, an input
row for the input gradient, an output row's share of the weight gradient) and, per kernel tap,
the run of positions whose source lies inside the unpadded input (`span`): no padded copy, no
bounds test in the inner loops. The innermost loop runs over channels, contiguous in memory, so
that it vectorizes; depthwise with one output channel per input channel (the models' case) has
a loop of its own, ``out[o] += x[o] * w[o]``. Rows go to threads in contiguous chunks (`bounds`);
a row is computed by the same serial code on any thread, so the forward sum and the input
gradient are the same bits at any thread count. The weight gradient sums each chunk's rows into
that chunk's own partial (each row's taps first summed on their own, which keeps a float32 sum
over a large batch to a few ulps), and the caller adds the partials.
"""

from __future__ import annotations

from typing import Any

from numba import prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any


@jit
def span(out_size: int, in_size: int, offset: int, stride: int) -> tuple[int, int]:
    """The output positions ``p`` in ``[lo, hi)`` whose source ``p * stride + offset`` lies in
    ``[0, in_size)``."""
    lo = 0 if offset >= 0 else (-offset + stride - 1) // stride
    hi = (in_size - offset + stride - 1) // stride if in_size > offset else 0
    return lo, max(lo, min(hi, out_size))


@jit
def forward_rows(
    lo: int, hi: int, x: Array, wt: Array, bias: Array | None, out: Array,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Output rows ``r = n * OH + oh`` in ``[lo, hi)``: ``out[n, oh]`` (``[OW, O]``) = bias + the
    sum over taps and the group's input channels."""
    _, height, width, channels = x.shape
    kernel_h, kernel_w, cg, o_total = wt.shape
    _, out_h, out_w, _ = out.shape
    og = o_total // (channels // cg)
    for r in range(lo, hi):
        n, oh = r // out_h, r % out_h
        orow = out[n, oh]
        if bias is None:
            orow[:] = 0
        else:
            for ow in range(out_w):
                dst = orow[ow]
                for o in range(o_total):
                    dst[o] = bias[o]
        for kh in range(kernel_h):
            ih = oh * sh - ph + kh * dh
            if ih < 0 or ih >= height:
                continue
            xrow = x[n, ih]
            for kw in range(kernel_w):
                offset = kw * dw - pw
                first, last = span(out_w, width, offset, sw)
                if cg == 1 and og == 1:
                    wv = wt[kh, kw, 0]
                    for ow in range(first, last):
                        src, dst = xrow[ow * sw + offset], orow[ow]
                        for o in range(o_total):
                            dst[o] += src[o] * wv[o]
                else:
                    for ow in range(first, last):
                        src, dst = xrow[ow * sw + offset], orow[ow]
                        for i in range(cg):
                            wv = wt[kh, kw, i]
                            for g in range(channels // cg):
                                value = src[g * cg + i]
                                for j in range(g * og, g * og + og):
                                    dst[j] += value * wv[j]


@jit
def x_grad_rows(
    lo: int, hi: int, grad: Array, wt: Array, dx: Array,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Input-gradient rows ``r = n * H + ih`` in ``[lo, hi)``: ``dx[n, ih]`` (``[W, C]``) = the
    sum, over the taps that read row ``ih``, of the output gradient times the tap's weights."""
    _, height, width, channels = dx.shape
    kernel_h, kernel_w, cg, o_total = wt.shape
    _, out_h, out_w, _ = grad.shape
    og = o_total // (channels // cg)
    for r in range(lo, hi):
        n, ih = r // height, r % height
        drow = dx[n, ih]
        drow[:] = 0
        for kh in range(kernel_h):
            num = ih + ph - kh * dh
            if num < 0 or num % sh != 0 or num // sh >= out_h:
                continue
            grow = grad[n, num // sh]
            for kw in range(kernel_w):
                offset = kw * dw - pw
                first, last = span(out_w, width, offset, sw)
                if cg == 1 and og == 1:
                    wv = wt[kh, kw, 0]
                    for ow in range(first, last):
                        src, dst = grow[ow], drow[ow * sw + offset]
                        for c in range(channels):
                            dst[c] += src[c] * wv[c]
                else:
                    for ow in range(first, last):
                        src, dst = grow[ow], drow[ow * sw + offset]
                        for i in range(cg):
                            wv = wt[kh, kw, i]
                            for g in range(channels // cg):
                                total = dst[g * cg + i]
                                for j in range(g * og, g * og + og):
                                    total += src[j] * wv[j]
                                dst[g * cg + i] = total


@jit
def weight_grad_rows(
    lo: int, hi: int, x: Array, grad: Array, acc: Array, row_acc: Array,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """``acc`` (``[KH, KW, C/G, O]``, zeroed here) = the weight gradient of output rows
    ``r = n * OH + oh`` in ``[lo, hi)``; each row is summed in `row_acc` (same shape) first."""
    _, height, width, channels = x.shape
    kernel_h, kernel_w, cg, o_total = acc.shape
    _, out_h, out_w, _ = grad.shape
    og = o_total // (channels // cg)
    acc[:] = 0
    for r in range(lo, hi):
        n, oh = r // out_h, r % out_h
        grow = grad[n, oh]
        row_acc[:] = 0
        for kh in range(kernel_h):
            ih = oh * sh - ph + kh * dh
            if ih < 0 or ih >= height:
                continue
            xrow = x[n, ih]
            for kw in range(kernel_w):
                offset = kw * dw - pw
                first, last = span(out_w, width, offset, sw)
                if cg == 1 and og == 1:
                    dst = row_acc[kh, kw, 0]
                    for ow in range(first, last):
                        src, gv = xrow[ow * sw + offset], grow[ow]
                        for o in range(o_total):
                            dst[o] += src[o] * gv[o]
                else:
                    for ow in range(first, last):
                        src, gv = xrow[ow * sw + offset], grow[ow]
                        for i in range(cg):
                            dst = row_acc[kh, kw, i]
                            for g in range(channels // cg):
                                value = src[g * cg + i]
                                for j in range(g * og, g * og + og):
                                    dst[j] += value * gv[j]
        flat, row_flat = acc.reshape(-1), row_acc.reshape(-1)
        for k in range(flat.shape[0]):
            flat[k] += row_flat[k]


@jit_parallel
def forward_parallel(parts: int, x: Array, wt: Array, bias: Array | None, out: Array, *sizes: int) -> None:
    rows = out.shape[0] * out.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        forward_rows(lo, hi, x, wt, bias, out, *sizes)


@jit_parallel
def x_grad_parallel(parts: int, grad: Array, wt: Array, dx: Array, *sizes: int) -> None:
    rows = dx.shape[0] * dx.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        x_grad_rows(lo, hi, grad, wt, dx, *sizes)


@jit_parallel
def weight_grad_parallel(parts: int, x: Array, grad: Array, acc: Array, row_acc: Array, *sizes: int) -> None:
    """`weight_grad_rows` of chunk ``c`` into ``acc[c]`` (``[parts, KH, KW, C/G, O]``)."""
    rows = grad.shape[0] * grad.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        weight_grad_rows(lo, hi, x, grad, acc[c], row_acc[c], *sizes)
