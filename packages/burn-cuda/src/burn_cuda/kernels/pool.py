"""Max pooling with indices as one CUDA kernel: a thread per output element walks its window.

The array version (a padded window view, a ``[..., KH*KW]`` copy, argmax, a gather and the index
arithmetic) is about ten CuPy calls, and a small CNN's step on the GPU is bound by the host time
of such calls, not by the GPU. The kernel keeps the array version's answer exactly: padding reads
as -inf, the first maximum wins, a NaN beats every number (NumPy's argmax), and the index is
``h * W + w`` in the unpadded input plane.
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

Array = Any
Pair = tuple[int, int]

_max_pool2d = cp.ElementwiseKernel(
    "raw T x, int64 H, int64 W, int64 OH, int64 OW, int64 KH, int64 KW, int64 SH, int64 SW, "
    "int64 PH, int64 PW, int64 DH, int64 DW, T neg_inf",
    "T y, I idx",
    """
    const long long ow = i % OW;
    const long long oh = (i / OW) % OH;
    const long long base = (i / (OW * OH)) * H * W;
    T best = neg_inf;
    long long best_at = 0;
    bool first = true;
    for (long long kh = 0; kh < KH; ++kh) {
        const long long h = oh * SH - PH + kh * DH;
        for (long long kw = 0; kw < KW; ++kw) {
            const long long w = ow * SW - PW + kw * DW;
            const T v = (h >= 0 && h < H && w >= 0 && w < W) ? x[base + h * W + w] : neg_inf;
            if (first || v > best || (isnan(v) && !isnan(best))) {
                best = v;
                best_at = h * W + w;
                first = false;
            }
        }
    }
    y = best;
    idx = (I)best_at;
    """,
    "burn_max_pool2d_with_indices",
)


def max_pool2d_with_indices(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out: Pair, index_dtype: np.dtype
) -> tuple[Array, Array]:
    """Values and flat plane indices ``[N, C, OH, OW]`` of the max over each window of `x`."""
    n, c, h, w = x.shape
    x = cp.ascontiguousarray(x)
    values = cp.empty((n, c, *out), dtype=x.dtype)
    indices = cp.empty((n, c, *out), dtype=index_dtype)
    _max_pool2d(
        x, h, w, out[0], out[1], kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1],
        dilation[0], dilation[1], x.dtype.type(-np.inf), values, indices,
    )  # fmt: skip
    return values, indices
