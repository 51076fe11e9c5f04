"""How much running torch in the same process slows burn down (development tool).

Usage: ``python bench/interference.py {mlp,cnn,transformer,lstm} [--threads 2] [--steps 5]``.
Builds burn's and torch's workload of the section, then times burn's training step (best of
`--steps`) before torch has run anything, torch's step, and burn's step again. `bench/run.py` runs
both in one process, so the second burn time is the one its tables see; a user runs one framework.

``python bench/interference.py mobilenet_v3_small --batch 1 --threads 2`` does the same for the
inference of a model of the `models` section, against onnxruntime as well: burn alone, then burn's
first call and best call right after 20 calls of onnxruntime, then of torch (their pools' threads
keep spinning for a while after a call, on the cores burn's threads want), and the same after the
pause the `models` section leaves between engines (`sections.models.SETTLE`).
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
    parser.add_argument("section", help="mlp, cnn, transformer, lstm, or a model of the models section")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=1, help="a model's batch")
    args = parser.parse_args()
    from harness import pin_threads

    pin_threads(args.threads)  # before NumPy and torch are imported
    from harness import setup_torch

    import burn

    if args.section not in ("mlp", "cnn", "transformer", "lstm"):
        model_inference(args.section, args.batch, args.threads, max(args.steps, 30), setup_torch())
        return

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


def model_inference(name: str, batch: int, threads: int, calls: int, torch: object) -> None:
    from sections.models import SETTLE as settle
    from workloads.models import SPECS, inference

    if name not in SPECS:
        raise SystemExit(f"interference: unknown section or model {name!r}; models: {', '.join(SPECS)}")
    fns = inference(torch, SPECS[name], batch, threads).fns
    print(f"{name} inference, batch {batch}, {threads} threads, best of {calls} calls:")
    print(f"  burn alone:               {best_ms(fns['burn'], calls):.2f} ms")
    for other in ("ort", "torch"):
        for pause in (0.0, settle):  # right after the other engine's calls, then after a pause
            for _ in range(20):
                fns[other]()
            time.sleep(pause)
            start = time.perf_counter()
            fns["burn"]()
            first = (time.perf_counter() - start) * 1e3
            after = f"{other}, {pause * 1e3:.0f} ms pause"
            print(f"  burn after {after:17}: first {first:.2f} ms, best {best_ms(fns['burn'], calls):.2f} ms")
    print(f"  ort {best_ms(fns['ort'], calls):.2f} ms, torch {best_ms(fns['torch'], calls):.2f} ms")


if __name__ == "__main__":
    main()
