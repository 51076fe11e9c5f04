"""Sums of small float tensors along their first or last dim as one BLAS matrix-vector product
with a vector of ones.

NumPy's ``add.reduce`` spends about a microsecond setting up any reduction, and more when it
reduces many short rows: summing a float32 ``[4, 4]`` along dim 1 takes 0.98 us against 0.35 us
for ``x.dot(ones)``, ``[128, 100]`` 5.4 against 1.0 us, ``[1024, 8]`` 19 against 1.0 us (one
thread, AVX-512 EPYC; docs/benchmarks.md). OpenBLAS's GEMV sums in float32 with several SIMD
accumulators: against a float64 reference its relative error is 1-3e-7 along rows of 64 to 64K
elements (NumPy's pairwise sum: 1e-7) and 1e-7 to 4e-6 down columns (NumPy's row-by-row sum:
3e-7 to 9e-6). NaN and infinities propagate as in the reduce; a sum of zeros is +0.0 as in NumPy.

Only tensors below `MAX_SIZE` elements take this path: OpenBLAS runs GEMV on one thread below
``2304 * 4`` elements (its multithreading threshold), so the bits do not depend on the thread
count; larger sums have their own compiled kernels (`_parallel`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray._dtypes import F32

Array = Any
# Below OpenBLAS's GEMV multithreading threshold (9216 elements): one thread, the same bits at
# every thread count.
MAX_SIZE = 1 << 13
# Vectors of ones by length (below MAX_SIZE), one cache per dtype (a dict keyed by an int is
# 70 ns faster than by a (length, dtype) tuple, a third of a 4x4 sum), each vector as a column and as
# a row; a cache is emptied when it holds _ONES_KEPT lengths, so a sweep over many keeps no memory.
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
