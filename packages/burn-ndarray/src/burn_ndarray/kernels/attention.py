"""Compiled kernel of the attention family (`burn_ndarray.ops.attention`): the softmax of a block
of float32 attention scores, scaled first, in place, one call for the whole block.

NumPy's softmax of a block is six passes (the row maxima, the fix of fully masked rows, the
shift, ``exp``, the row sums, the division), and its float32 ``exp`` costs ~2 ns an element on
this machine: at ViT-tiny's 197 tokens the passes took more time than the two products around
them. Here each row is read for its maximum and then exponentiated, summed and scaled while in
cache; the exponential is `kernels.activation`'s in-kernel ``exp(-a)`` (Cody-Waite reduction, a
degree-7 polynomial, the power of two from its exponent bits; an ulp or two from NumPy's), so the
loop vectorizes.

A row whose scores are all ``-inf`` (every key masked) becomes zeros, as the contract defines it;
a NaN score makes its row NaN, as the NumPy passes do. ``*_range`` kernels take rows ``lo`` to
``hi``; their launchers split the rows on numba's TBB pool (`burn_ndarray.runtime.split.run_ranges`),
each row computed by the same code at any thread count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from burn_ndarray.kernels.activation import _exp_neg_wide
from burn_ndarray.kernels.jit import bounds, jit_parallel

Array = Any
_ZERO, _ONE = np.float32(0.0), np.float32(1.0)


# Reassociation lets LLVM split the row's sum (and maximum) into SIMD lanes; in order, the sum's
# one add per four cycles keeps the exponentials from vectorizing. Contraction fuses the exp
# polynomial's multiply-adds (1.2x on ViT-tiny's 3 x 197 x 197 scores: docs/benchmarks-log.md,
# "transformers at one thread"); neither assumes finite values, so NaN and -inf behave as written.
_reassoc = njit(cache=True, error_model="numpy", nogil=True, fastmath={"reassoc", "nsz", "contract"})


@_reassoc
def softmax_rows_range(lo: int, hi: int, s: Array, scale: float) -> None:
    """``s[i] = exp(t - max(t)) / sum(...)`` with ``t = s[i] * scale`` for rows `lo` to `hi` of
    the C-contiguous float32 2-D `s`; rows of ``-inf`` alone become 0. The scale is applied in the
    maximum's pass, while the row is read anyway: the scores take no pass of their own for it."""
    cols = s.shape[1]
    factor = np.float32(scale)
    for i in range(lo, hi):
        row = s[i]
        top = row[0] * factor
        for j in range(cols):
            v = row[j] * factor
            row[j] = v
            top = v if v > top else top  # a NaN never wins: it reaches the sum below
        if top == -np.inf:  # every key masked: no weight anywhere (not NaN)
            row[:] = _ZERO
            continue
        total = _ZERO
        for j in range(cols):
            a = top - row[j]
            e = _exp_neg_wide(a)
            e = e if a == a else a  # NaN stays NaN, and makes the sum (so the row) NaN
            row[j] = e
            total += e
        inv = _ONE / total
        for j in range(cols):
            row[j] = row[j] * inv


@_reassoc
def softmax_grad_rows_range(lo: int, hi: int, dw: Array, w: Array, scale: float) -> None:
    """``dw[i] = w[i] * (dw[i] - sum(dw[i] * w[i])) * scale`` for rows `lo` to `hi` of the
    C-contiguous float32 2-D `dw` and `w`: the scores' gradient from the weights' (softmax's
    backward)."""
    cols = dw.shape[1]
    factor = np.float32(scale)
    for i in range(lo, hi):
        g = dw[i]
        p = w[i]
        dot = _ZERO
        for j in range(cols):
            dot += g[j] * p[j]
        for j in range(cols):
            g[j] = p[j] * (g[j] - dot) * factor


@jit_parallel
def softmax_rows(parts: int, s: Array, scale: float) -> None:
    """`softmax_rows_range` over every row of `s`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(s.shape[0], c, parts)
        softmax_rows_range(lo, hi, s, scale)


@jit_parallel
def softmax_grad_rows(parts: int, dw: Array, w: Array, scale: float) -> None:
    """`softmax_grad_rows_range` over every row, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(dw.shape[0], c, parts)
        softmax_grad_rows_range(lo, hi, dw, w, scale)
