"""Direct grouped convolutions (depthwise: one input channel per group) on channels-last arrays,
numba: the forward sum, the input gradient and the weight gradient of `burn_ndarray.ops.grouped`.

Layouts: output and output gradient ``[N, OH, OW, O]``, input gradient ``[N, H, W, C]``, the
weight as ``[KH, KW, C/G, O]`` (``wt[kh, kw, i, o]`` is ``weight[o, i, kh, kw]``), and the input
expanded to ``[N, H, W, C/G, O]`` (``x[n, h, w, i, o]`` is input channel ``i`` of output channel
``o``'s group; a free view for depthwise with one output channel per input channel), so that the
innermost loop of every kernel runs over all output channels, contiguous in memory, and
vectorizes whatever the group size.

Every kernel works one position at a time and sums all its kernel taps into a vector that stays
in cache (the output position for the forward sum; the input position for the input gradient,
whose ``[C/G, O]`` products are then summed over each group's outputs; a row's ``[KH, KW, C/G,
O]`` sums for the weight gradient). Padding is skipped by index tests, never copied. Rows go to
threads in contiguous chunks (`bounds`); a row is computed by the same serial code on any thread,
so the forward sum and the input gradient are the same bits at any thread count. The weight
gradient sums each chunk's rows into that chunk's own partial (each row summed on its own first,
which keeps a float32 sum over a large batch to a few ulps), and the caller adds the partials.
"""

from __future__ import annotations

from typing import Any

from numba import prange

from burn_ndarray.kernels.conv import activate
from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any

# The kernels share their per-tap index arithmetic (`_tap`) but each keeps its own loop nest: the
# innermost multiply-add is the hot path and differs per kernel in what it reads and sums into, and
# a nest of its own keeps that loop a plain contiguous one for LLVM's vectorizer.


@jit
def forward_rows(
    lo: int, hi: int, x: Array, wt: Array, bias: Array | None, out: Array,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int, act: int,
) -> None:  # fmt: skip
    """Output rows ``r = n * OH + oh`` in ``[lo, hi)``: ``out[n, oh]`` (``[OW, O]``) = bias + the
    sum over taps and the group's input channels of the expanded input `x` (``[N, H, W, C/G, O]``),
    then the activation `act` (`burn_ndarray.kernels.conv.activate`) over the row while it is in
    cache (`out` C-contiguous)."""
    _, height, width, cg, o_total = x.shape
    kernel_h, kernel_w = wt.shape[:2]
    _, out_h, out_w, _ = out.shape
    for r in range(lo, hi):
        n, oh = r // out_h, r % out_h
        for ow in range(out_w):
            dst = out[n, oh, ow]
            if bias is None:
                dst[:] = 0
            else:
                for o in range(o_total):
                    dst[o] = bias[o]
            for kh in range(kernel_h):
                ih = oh * sh - ph + kh * dh
                if ih < 0 or ih >= height:
                    continue
                for kw in range(kernel_w):
                    iw = ow * sw - pw + kw * dw
                    if iw < 0 or iw >= width:
                        continue
                    src = x[n, ih, iw]
                    for i in range(cg):
                        xv, wv = src[i], wt[kh, kw, i]
                        for o in range(o_total):
                            dst[o] += xv[o] * wv[o]
        if act != 0:  # the finished row, still in cache, as one flat loop
            activate(out[n, oh].reshape(out_w * o_total), act)


@jit
def x_grad_rows(
    lo: int, hi: int, grad: Array, wt: Array, dx: Array, acc: Array,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Input-gradient rows ``r = n * H + ih`` in ``[lo, hi)`` of `dx` (``[N, H, W, C]``): at each
    position, the output gradient times the weights of every tap that read it, summed in `acc`
    (``[C/G, O]``, this thread's) and then over each group's output channels."""
    _, height, width, channels = dx.shape
    kernel_h, kernel_w, cg, o_total = wt.shape
    _, out_h, out_w, _ = grad.shape
    og = o_total // (channels // cg)
    for r in range(lo, hi):
        n, ih = r // height, r % height
        for iw in range(width):
            acc[:] = 0
            for kh in range(kernel_h):
                num_h = ih + ph - kh * dh
                if num_h < 0 or num_h % sh != 0 or num_h // sh >= out_h:
                    continue
                grow = grad[n, num_h // sh]
                for kw in range(kernel_w):
                    num_w = iw + pw - kw * dw
                    if num_w < 0 or num_w % sw != 0 or num_w // sw >= out_w:
                        continue
                    src = grow[num_w // sw]
                    for i in range(cg):
                        wv, dst = wt[kh, kw, i], acc[i]
                        for o in range(o_total):
                            dst[o] += src[o] * wv[o]
            dst = dx[n, ih, iw]
            if og == 1 and cg == 1:
                for c in range(channels):
                    dst[c] = acc[0, c]
            else:
                for g in range(channels // cg):
                    for i in range(cg):
                        total = acc[i, g * og]
                        for j in range(g * og + 1, g * og + og):
                            total += acc[i, j]
                        dst[g * cg + i] = total


@jit
def weight_grad_rows(
    lo: int, hi: int, x: Array, grad: Array, sums: Array,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """``sums[0]`` (``[KH, KW, C/G, O]``, zeroed here) = the weight gradient of output rows
    ``r = n * OH + oh`` in ``[lo, hi)`` from the expanded input `x` (``[N, H, W, C/G, O]``); each
    row is summed in ``sums[1]`` first."""
    acc, row_acc = sums[0], sums[1]
    _, height, width, cg, o_total = x.shape
    kernel_h, kernel_w = acc.shape[:2]
    _, out_h, out_w, _ = grad.shape
    acc[:] = 0
    for r in range(lo, hi):
        n, oh = r // out_h, r % out_h
        grow = grad[n, oh]
        row_acc[:] = 0
        for ow in range(out_w):
            gv = grow[ow]
            for kh in range(kernel_h):
                ih = oh * sh - ph + kh * dh
                if ih < 0 or ih >= height:
                    continue
                for kw in range(kernel_w):
                    iw = ow * sw - pw + kw * dw
                    if iw < 0 or iw >= width:
                        continue
                    src = x[n, ih, iw]
                    for i in range(cg):
                        xv, dst = src[i], row_acc[kh, kw, i]
                        for o in range(o_total):
                            dst[o] += xv[o] * gv[o]
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
def x_grad_parallel(parts: int, grad: Array, wt: Array, dx: Array, acc: Array, *sizes: int) -> None:
    """`x_grad_rows` of chunk ``c`` with ``acc[c]`` (``[parts, C/G, O]``)."""
    rows = dx.shape[0] * dx.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        x_grad_rows(lo, hi, grad, wt, dx, acc[c], *sizes)


@jit_parallel
def weight_grad_parallel(parts: int, x: Array, grad: Array, sums: Array, *sizes: int) -> None:
    """`weight_grad_rows` of chunk ``c`` into ``sums[c]`` (``[parts, 2, KH, KW, C/G, O]``)."""
    rows = grad.shape[0] * grad.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        weight_grad_rows(lo, hi, x, grad, sums[c], *sizes)


# Depthwise with few channels (`burn_ndarray.ops.grouped.MAX_ROW_CHANNELS`): the kernels above
# vectorize over channels only, and 16 or 32 channels are two or four vectors wide, so that the
# per-position loop overhead dominates. These run over whole rows instead. A row is seen split by
# column phase (``xs[n, h, p, j * C + c]`` is column ``j * SW + p``; one phase, the row itself, for
# stride 1, which is what the forward and weight-gradient callers send; the input gradient sums
# into a split row of its own), so that every tap touches a contiguous run of phase
# ``p = (kw * DW - PW) mod SW`` shifted by ``q = (kw * DW - PW) div SW`` columns, and the weight is
# tiled along the row (``wrow[kh, kw, ow * C + c]`` is ``weight[c, 0, kh, kw]``): each tap is one
# multiply-add over up to ``OW * C`` contiguous elements. Padding columns are cut from the range.


@jit
def _tap(kw: int, dw: int, pw: int, sw: int, cols: Array, out_w: int, c: int) -> tuple[int, int, int, int]:
    """Where tap column `kw` reads (``iw = ow * SW + off`` with ``off = kw * DW - PW``): its
    phase ``p``, the row elements ``[lo_k, hi_k)`` of the output columns that read an input
    column (``cols[p]``: phase ``p``'s columns; `c` elements a column), and the ``shift`` from
    an output element to the phase row's element it reads."""
    off = kw * dw - pw
    p, q = off % sw, off // sw
    return p, max(0, -q) * c, min(out_w, cols[p] - q) * c, q * c


@jit
def depthwise_forward_rows(
    lo: int, hi: int, xs: Array, wrow: Array, brow: Array | None, out: Array, cols: Array, c: int,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int, act: int,
) -> None:  # fmt: skip
    """Output rows ``r = n * OH + oh`` in ``[lo, hi)`` of `out` (``[N, OH, OW * C]``) from the
    phase-split input `xs` (``[N, H, SW, WP * C]``), the tiled weight `wrow` (``[KH, KW, OW * C]``)
    and the tiled bias `brow` (``[OW * C]``), then the activation `act` over the row."""
    height = xs.shape[1]
    kernel_h, kernel_w, row = wrow.shape
    out_h, out_w = out.shape[1], row // c
    for r in range(lo, hi):
        n, oh = r // out_h, r % out_h
        dst = out[n, oh]
        if brow is None:
            dst[:] = 0
        else:
            dst[:] = brow
        for kh in range(kernel_h):
            ih = oh * sh - ph + kh * dh
            if ih < 0 or ih >= height:
                continue
            for kw in range(kernel_w):
                p, lo_k, hi_k, shift = _tap(kw, dw, pw, sw, cols, out_w, c)
                # slices, not ``src[k + shift]``: a possibly negative index makes numba wrap it
                # around, a branch per element that stops LLVM vectorizing (measured 20x slower)
                d, src, wv = (
                    dst[lo_k:hi_k],
                    xs[n, ih, p, lo_k + shift : hi_k + shift],
                    wrow[kh, kw, lo_k:hi_k],
                )
                for k in range(hi_k - lo_k):
                    d[k] += src[k] * wv[k]
        if act != 0:
            activate(dst, act)


@jit
def depthwise_x_grad_rows(
    lo: int, hi: int, grad: Array, wrow: Array, dx: Array, dxs: Array, cols: Array, c: int,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """Input-gradient rows ``r = n * H + ih`` in ``[lo, hi)`` of `dx` (``[N, H, W * C]``) from
    the output gradient `grad` (``[N, OH, OW * C]``): each row summed phase-split in `dxs`
    (``[SW, WP * C]``, this thread's), then interleaved into `dx`."""
    height, width = dx.shape[1], dx.shape[2] // c
    kernel_h, kernel_w, row = wrow.shape
    out_h, out_w = grad.shape[1], row // c
    for r in range(lo, hi):
        n, ih = r // height, r % height
        dxs[:] = 0
        for kh in range(kernel_h):
            num = ih + ph - kh * dh
            if num < 0 or num % sh != 0 or num // sh >= out_h:
                continue
            g = grad[n, num // sh]
            for kw in range(kernel_w):
                p, lo_k, hi_k, shift = _tap(kw, dw, pw, sw, cols, out_w, c)
                d, src, wv = dxs[p, lo_k + shift : hi_k + shift], g[lo_k:hi_k], wrow[kh, kw, lo_k:hi_k]
                for k in range(hi_k - lo_k):
                    d[k] += src[k] * wv[k]
        dst = dx[n, ih]
        for iw in range(width):
            src = dxs[iw % sw]
            base = (iw // sw) * c
            for ch in range(c):
                dst[iw * c + ch] = src[base + ch]


@jit
def depthwise_weight_grad_rows(
    lo: int, hi: int, xs: Array, grad: Array, acc: Array, cols: Array, c: int,
    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
) -> None:  # fmt: skip
    """``acc`` (``[KH, KW, OW * C]``, zeroed here) = the products of output rows
    ``r = n * OH + oh`` in ``[lo, hi)``, per output column; the caller sums over columns."""
    height = xs.shape[1]
    kernel_h, kernel_w, row = acc.shape
    out_h, out_w = grad.shape[1], row // c
    acc[:] = 0
    for r in range(lo, hi):
        n, oh = r // out_h, r % out_h
        g = grad[n, oh]
        for kh in range(kernel_h):
            ih = oh * sh - ph + kh * dh
            if ih < 0 or ih >= height:
                continue
            for kw in range(kernel_w):
                p, lo_k, hi_k, shift = _tap(kw, dw, pw, sw, cols, out_w, c)
                d, src, gv = acc[kh, kw, lo_k:hi_k], xs[n, ih, p, lo_k + shift : hi_k + shift], g[lo_k:hi_k]
                for k in range(hi_k - lo_k):
                    d[k] += src[k] * gv[k]


@jit_parallel
def depthwise_forward_parallel(
    parts: int, xs: Array, wrow: Array, brow: Array | None, out: Array, *sizes: int
) -> None:
    rows = out.shape[0] * out.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        depthwise_forward_rows(lo, hi, xs, wrow, brow, out, *sizes)


@jit_parallel
def depthwise_x_grad_parallel(
    parts: int, grad: Array, wrow: Array, dx: Array, dxs: Array, *sizes: int
) -> None:
    """`depthwise_x_grad_rows` of chunk ``c`` with ``dxs[c]`` (``[parts, SW, WP * C]``)."""
    rows = dx.shape[0] * dx.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        depthwise_x_grad_rows(lo, hi, grad, wrow, dx, dxs[c], *sizes)


@jit_parallel
def depthwise_weight_grad_parallel(parts: int, xs: Array, grad: Array, acc: Array, *sizes: int) -> None:
    """`depthwise_weight_grad_rows` of chunk ``c`` into ``acc[c]`` (``[parts, KH, KW, OW * C]``)."""
    rows = grad.shape[0] * grad.shape[1]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        depthwise_weight_grad_rows(lo, hi, xs, grad, acc[c], *sizes)
