"""What the second core buys burn-ndarray, as paired variants inside one process (docs/benchmarks-log.md,
"The second core"): on a shared machine only ratios taken in the same run mean anything.

Usage:
    ``python bench/second_core.py gemm``: 2-D GEMMs of transformer shapes, OpenBLAS at 1 and 2 threads
    and the blocked GEMM (`burn_ndarray.runtime.gemm`) at 2, median / 10th percentile of 200 calls.
    ``python bench/second_core.py model MODEL [--batch 1] [--rounds 5]``: one model of the ``models``
    section, burn at 2 threads (as shipped: blocked GEMMs and `runtime.busy` following the load;
    blocks only; neither, the code before them; the BLAS on one thread) and at 1, onnxruntime at 2
    and 1, interleaved round by round, best of 5 calls a round; prints best and median of the
    rounds (ms).
Needs torch, onnx, onnxruntime and transformers for ``model``, like the ``models`` section.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

Fn = Callable[[], object]


def _percentiles(fn: Fn, calls: int = 200) -> str:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return f"{times[calls // 2] * 1e6:.0f} / {times[calls // 10] * 1e6:.0f}"


def gemm_table() -> None:
    import numpy as np

    import burn_ndarray
    from burn_ndarray.runtime import blas, gemm

    burn_ndarray.set_num_threads(2)
    rng = np.random.default_rng(0)
    print("| [M, K] @ [K, N] | OpenBLAS 1 thread | OpenBLAS 2 threads | blocks, 2 threads |")
    print("|---|---:|---:|---:|")
    for m, k, n in [(128, 256, 256), (128, 256, 1024), (128, 1024, 256), (1024, 256, 1024)]:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        blas.set_threads(1)
        one = _percentiles(partial(a.dot, b))
        blas.set_threads(2)
        two = _percentiles(partial(a.dot, b))
        blocks = _percentiles(partial(gemm.matmul, a, b))
        print(f"| [{m}, {k}] @ [{k}, {n}] | {one} | {two} | {blocks} |", flush=True)


def model_variants(name: str, batch: int, rounds: int) -> None:
    from harness import load_average, setup_torch
    from workloads.models import SPECS, inference

    import burn
    from burn_ndarray.runtime import blas, busy, gemm

    torch = setup_torch()
    spec = SPECS[name]
    two, one = inference(torch, spec, batch, 2), inference(torch, spec, batch, 1)
    blocks_from, period = gemm.MIN_MACS, busy.PERIOD

    def variant(threads: int, blas_threads: int, min_macs: int, follow: bool = True) -> Callable[[], None]:
        def setup() -> None:
            gemm.MIN_MACS = min_macs
            busy.PERIOD = period if follow else float("inf")
            busy._state["at"] = -period  # a fresh look at the load on the next matmul
            burn.set_num_threads(threads)
            if blas_threads != threads:
                blas.set_threads(blas_threads)

        return setup

    never = 1 << 62
    cases: dict[str, tuple[Callable[[], None], Fn]] = {
        "burn 2 (blocks, follow)": (variant(2, 2, blocks_from), two.fns["burn"]),
        "burn 2 blocks only": (variant(2, 2, blocks_from, follow=False), two.fns["burn"]),
        "burn 2 before": (variant(2, 2, never, follow=False), two.fns["burn"]),
        "burn 2, BLAS 1": (variant(2, 1, blocks_from, follow=False), two.fns["burn"]),
        "burn 1": (variant(1, 1, blocks_from), two.fns["burn"]),
        "ort 2": (variant(2, 2, blocks_from), two.fns["ort"]),
        "ort 1": (variant(2, 2, blocks_from), one.fns["ort"]),
    }
    results: dict[str, list[float]] = {case: [] for case in cases}
    print(f"{name}, batch {batch}, load average at start {load_average()}", flush=True)
    for _ in range(rounds):
        for case, (setup, fn) in cases.items():
            setup()
            fn()  # warm after the switch
            best = min(_timed(fn) for _ in range(5))
            results[case].append(best * 1e3)
    for case, values in results.items():
        print(f"{case:24s} best {min(values):9.2f}  median of rounds {statistics.median(values):9.2f} ms")
    print(f"load average at end {load_average()}")


def _timed(fn: Fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", choices=["gemm", "model"])
    parser.add_argument("model", nargs="?", default="bert")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from harness import pin_threads

    pin_threads(2)  # before NumPy loads its BLAS: two threads it can be set down from
    if args.what == "gemm":
        gemm_table()
    else:
        model_variants(args.model, args.batch, args.rounds)


if __name__ == "__main__":
    main()
