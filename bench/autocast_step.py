"""burn's bfloat16-autocast training step against its float32 step (issue 37's ratio), alone.

The CNN (batch 64) and transformer-block (batch 8) workloads of ``bench/run.py``'s cnn and
transformer sections, timed interleaved (`harness.time_side_by_side`, best of 7 rounds of at
least 0.2 s) with nothing else in the process. In ``bench/run.py`` the same two steps share each
round with torch's bfloat16 step (seconds on a CPU without bfloat16 arithmetic) and the bf16 row
runs right after it; with ``--quick`` each timed batch is one call, so that row pays what torch
left behind (its freed memory faulted in again) and its ratio reads high. Usage:

    python bench/autocast_step.py [--threads N] [--only cnn,transformer]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", default="cnn,transformer")
    parser.add_argument("--cpu", action="store_true", help="process CPU time, not wall time")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds with --cpu")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import pin_threads

    pin_threads(args.threads)  # before NumPy is imported
    from harness import Settings, load_average, time_side_by_side
    from sections import cnn, transformer

    import burn

    backend = burn.backend("autodiff(ndarray)")
    builds = {
        "cnn": lambda a: cnn.build(backend, None, 64, a),
        "transformer": lambda a: transformer.build(backend, None, 8, a),
    }
    clock = "process CPU time" if args.cpu else "wall time"
    print(f"threads {args.threads}, load average {load_average()}, {clock}")
    for name in args.only.split(","):
        mixed, full = builds[name]("bfloat16")["burn"], builds[name](None)["burn"]
        start = time.perf_counter()
        steps = {"bf16": mixed.step, "float32": full.step}
        if args.cpu:
            best = best_cpu_time(steps, args.rounds)
        else:
            best = time_side_by_side(steps, Settings(False, 0.2, 7))
        bf16, f32 = best["bf16"], best["float32"]
        assert bf16 is not None and f32 is not None
        print(
            f"{name:12s} burn bf16 {bf16 * 1e3:7.2f} ms, burn float32 {f32 * 1e3:7.2f} ms, "
            f"ratio {bf16 / f32:.2f} ({time.perf_counter() - start:.0f} s, load {load_average()})"
        )


def best_cpu_time(steps: dict[str, Callable[[], object]], rounds: int) -> dict[str, float | None]:
    """Best process CPU seconds of one call of each step, over `rounds` interleaved rounds (after
    two warm-up calls each), a garbage collection before every call."""
    for fn in steps.values():
        fn()
        fn()
    best: dict[str, float | None] = {name: None for name in steps}
    for _ in range(rounds):
        for name, fn in steps.items():
            gc.collect()
            start = time.process_time()
            fn()
            elapsed = time.process_time() - start
            current = best[name]
            best[name] = elapsed if current is None else min(current, elapsed)
    return best


if __name__ == "__main__":
    main()
