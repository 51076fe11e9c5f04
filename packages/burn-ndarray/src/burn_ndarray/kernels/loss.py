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
"""

from __future__ import annotations

import math
from typing import Any

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
