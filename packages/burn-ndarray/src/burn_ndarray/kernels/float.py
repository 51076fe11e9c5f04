"""Compiled kernels of the float family: element-wise arithmetic split between threads, and sums
along a dim (`burn_ndarray.ops.float`, `burn_ndarray.ops.sums`).

- **Arithmetic** (`binary_flat`, `binary_rows`): on one thread NumPy's ufuncs are as fast, so
  these run only split, on numba's TBB pool. The op is an int (`burn_ndarray.kernels.ADD`...),
  tested outside the loops so that each loop vectorizes.
- **Row sums**: each row summed by one thread (so the result does not depend on the thread count),
  vectorized (``fastmath`` lets LLVM reorder the additions into SIMD lanes) in blocks of 4096
  elements whose sums are accumulated in float64; rounding differs from NumPy's pairwise sum.
- **Sums along an inner dim** (`sum_middle`): the rows of the trailing axes added in order, as
  NumPy reduces a middle axis (its bits), split by leading index or, when there are fewer leading
  indices than chunks, by column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from burn_ndarray.kernels import ADD, MUL, SUB
from burn_ndarray.kernels.jit import bounds, jit, jit_parallel
from burn_ndarray.runtime.split import run_chunks

Array = Any
ROW_BLOCK = 4096


@jit
def _apply(op: int, x: Array, y: Array, out: Array) -> None:
    """``out[j] = x[j] <op> y[j]`` on 1-D arrays; a `y` of length 1 is broadcast."""
    n = out.shape[0]
    if y.shape[0] == 1 and n != 1:
        s = y[0]
        if op == ADD:
            for j in range(n):
                out[j] = x[j] + s
        elif op == SUB:
            for j in range(n):
                out[j] = x[j] - s
        elif op == MUL:
            for j in range(n):
                out[j] = x[j] * s
        else:
            for j in range(n):
                out[j] = x[j] / s
    elif op == ADD:
        for j in range(n):
            out[j] = x[j] + y[j]
    elif op == SUB:
        for j in range(n):
            out[j] = x[j] - y[j]
    elif op == MUL:
        for j in range(n):
            out[j] = x[j] * y[j]
    else:
        for j in range(n):
            out[j] = x[j] / y[j]


@jit_parallel
def binary_flat(parts: int, op: int, x: Array, y: Array, out: Array) -> None:
    """``out = x <op> y`` on 1-D arrays of one size, chunks of elements on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        _apply(op, x[lo:hi], y[lo:hi], out[lo:hi])


@jit_parallel
def binary_rows(parts: int, op: int, x: Array, y: Array, out: Array) -> None:
    """``out[r] = x[r] <op> y[r // (rows / len(y))]`` on 2-D arrays, `y` with a divisor of
    ``out``'s rows (1: one row for all; all: one each; the batch count of a channels-last
    ``[B, H*W, C]`` times a per-image ``[B, C]``) and 1 or its columns (broadcast), chunks of rows
    on the pool."""
    rows = out.shape[0]
    repeat = rows // y.shape[0]
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        for r in range(lo, hi):
            _apply(op, x[r], y[r // repeat], out[r])


# Reassociation only (not fastmath=True, which would let LLVM assume no inf or NaN): each block of a row
# then vectorizes into several lane accumulators, as NumPy's and torch's float32 sums do, and the blocks add
# up in float64, so long rows keep float32 precision. The block sum must be its own function: inlined next
# to the float64 total, the loop did not vectorize (docs/benchmarks-log.md, burn-ndarray measurements).
@njit(cache=True, error_model="numpy", nogil=True, fastmath={"reassoc", "nsz"})
def _sum_block(v: Array, zero: Any) -> Any:
    total = zero
    for j in range(v.shape[0]):
        total += v[j]
    return total


@njit(cache=True, error_model="numpy", nogil=True, fastmath={"reassoc", "nsz"})
def sum_rows(x: Array, out: Array, zero: Any) -> None:
    """``out[r] = sum(x[r, :])`` for a C-contiguous 2-D `x`: blocks of ``ROW_BLOCK`` summed in
    x's dtype (`zero`), the blocks in float64."""
    rows, n = x.shape
    for r in range(rows):
        row = x[r]
        total = 0.0
        for start in range(0, n, ROW_BLOCK):
            total += _sum_block(row[start : start + ROW_BLOCK], zero)
        out[r] = total


@jit_parallel
def sum_rows_parallel(parts: int, x: Array, out: Array, zero: Any) -> None:
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        sum_rows(x[lo:hi], out[lo:hi], zero)


def row_sums(x: Array, parts: int) -> Array:
    """Sums of the rows of a C-contiguous 2-D float32/float64 array, shape ``(rows,)``, on
    `parts` threads."""
    out = np.empty(x.shape[0], x.dtype)
    run_chunks(sum_rows, sum_rows_parallel, (x, out), (x.dtype.type(0),), parts)
    return out


@jit
def sum_middle_serial(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = x[i, 0] + x[i, 1] + ...`` (rows of `x`'s last axis added in order, as NumPy
    reduces a middle axis) for `i` from `lo` to `hi`; `x` is ``(lead, length, inner)``."""
    for i in range(lo, hi):
        acc = out[i]
        first = x[i, 0]
        for c in range(acc.shape[0]):
            acc[c] = first[c]
        for k in range(1, x.shape[1]):
            row = x[i, k]
            for c in range(acc.shape[0]):
                acc[c] += row[c]


@jit_parallel
def sum_middle(parts: int, x: Array, out: Array) -> None:
    """`sum_middle_serial` over every leading index, chunks of them on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        sum_middle_serial(lo, hi, x, out)


@jit
def sum_middle_columns_serial(lo: int, hi: int, x: Array, out: Array) -> None:
    """`sum_middle_serial`'s sums (the same additions in the same order) for the columns `lo` to
    `hi` of the inner axis, at every leading index: the split when there are fewer leading indices
    than chunks (a bias gradient summed over the batch is ``(1, batch, features)``)."""
    for i in range(x.shape[0]):
        acc = out[i, lo:hi]
        first = x[i, 0, lo:hi]
        for c in range(hi - lo):
            acc[c] = first[c]
        for k in range(1, x.shape[1]):
            row = x[i, k, lo:hi]
            for c in range(hi - lo):
                acc[c] += row[c]


@jit_parallel
def sum_middle_columns(parts: int, x: Array, out: Array) -> None:
    """`sum_middle_columns_serial` over chunks of the inner axis on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[2], c, parts)
        sum_middle_columns_serial(lo, hi, x, out)
