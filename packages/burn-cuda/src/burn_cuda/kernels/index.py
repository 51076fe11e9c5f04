"""Kernels of gather and scatter-add along a dim (every kind's gather, the float and int scatter-add
and select-add, and the gradient of max pooling): sums by atomics."""

from __future__ import annotations

import cupy as cp

# out[pos] += v for every element whose index along the scattered dim is in [0, size): repeated
# positions accumulate (atomics); out-of-range indices are skipped, never written out of bounds.
# T is float32, float64 or uint64 (ints add as two's complement 64-bit words, then wrap on the cast).
scatter_add = cp.ElementwiseKernel(
    "int64 pos, T v, int64 index, int64 size",
    "raw T out",
    "if (index >= 0 && index < size) { atomicAdd(&out[pos], v); }",
    "burn_scatter_add",
)

# Gather and scatter-add along `dim` where the index has the tensor's shape but for `dim`: with the
# tensor contiguous, element i of the index names row ``(o * X + index) * inner + in`` (o: the
# position before `dim`, in: after). One kernel instead of take_along_axis's or the flat positions'
# dozen array calls. Like CuPy's indexing, gather wraps an index into ``[0, X)``; scatter skips
# an index outside it (as `scatter_add`).
gather_along = cp.ElementwiseKernel(
    "raw T x, I index, int64 X, int64 J, int64 inner",
    "T y",
    """
    const long long in = i % inner;
    const long long o = i / inner / J;
    long long k = (long long)index % X;
    if (k < 0) k += X;
    y = x[(o * X + k) * inner + in];
    """,
    "burn_gather_along",
)

scatter_add_along = cp.ElementwiseKernel(
    "T v, I index, int64 X, int64 J, int64 inner",
    "raw T out",
    """
    const long long in = i % inner;
    const long long o = i / inner / J;
    const long long k = (long long)index;
    if (k >= 0 && k < X) { atomicAdd(&out[(o * X + k) * inner + in], v); }
    """,
    "burn_scatter_add_along",
)
