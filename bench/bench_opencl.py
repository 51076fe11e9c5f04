"""burn-opencl benchmarks, side by side in one process: GEMM throughput against NumPy, per-op
overhead on tiny tensors against NumPy and PyTorch eager (CPU), and an MLP training step on
``autodiff(opencl)`` against ``autodiff(ndarray)``.

Run from the repository root (the packages need not be installed)::

    export PYTHONPATH=packages/burn-core/src:packages/burn-ndarray/src
    export PYTHONPATH=$PYTHONPATH:packages/burn-autodiff/src:packages/burn-opencl/src
    python bench/bench_opencl.py [--quick]

Every number is the best of several repeats (the machine may be shared); kernels are compiled
and caches warmed before timing.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def best(fn: Callable[[], Any], repeats: int, inner: int = 1) -> float:
    """Best seconds per call of `fn` over `repeats` rounds of `inner` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return min(times)


def register() -> None:
    import burn.plugins as bp

    for name in ("burn_ndarray.plugin", "burn_autodiff.plugin", "burn_opencl.plugin"):
        try:
            module = __import__(name, fromlist=["_"])
        except ImportError:
            continue
        bp.register(module)


def bench_gemm(size: int, repeats: int) -> list[str]:
    import burn

    lines = []
    for dtype in ("float32", "float64"):
        B = burn.backend("opencl", float_dtype=dtype)
        device = B.default_device()
        rng = np.random.default_rng(0)
        a_np = rng.standard_normal((size, size)).astype(dtype)
        b_np = rng.standard_normal((size, size)).astype(dtype)
        a = burn.Tensor.from_data(a_np, device=device)
        b = burn.Tensor.from_data(b_np, device=device)

        def run_burn(a: Any = a, b: Any = b, B: Any = B) -> None:
            a.matmul(b)
            B.sync()

        flops = 2.0 * size**3
        t_cl = best(run_burn, repeats)
        t_np = best(lambda a_np=a_np, b_np=b_np: a_np @ b_np, repeats)
        err = float(np.abs(a.matmul(b).to_numpy() - a_np @ b_np).max())
        lines.append(
            f"GEMM {size}x{size} {dtype}: opencl {flops / t_cl / 1e9:7.1f} GFLOP/s   "
            f"numpy {flops / t_np / 1e9:7.1f} GFLOP/s   ratio {t_np / t_cl:4.2f}   (max abs diff {err:.1e})"
        )
    return lines


def bench_overhead(repeats: int) -> list[str]:
    import burn

    B = burn.backend("opencl")
    device = B.default_device()
    x_np = np.ones(4, np.float32)
    x = burn.Tensor.from_data(x_np, device=device)
    p = x._p if hasattr(x, "_p") else None
    inner = 2000
    rows = [("burn opencl Tensor x + x", lambda: x + x)]
    if p is not None:
        rows.append(("burn opencl backend float_add", lambda: B.float_add(p, p)))
        rows.append(("burn opencl backend float_exp", lambda: B.float_exp(p)))
        rows.append(("burn opencl backend float_sum", lambda: B.float_sum(p)))
    rows.append(("numpy x + x", lambda: x_np + x_np))
    try:
        import torch

        tx = torch.ones(4)
        rows.append(("torch eager (CPU) x + x", lambda: tx + tx))
    except ImportError:
        pass
    lines = []
    for label, fn in rows:
        per = best(fn, repeats, inner)
        B.sync()
        lines.append(f"per-op overhead, shape (4,): {label:34s} {per * 1e6:7.2f} us/op")
    return lines


def bench_mlp(repeats: int) -> list[str]:
    """One SGD step of a 2-layer MLP (batch 64, 32 -> 128 -> 10, MSE) written with tensor ops."""
    import burn
    from burn import activation

    lines = []
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((64, 32)).astype(np.float32)
    y_np = rng.standard_normal((64, 10)).astype(np.float32)
    w1_np = (rng.standard_normal((32, 128)) * 0.1).astype(np.float32)
    w2_np = (rng.standard_normal((128, 10)) * 0.1).astype(np.float32)
    times = {}
    for name in ("autodiff(ndarray)", "autodiff(opencl)"):
        try:
            B = burn.backend(name)
        except Exception as exc:  # a backend missing here
            lines.append(f"MLP step on {name}: unavailable ({exc})")
            continue
        device = B.default_device()
        x = burn.Tensor.from_data(x_np, device=device)
        y = burn.Tensor.from_data(y_np, device=device)
        params = [burn.Tensor.from_data(w, device=device).require_grad() for w in (w1_np, w2_np)]

        def step(x: Any = x, y: Any = y, params: list[Any] = params, B: Any = B) -> None:
            w1, w2 = params
            loss = ((activation.relu(x.matmul(w1)).matmul(w2) - y) ** 2).mean()
            grads = loss.backward()
            for i, w in enumerate(params):
                g = w.grad(grads)
                params[i] = burn.Tensor.from_inner(w.inner() - g * 0.01).require_grad()
            B.sync()

        times[name] = best(step, repeats, 20)
        lines.append(f"MLP training step on {name:18s} {times[name] * 1e3:7.3f} ms/step")
    if len(times) == 2:
        lines.append(
            f"MLP step ratio autodiff(opencl) / autodiff(ndarray): "
            f"{times['autodiff(opencl)'] / times['autodiff(ndarray)']:.2f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--size", type=int, default=1024, help="GEMM size (default 1024)")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    register()
    import burn

    B = burn.backend("opencl")
    print(
        f"# burn-opencl benchmarks, {time.strftime('%Y-%m-%d')}, {platform.machine()} "
        f"{platform.processor() or ''}"
    )
    print(f"# devices: {', '.join(B.device_names())}; default {B.default_device()}")
    for line in bench_gemm(args.size, repeats) + bench_overhead(repeats) + bench_mlp(repeats):
        print(line)


if __name__ == "__main__":
    main()
