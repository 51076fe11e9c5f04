"""Matmul of burn-cuda: ``cupy.matmul``, or while a stream is being captured into a CUDA graph
(and during `burn_cuda.graphs`' warm-up runs, so that capture meets no first use), one cuBLAS
GEMM call of burn-cuda's own (`_cublas`).

CuPy refuses cuBLAS during capture. Eager calls keep ``cupy.matmul``: its Cython path costs the
host less than a ctypes call with the layout planning in Python (`bench/gpu_overhead.py` on an
H100 machine: 20.5 us per 64x64 product against 39.3 for the direct call), and per-call host
time is what bounds the eager steps of small models. The direct call takes float16, bfloat16, float32
and float64 operands of one dtype and rank >= 2, with the layout rules of `_gemm_plan`
(transposed views passed as stored, a broadcast batch as stride 0); anything else stays
``cupy.matmul``. bfloat16 always takes the direct call (CUDA_R_16BF operands, float32
accumulation): CuPy 14 multiplies 2-D bfloat16 matrices but refuses batched ones.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import cupy as cp

from burn_cuda import _cublas
from burn_cuda._dtypes import BF16
from burn_cuda._gemm_plan import broadcast_batch, plan

Array = Any


class _Mode(threading.local):
    direct = False


_mode = _Mode()


@contextmanager
def direct_calls() -> Iterator[None]:
    """Within: every matmul of this thread takes the direct call (a graph's warm-up runs)."""
    previous, _mode.direct = _mode.direct, True
    try:
        yield
    finally:
        _mode.direct = previous


def matmul(a: Array, b: Array) -> Array:
    """``a @ b`` with NumPy's matmul semantics (leading dims broadcast)."""
    if _mode.direct or a.dtype == BF16:  # CuPy 14's batched matmul has no bfloat16 ('E') loop
        return cublas_matmul(a, b)
    stream = cp.cuda.get_current_stream()
    if stream.ptr != 0 and stream.is_capturing():  # the legacy default stream is never captured
        return cublas_matmul(a, b)
    return cp.matmul(a, b)


def cublas_matmul(a: Array, b: Array) -> Array:
    """``a @ b`` through burn-cuda's own cuBLAS call where it applies, else ``cupy.matmul``."""
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
