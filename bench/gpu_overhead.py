"""Host time per call of the CuPy primitives burn-cuda is built from, next to PyTorch's.

A small model's training step on a GPU is bound by the host: each op costs its Python and launch
overhead whatever its size. This prints microseconds per call (no sync inside the loop; the queue
is drained before and after), to choose the cheapest way to launch each kind of op.

    python bench/gpu_overhead.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import cupy as cp
import numpy as np


def per_call_us(fn: Callable[[], object], calls: int = 2000) -> float:
    for _ in range(50):
        fn()
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - t0
    cp.cuda.Device().synchronize()
    return elapsed / calls * 1e6


def main() -> None:
    a = cp.ones((64, 64), cp.float32)
    b = cp.ones((64, 64), cp.float32)
    v = cp.ones(4096, cp.float32)
    s = np.float32(0.5)
    ten = cp.ElementwiseKernel(
        "T p, T g, T m0, T v0, T b1, T b2, T c1, T c2, T st, T eps",
        "T o, T m, T w",
        "m = m0 * b1 + g * c1; w = v0 * b2 + g * g * c2; o = p - m / (sqrt(w) + eps) * st;",
        "overhead_ten_args",
    )
    raw = cp.RawKernel(
        r"""extern "C" __global__ void overhead_raw(const float* x, float* y, float s, long long n) {
            long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
            if (i < n) y[i] = x[i] * s;
        }""",
        "overhead_raw",
    )
    out = cp.empty_like(v)
    n = np.int64(v.size)
    from burn_cuda import _gemm

    rows = {
        "cupy.matmul 64x64": lambda: cp.matmul(a, b),
        "burn_cuda._gemm.matmul 64x64 (eager: cupy.matmul)": lambda: _gemm.matmul(a, b),
        "burn_cuda._gemm.cublas_matmul 64x64 (own cuBLAS call)": lambda: _gemm.cublas_matmul(a, b),
        "burn_cuda._gemm.cublas_matmul(a, b.T)": lambda: _gemm.cublas_matmul(a, b.T),
        "cupy.dot 64x64": lambda: cp.dot(a, b),
        "a @ b.T (view)": lambda: a @ b.T,
        "cupy.dot(a, b.T)": lambda: cp.dot(a, b.T),
        "x * float32 scalar": lambda: v * s,
        "cupy.multiply(x, scalar)": lambda: cp.multiply(v, s),
        "x + y": lambda: v + v,
        "ElementwiseKernel, 10 inputs 3 outputs": lambda: ten(v, v, v, v, s, s, s, s, s, s),
        "RawKernel launch": lambda: raw((16,), (256,), (v, out, s, n)),
        "x.sum(axis=0) 64x64": lambda: a.sum(axis=0),
        "cupy.arange(64)": lambda: cp.arange(64),
        "x.reshape": lambda: a.reshape(4096),
        "x.astype(same, copy=False)": lambda: a.astype(cp.float32, copy=False),
        "cupy.empty": lambda: cp.empty((64, 64), cp.float32),
        "cupy.zeros": lambda: cp.zeros((64, 64), cp.float32),
    }
    print("| call | host µs per call |\n|---|---|")
    for name, fn in rows.items():
        print(f"| {name} | {per_call_us(fn):.1f} |", flush=True)
    try:
        import torch
    except ImportError:
        return
    ta = torch.ones((64, 64), device="cuda")
    tv = torch.ones(4096, device="cuda")
    for name, fn in {
        "torch: a @ b": lambda: ta @ ta,
        "torch: x * 0.5": lambda: tv * 0.5,
        "torch: x + y": lambda: tv + tv,
        "torch: x.sum(0)": lambda: ta.sum(0),
    }.items():
        print(f"| {name} | {per_call_us(fn):.1f} |", flush=True)


if __name__ == "__main__":
    main()
