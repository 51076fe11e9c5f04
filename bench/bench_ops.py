"""Per-op overhead on tiny tensors and throughput on large ones: burn(ndarray) vs torch vs NumPy.

Run: ``python bench/bench_ops.py`` (``--backend NAME`` to time another burn backend,
``--quick`` for a short run). Prints Markdown tables with µs per op and the ratios.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from harness import Row, machine, print_table, setup_torch, threads, time_call  # noqa: E402

import burn  # noqa: E402


def run(backend_name: str, size: int, min_time: float) -> list[Row]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    B = burn.backend(backend_name)
    ta = burn.Tensor.from_data(a, backend=B)
    tb = burn.Tensor.from_data(b, backend=B)
    torch = setup_torch()
    xa = torch.from_numpy(a.copy()) if torch else None
    xb = torch.from_numpy(b.copy()) if torch else None
    flat = (size * size,)

    ops = {
        "add": (lambda: ta + tb, (lambda: xa + xb) if torch else None, lambda: np.add(a, b)),
        "mul": (lambda: ta * tb, (lambda: xa * xb) if torch else None, lambda: np.multiply(a, b)),
        "matmul": (lambda: ta @ tb, (lambda: xa @ xb) if torch else None, lambda: np.matmul(a, b)),
        "sum_dim": (
            lambda: ta.sum_dim(1),
            (lambda: xa.sum(1, keepdim=True)) if torch else None,
            lambda: np.sum(a, axis=1, keepdims=True),
        ),
        "reshape": (
            lambda: ta.reshape(flat),
            (lambda: xa.reshape(flat)) if torch else None,
            lambda: a.reshape(flat),
        ),
    }
    rows = []
    for name, (fb, ft, fn) in ops.items():
        rows.append(
            Row(
                f"{name} {size}x{size}",
                time_call(fb, min_time=min_time),
                time_call(ft, min_time=min_time) if ft else None,
                time_call(fn, min_time=min_time),
                unit="us" if size <= 64 else "ms",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="ndarray")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    min_time = 0.05 if args.quick else 0.3
    print(f"# burn per-op benchmark — {datetime.date.today()} — {machine()}\n")
    print(f"backend: {args.backend}; threads: {threads()}\n")
    print_table("tiny tensors (4x4 float32): per-op overhead", run(args.backend, 4, min_time))
    print_table("large tensors (1024x1024 float32)", run(args.backend, 1024, min_time))


if __name__ == "__main__":
    main()
