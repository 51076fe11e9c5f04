"""The float family's sums along a dim (`float_sum_dim`, `float_mean_dim`), by size: small ones
as one BLAS matrix-vector product with a vector of ones (`gemv_sum`), large ones by the compiled
row and inner-dim kernels (`compiled_sum`, `burn_ndarray.kernels.float`).

NumPy's ``add.reduce`` spends about a microsecond setting up any reduction, and more when it
reduces many short rows: summing a float32 ``[4, 4]`` along dim 1 takes 0.98 us against 0.35 us
for ``x.dot(ones)``, ``[128, 100]`` 5.4 against 1.0 us, ``[1024, 8]`` 19 against 1.0 us (one
thread, AVX-512 EPYC; docs/benchmarks-log.md). OpenBLAS's GEMV sums in float32 with several SIMD
accumulators: against a float64 reference its relative error is 1-3e-7 along rows of 64 to 64K
elements (NumPy's pairwise sum: 1e-7) and 1e-7 to 4e-6 down columns (NumPy's row-by-row sum:
3e-7 to 9e-6). NaN and infinities propagate as in the reduce; a sum of zeros is +0.0 as in NumPy.

Only tensors below `MAX_SIZE` elements take the GEMV: OpenBLAS runs GEMV on one thread below
``2304 * 4`` elements (its multithreading threshold), so the bits do not depend on the thread
count; from `ROW_SUM_MIN_SIZE` elements the compiled kernels take the sums (split between threads
as `burn_ndarray.runtime.split` warrants), between the two NumPy's reduce.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from burn_ndarray import kernels
from burn_ndarray.runtime import split
from burn_ndarray.runtime.dtypes import F32, F64

Array = Any
_ndarray = np.ndarray
# The compiled row sum beats NumPy's from this size on, even on one thread.
ROW_SUM_MIN_SIZE = 1 << 14
# A sum along a middle dim with fewer leading indices than chunks splits its columns, when each
# chunk gets at least this many.
MIDDLE_SUM_MIN_COLUMNS = 64
# Below OpenBLAS's GEMV multithreading threshold (9216 elements): one thread, the same bits at
# every thread count.
MAX_SIZE = 1 << 13
# Vectors of ones by length (below MAX_SIZE), one cache per dtype (a dict keyed by an int is faster than by
# a (length, dtype) tuple: docs/benchmarks-log.md), each vector as a column and as a
# row; a cache is emptied when it holds _ONES_KEPT lengths, so a sweep keeps no memory.
_ONES_F32: dict[int, tuple[Array, Array]] = {}
_ONES_F64: dict[int, tuple[Array, Array]] = {}
_ONES_KEPT = 64


def _ones(length: int, dtype: Any) -> tuple[Array, Array]:
    """A read-only ``(length, 1)`` column and ``(1, length)`` row of ones of `dtype` (float32 or
    float64)."""
    cache = _ONES_F32 if dtype is F32 else _ONES_F64
    pair = cache.get(length)
    if pair is None:
        if len(cache) >= _ONES_KEPT:
            cache.clear()
        ones = np.ones(length, dtype)
        ones.flags.writeable = False
        pair = cache[length] = (ones.reshape(length, 1), ones.reshape(1, length))
    return pair


def gemv_sum(tensor: Array, dim: int, dtype: Any) -> Array | None:
    """``tensor.sum(dim, keepdims=True)`` of a float32 or float64 (`dtype`) array below `MAX_SIZE`
    elements by GEMV when `dim` is its first or last dim (any layout for 2-D, C-contiguous
    otherwise); None for the caller's reduce otherwise (or when it is empty).

    Example:
        >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
        >>> gemv_sum(x, 1, x.dtype).tolist()
        [[3.0], [12.0]]
    """
    shape = tensor.shape
    ndim = len(shape)
    if ndim == 2:
        if not tensor.size:
            return None
        if dim == 1:
            return tensor.dot(_ones(shape[1], dtype)[0])
        return _ones(shape[0], dtype)[1].dot(tensor)
    if not tensor.size or not tensor.flags.c_contiguous:
        return None
    if dim == ndim - 1:
        length = shape[dim]
        sums = tensor.reshape(-1, length).dot(_ones(length, dtype)[0])
        return sums.reshape(shape[:dim] + (1,))
    if dim == 0:
        sums = _ones(shape[0], dtype)[1].dot(tensor.reshape(shape[0], -1))
        return sums.reshape((1,) + shape[1:])
    return None


def compiled_sum(tensor: Array, dim: int) -> Array | None:
    """Sums along `dim` (kept as size 1) of a large C-contiguous float32/float64 array by the
    compiled row kernel, or None for the single-threaded op."""
    if tensor.__class__ is not _ndarray or tensor.size < ROW_SUM_MIN_SIZE:
        return None
    dtype, shape = tensor.dtype, tensor.shape
    if dtype is not F32 and dtype is not F64:
        return None
    dim %= len(shape)
    if not tensor.flags.c_contiguous:
        return _sum_dim_in_memory_order(tensor, dim)
    length = shape[dim]
    if length < 2:
        return None
    kept = shape[:dim] + (1,) + shape[dim + 1 :]
    if dim == len(shape) - 1:
        compiled = kernels.load("float")
        if compiled is None:
            return None
        rows = tensor.reshape(-1, length)
        parts = split.compiled_parts(tensor.size, split.ROW_SUM_PER_THREAD, split.NATIVE_ROW_SUM_PER_THREAD)
        return compiled.row_sums(rows, parts).reshape(kept)  # type: ignore[no-any-return]
    # Along an inner dim: rows of the trailing axes added in order, compiled (NumPy's bits, faster
    # than its reduce), chunks of leading indices, or of columns when there are fewer leading
    # indices than chunks (a sum over the first dim; docs/benchmarks-log.md, burn-ndarray measurements).
    sums = _sum_middle(tensor.reshape(math.prod(shape[:dim]), length, -1))
    return None if sums is None else sums.reshape(kept)


def _sum_middle(view: Array) -> Array | None:
    """``view.sum(axis=1)`` of a C-contiguous ``(lead, length, inner)`` array, as ``(lead, 1,
    inner)``, by `burn_ndarray.kernels.float.sum_middle` on the threads the size warrants; None
    without numba."""
    compiled = kernels.load("float")
    if compiled is None:
        return None
    lead, inner = view.shape[0], view.shape[2]
    out = np.empty((lead, inner), view.dtype)
    parts = split.compiled_parts(view.size, split.ROW_SUM_PER_THREAD, split.NATIVE_ROW_SUM_PER_THREAD)
    if lead < parts and inner >= 2 * MIDDLE_SUM_MIN_COLUMNS:
        # Fewer leading indices than chunks (a sum over the batch): chunks of columns instead,
        # of `MIDDLE_SUM_MIN_COLUMNS` at least.
        parts = min(parts, inner // MIDDLE_SUM_MIN_COLUMNS)
        serial, parallel, count = compiled.sum_middle_columns_serial, compiled.sum_middle_columns, inner
    else:
        serial, parallel, count = compiled.sum_middle_serial, compiled.sum_middle, lead
    split.run_ranges(serial, parallel, count, parts, view, out)
    return out.reshape(lead, 1, -1)


def _sum_dim_in_memory_order(tensor: Array, dim: int) -> Array | None:
    """The sum along `dim` of a dense array in a permuted layout (conv2d's channels-last
    gradients: the bias gradient sums them over W, H and N), taken along the matching axis of its
    C-contiguous memory view (`_sum_middle`, or the row kernel when that axis is the innermost)
    and viewed back; None if the array has gaps."""
    if split.flat_in_memory_order(tensor) is None:
        return None
    order = sorted(range(tensor.ndim), key=lambda axis: -tensor.strides[axis])
    sums = compiled_sum(tensor.transpose(order), order.index(dim))
    return None if sums is None else sums.transpose(np.argsort(order))
