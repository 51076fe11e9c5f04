"""Which backend ops a real model's time goes to in burn: `burn.profile()` around calls of one
case of the `models` section (inference on ndarray, or a training step on autodiff(ndarray)).

Usage: ``python bench/profile_model.py MODEL [--batch 1] [--threads 1] [--train] [--calls 3]``
with MODEL one of the section's (``resnet18``, ``mobilenet_v3_small``, ...); prints the op table
(calls, total, mean, share) and the whole profiled time next to the unprofiled time of one call.
``--python`` adds the Python side of an inference call: the Python function calls per call and
per ONNX node (cProfile's count, which does not depend on the machine's load) and the functions
with the most own time. Needs torch, onnx, onnxruntime and transformers, like the section.
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--train", action="store_true", help="a training step instead of inference")
    parser.add_argument("--calls", type=int, default=3, help="calls profiled (after 2 warm-up calls)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--python", action="store_true", help="Python calls per ONNX node (cProfile)")
    args = parser.parse_args()
    from harness import pin_threads

    pin_threads(args.threads)
    from harness import setup_torch
    from workloads.models import SPECS, inference, training

    import burn

    torch = setup_torch()
    spec = SPECS[args.model]
    if args.train:
        fn = training(torch, spec, args.batch)["burn"].step
    else:
        fn = inference(torch, spec, args.batch, args.threads).fns["burn"]
    fn()
    start = time.perf_counter()
    fn()
    plain = time.perf_counter() - start
    with burn.profile() as prof:
        start = time.perf_counter()
        for _ in range(args.calls):
            fn()
        profiled = (time.perf_counter() - start) / args.calls
    kind = "training step" if args.train else "inference"
    print(f"{args.model} {kind}, batch {args.batch}, {args.threads} threads: {plain * 1e3:.0f} ms a call")
    print(f"({profiled * 1e3:.0f} ms under the profiler), over {args.calls} calls:\n")
    print(prof.table(by="op", top=args.top))
    if args.python and not args.train:
        python_side(fn, torch, spec, args)


def python_side(fn: Any, torch: Any, spec: Any, args: argparse.Namespace) -> None:
    """cProfile over `args.calls` calls: function calls per call and per node, top own times."""
    import cProfile
    import pstats

    from workloads.models import export

    import burn.onnx

    nodes = len(burn.onnx.load(export(torch, spec, args.batch), backend="ndarray").program.nodes)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.calls):
        fn()
    profile.disable()
    stats = pstats.Stats(profile)
    per_call = stats.total_calls / args.calls  # type: ignore[attr-defined]
    print(f"\nPython: {per_call:.0f} calls a call, {nodes} ONNX nodes, {per_call / nodes:.1f} a node")
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
