"""How much running torch in the same process slows burn down (development tool).

Usage: ``python bench/interference.py {mlp,cnn,transformer,lstm} [--threads 2] [--steps 5]``.
Builds burn's and torch's workload of the section, then times burn's training step (best of
`--steps`) before torch has run anything, torch's step, and burn's step again. `bench/run.py` runs
both in one process, so the second burn time is the one its tables see; a user runs one framework.
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable


def best_ms(fn: Callable[[], object], steps: int) -> float:
    fn()
    best = float("inf")
    for _ in range(steps):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("section", choices=["mlp", "cnn", "transformer", "lstm"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    from harness import pin_threads

    pin_threads(args.threads)  # before NumPy and torch are imported
    from harness import setup_torch

    import burn

    section = importlib.import_module(f"sections.{args.section}")
    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    built = {
        "mlp": lambda: section.build(backend, torch, [784, 512, 512, 10], 128),
        "cnn": lambda: section.build(backend, torch, 64),
        "transformer": lambda: section.build(backend, torch, 32),
        "lstm": lambda: section.build(backend, torch),
    }[args.section]()
    burn_step, torch_step = built["burn"].step, built["torch"].step
    print(f"{args.section}, {args.threads} threads, best of {args.steps} steps:")
    print(f"  burn before torch has run: {best_ms(burn_step, args.steps):.2f} ms")
    print(f"  torch:                     {best_ms(torch_step, args.steps):.2f} ms")
    print(f"  burn after torch has run:  {best_ms(burn_step, args.steps):.2f} ms")


if __name__ == "__main__":
    main()
