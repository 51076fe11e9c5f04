"""Compiled kernels of the norm family (`burn_ndarray.ops.norm`): layer normalization of rows and
its gradient, each row read once for its statistics and once for its result while it is in cache.

The composition is nine NumPy passes over the whole tensor (two means along the last axis, which
NumPy runs as a strided reduction at ~2 ns an element for rows of a few hundred, a subtraction,
a square, a square root...), each result a fresh array. Here the mean and the variance (two
passes over the row, the variance of the centered values, so no cancellation) are accumulated in
float64 (summed in SIMD lanes: the bits are this machine's at any thread count, not NumPy's) and
the row's result written in its dtype. The gradient recomputes them the same way.
"""

from __future__ import annotations

import math
from typing import Any

from numba import njit

from burn_ndarray.kernels.jit import jit

Array = Any
# The row sums may be reordered into SIMD lanes (reassociation only, as `kernels.float`'s row sums:
# not fastmath=True, which would let LLVM assume no inf or NaN); in order they run one add per
# four cycles, slower than the NumPy passes they replace.
_reduce = njit(cache=True, error_model="numpy", nogil=True, fastmath={"reassoc", "nsz"})


@_reduce
def _stats(row: Array, epsilon: float) -> tuple[float, float]:
    """Mean and ``1 / sqrt(var + epsilon)`` of `row`, in float64."""
    width = row.shape[0]
    total = 0.0
    for j in range(width):
        total += float(row[j])
    mean = total / width
    square = 0.0
    for j in range(width):
        d = float(row[j]) - mean
        square += d * d
    return mean, 1.0 / math.sqrt(square / width + epsilon)


@jit
def layer_norm_rows(x: Array, gamma: Array, beta: Array, epsilon: float, out: Array) -> None:
    """``out[i] = (x[i] - mean) * rstd * gamma + beta`` for each row of the C-contiguous 2-D `x`."""
    rows, width = x.shape
    for i in range(rows):
        row = x[i]
        dst = out[i]
        mean, rstd = _stats(row, epsilon)
        for j in range(width):
            dst[j] = (float(row[j]) - mean) * rstd * float(gamma[j]) + float(beta[j])


@_reduce
def layer_norm_grad_rows(
    x: Array, gamma: Array, epsilon: float, dy: Array, dx: Array, dgamma: Array, dbeta: Array
) -> None:
    """`dx` of each row, ``rstd * (g - mean(g) - xh * mean(g * xh))`` with ``g = dy * gamma``,
    and the rows' ``dy * xh`` and ``dy`` added to the float64 `dgamma` and `dbeta`."""
    rows, width = x.shape
    for i in range(rows):
        row = x[i]
        grad = dy[i]
        mean, rstd = _stats(row, epsilon)
        sum_g = 0.0
        sum_gx = 0.0
        for j in range(width):
            g = float(grad[j]) * float(gamma[j])
            xh = (float(row[j]) - mean) * rstd
            sum_g += g
            sum_gx += g * xh
            dgamma[j] += float(grad[j]) * xh
            dbeta[j] += float(grad[j])
        mean_g = sum_g / width
        mean_gx = sum_gx / width
        dst = dx[i]
        for j in range(width):
            xh = (float(row[j]) - mean) * rstd
            dst[j] = rstd * (float(grad[j]) * float(gamma[j]) - mean_g - xh * mean_gx)
