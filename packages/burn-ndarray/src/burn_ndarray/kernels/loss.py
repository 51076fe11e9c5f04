"""Compiled kernels of the loss family: cross-entropy rows (numba), each row's loss, or its
gradient, in one call (`burn_ndarray.ops.loss`).

A classifier's loss is a small op between large ones: NumPy's dozen calls over ``[128, 10]``
each start with caches the GEMMs have just emptied (25-70 us apiece inside a training step,
against 4-16 us for the same calls in a warm loop), where one compiled call starts cold once.
Each row is read in its dtype; its sum of exponentials and the loss are computed in float64 and
rounded once, so the results are at least as accurate as NumPy's float32 passes (not their bits:
numba's exp is libm's, NumPy's its own SIMD one).

Every kernel checks the targets as it goes and returns the first row whose target is outside
``[0, C)`` (-1 when all are in range), so a bad target is an error, never a wrapped index. The
forward kernel also returns the sum of its losses (float64), so a sum or mean needs no NumPy
reduction: cold, that took as long as the kernel.

float32 rows of a language model's head (``[1024, 50257]`` logits for GPT-2 at batch 8) take
`cross_entropy_rows_float32` and `cross_entropy_grad_rows_float32`: the same formulas in passes
LLVM vectorizes, 3-4x faster than the scalar kernels (docs/benchmarks-log.md, training steps).
Each pass is free of reductions LLVM would keep serial (a float sum or max in one accumulator is
not reassociated): eight accumulators side by side, and the exponentials written to a row buffer
by `activation._exp_neg_wide` (no libm call) before they are summed in float64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from burn_ndarray.kernels.activation import _exp_neg_wide
from burn_ndarray.kernels.jit import jit

Array = Any


@jit
def cross_entropy_rows(x: Array, t: Array, out: Array) -> tuple[int, float]:
    """``out[i] = logsumexp(x[i]) - x[i, t[i]]`` for a C-contiguous 2-D `x` with ``C >= 1``;
    returns the first bad row (or -1) and the sum of the losses in float64 (the reduction
    without another call)."""
    rows, classes = x.shape
    loss_sum = 0.0
    for i in range(rows):
        k = t[i]
        if k < 0 or k >= classes:
            return i, loss_sum
        row = x[i]
        m = row[0]
        for j in range(1, classes):
            if row[j] > m:  # a NaN never wins: it reaches the sum below, and the loss is NaN
                m = row[j]
        total = 0.0
        for j in range(classes):
            total += math.exp(float(row[j] - m))
        loss = math.log(total) - float(row[k] - m)
        out[i] = loss
        loss_sum += loss
    return -1, loss_sum


@jit
def cross_entropy_grad_rows(x: Array, t: Array, g: Array, factor: float, out: Array) -> int:
    """``out[i] = (softmax(x[i]) - onehot(t[i])) * g_i * factor``, with ``g_i = g[i]`` when `g`
    has a value per row, else ``g[0]``."""
    rows, classes = x.shape
    per_row = g.shape[0] == rows
    for i in range(rows):
        k = t[i]
        if k < 0 or k >= classes:
            return i
        row = x[i]
        dst = out[i]
        m = row[0]
        for j in range(1, classes):
            if row[j] > m:
                m = row[j]
        total = 0.0
        for j in range(classes):
            e = math.exp(float(row[j] - m))
            dst[j] = e
            total += e
        gi = float(g[i] if per_row else g[0]) * factor
        scale = gi / total
        for j in range(classes):
            dst[j] = dst[j] * scale
        dst[k] = dst[k] - gi
    return -1


@jit
def _row_max(row: Array) -> Any:
    """The largest element of a 1-D float32 `row` (size >= 1), in eight lanes that vectorize; a
    NaN may or may not win (the callers keep NaN through the exponentials)."""
    n = row.size
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = row[0]
    j = 0
    while j + 8 <= n:
        m0, m1, m2, m3 = max(m0, row[j]), max(m1, row[j + 1]), max(m2, row[j + 2]), max(m3, row[j + 3])
        m4, m5, m6, m7 = max(m4, row[j + 4]), max(m5, row[j + 5]), max(m6, row[j + 6]), max(m7, row[j + 7])
        j += 8
    m = max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))
    while j < n:
        m = max(m, row[j])
        j += 1
    return m


@jit
def _shifted_exps(row: Array, m: Any, out: Array) -> None:
    """``out[j] = exp(row[j] - m)`` for float32 `row` with ``m >= row[j]``; NaN stays NaN."""
    for j in range(row.size):
        d = m - row[j]
        e = _exp_neg_wide(d)
        out[j] = e if d == d else d


@jit
def _lane_sum(values: Array) -> float:
    """The float64 sum of a 1-D float32 array, in eight lanes that vectorize."""
    n = values.size
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    j = 0
    while j + 8 <= n:
        s0 += values[j]
        s1 += values[j + 1]
        s2 += values[j + 2]
        s3 += values[j + 3]
        s4 += values[j + 4]
        s5 += values[j + 5]
        s6 += values[j + 6]
        s7 += values[j + 7]
        j += 8
    total = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    while j < n:
        total += values[j]
        j += 1
    return total


@jit
def cross_entropy_rows_float32(x: Array, t: Array, out: Array) -> tuple[int, float]:
    """`cross_entropy_rows` for float32 `x`, vectorized passes over each row."""
    rows, classes = x.shape
    loss_sum = 0.0
    exps = np.empty(classes, x.dtype)
    for i in range(rows):
        k = t[i]
        if k < 0 or k >= classes:
            return i, loss_sum
        row = x[i]
        m = _row_max(row)
        _shifted_exps(row, m, exps)
        loss = math.log(_lane_sum(exps)) - float(row[k] - m)
        out[i] = loss
        loss_sum += loss
    return -1, loss_sum


@jit
def cross_entropy_grad_rows_float32(x: Array, t: Array, g: Array, factor: float, out: Array) -> int:
    """`cross_entropy_grad_rows` for float32 `x`: the exponentials written to `out`'s row, summed,
    then scaled in place."""
    rows, classes = x.shape
    per_row = g.shape[0] == rows
    for i in range(rows):
        k = t[i]
        if k < 0 or k >= classes:
            return i
        row = x[i]
        dst = out[i]
        _shifted_exps(row, _row_max(row), dst)
        gi = float(g[i] if per_row else g[0]) * factor
        scale = np.float32(gi / _lane_sum(dst))
        for j in range(classes):
            dst[j] = dst[j] * scale
        dst[k] = dst[k] - np.float32(gi)
    return -1
