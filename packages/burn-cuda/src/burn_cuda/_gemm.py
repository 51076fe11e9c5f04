"""Matmul of burn-cuda: one cuBLAS GEMM call of its own (`_cublas`), capturable in CUDA graphs.

float16/32/64 operands of one dtype and rank >= 2 take the direct call, with the layout rules of
`_gemm_plan` (transposed views passed as stored, a broadcast batch as stride 0); it also skips
most of ``cupy.matmul``'s per-call work on the host. Anything else (integers, mixed dtypes,
vectors, or no cuBLAS found) is ``cupy.matmul``, as are empty products.
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn_cuda import _cublas
from burn_cuda._gemm_plan import broadcast_batch, plan

Array = Any


def matmul(a: Array, b: Array) -> Array:
    """``a @ b`` with NumPy's matmul semantics (leading dims broadcast)."""
    dtype = a.dtype
    direct = a.ndim >= 2 and b.ndim >= 2 and b.dtype == dtype and a.device.id == b.device.id
    lib = _cublas.library() if direct else None
    if lib is None or dtype not in _cublas.TYPES or a.shape[-1] != b.shape[-2]:
        return cp.matmul(a, b)  # its own error names a shape mismatch
    batch = broadcast_batch(a.shape, b.shape)
    if batch is None:
        return cp.matmul(a, b)
    m, n, k = a.shape[-2], b.shape[-1], a.shape[-1]
    with cp.cuda.Device(a.device.id):
        if m == 0 or n == 0 or k == 0 or 0 in batch:
            return cp.zeros(batch + (m, n), dtype=dtype)
        a2, b2, call = plan(cp, a, b, batch)
        out = cp.empty(batch + (m, n), dtype=dtype)
        _cublas.gemm(lib, call, a2, b2, out)
    return out
