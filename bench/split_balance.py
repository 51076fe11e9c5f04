"""How evenly ViT-tiny's batch-1 work shares between two threads, with the even splits of
burn-ndarray (attention's query rows, `runtime.gemm.even`) against the splits before them (put
back by patching those two functions), in one process, alternated call by call.

Usage: ``python bench/split_balance.py [--model]`` (``--model``: also whole ViT-tiny inference
calls at 2 threads, which needs torch, onnx, onnxruntime and transformers, as the models section).

On a machine whose second core is held by other processes, the wall time of a 2-thread call says
little, so the first two tables give the critical path: the CPU time (``time.thread_time``) of
the work each thread takes, the larger of the two being the call's time on two free cores, less
the hand-offs. Attention: measured inside the threads' chunks. GEMM blocks: each block timed on
one BLAS thread, handed in order to the thread with less work so far (TBB's one block at a time).
"""

from __future__ import annotations

import argparse
import collections
import sys
import threading
import time
from typing import Any

import numpy as np


def _splits(new: bool) -> None:
    import burn_ndarray.ops.attention as attention
    from burn_ndarray.runtime import gemm

    if not hasattr(_splits, "saved"):
        _splits.saved = (gemm.even, attention._row_chunks)  # type: ignore[attr-defined]
    even, row_chunks = _splits.saved  # type: ignore[attr-defined]
    gemm.even = even if new else (lambda length, width, blocks, count: (width, blocks))
    attention._row_chunks = row_chunks if new else (lambda query, chunks: None)


def attention_path(calls: int = 600) -> None:
    import burn_ndarray.ops.attention as attention

    forward = attention._forward
    per_thread: dict[int, float] = collections.defaultdict(float)

    def timed(*args: Any, **kwargs: Any) -> None:
        start = time.thread_time()
        forward(*args, **kwargs)
        per_thread[threading.get_ident()] += time.thread_time() - start

    attention._forward = timed
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 3, 197, 64), dtype=np.float32) for _ in range(3))
    ops = attention.AttentionOps()
    found: dict[str, list[tuple[float, float]]] = {"before": [], "even": []}
    for i in range(2 * calls):
        name = ("before", "even")[i % 2]
        _splits(name == "even")
        per_thread.clear()
        attention.AttentionOps.attention(ops, q, k, v, None, 0.125, False)
        if i >= 100:
            found[name].append((max(per_thread.values()), sum(per_thread.values())))
    attention._forward = forward
    for name, rows in found.items():
        path, total = np.median(np.array(rows), axis=0) * 1e6
        print(f"attention [1, 3, 197, 64], {name}: critical path {path:.0f} us, CPU {total:.0f} us")


def gemm_path(rounds: int = 300) -> None:
    from burn_ndarray.runtime import blas, gemm

    rng = np.random.default_rng(0)
    for rows, inner, cols in ((197, 768, 192), (197, 192, 576), (197, 192, 768)):
        a = rng.standard_normal((rows, inner), dtype=np.float32)
        b = rng.standard_normal((inner, cols), dtype=np.float32)
        plans = {}
        for name in ("before", "even"):
            _splits(name == "even")
            axis, width, blocks = gemm.cut(rows, cols, 2)
            length = cols if axis == 1 else rows
            plans[name] = (axis, width, [(i * width, min(length, (i + 1) * width)) for i in range(blocks)])
        times: dict[str, list[float]] = {"before": [], "even": []}
        with blas.single_threaded():
            for _ in range(rounds):
                for name, (axis, _, blocks) in plans.items():
                    loads = [0.0, 0.0]
                    for lo, hi in blocks:
                        start = time.thread_time()
                        np.matmul(a, b[:, lo:hi]) if axis == 1 else np.matmul(a[lo:hi], b)
                        loads[loads.index(min(loads))] += time.thread_time() - start
                    times[name].append(max(loads))
        line = ", ".join(
            f"{name} {len(plans[name][2])} x {plans[name][1]}: {np.median(t) * 1e6:.0f} us"
            for name, t in times.items()
        )
        ratio = np.median(times["even"]) / np.median(times["before"])
        print(f"GEMM [{rows}, {inner}] @ [{inner}, {cols}] critical path, {line}; even/before {ratio:.2f}")


def model(calls: int = 40) -> None:
    sys.path.insert(0, "bench")
    from harness import setup_torch
    from workloads.models import SPECS, inference

    fn = inference(setup_torch(), SPECS["vit_tiny"], 1, 2).fns["burn"]
    times: dict[str, list[float]] = {"before": [], "even": []}
    for _ in range(calls):
        for name in times:
            _splits(name == "even")
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    before, even = (np.median(t[2:]) * 1e3 for t in times.values())
    print(
        f"ViT-tiny batch 1, 2 threads, wall: before {before:.1f} ms, even {even:.1f} ms,"
        f" even/before {even / before:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", action="store_true", help="also whole ViT-tiny calls (wall time)")
    args = parser.parse_args()
    sys.path.insert(0, "bench")
    from harness import pin_threads

    pin_threads(2)
    import burn_ndarray

    burn_ndarray.set_num_threads(2)
    attention_path()
    gemm_path()
    if args.model:
        model()


if __name__ == "__main__":
    main()
