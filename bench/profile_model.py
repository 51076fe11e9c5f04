"""Which backend ops a real model's time goes to in burn: `burn.profile()` around calls of one
case of the `models` section (inference on ndarray, or a training step on autodiff(ndarray)).

Usage: ``python bench/profile_model.py MODEL [--batch 1] [--threads 1] [--train] [--calls 3]``
with MODEL one of the section's (``resnet18``, ``mobilenet_v3_small``, ...); prints the op table
(calls, total, mean, share) and the whole profiled time next to the unprofiled time of one call.
Needs torch, onnx, onnxruntime and transformers, like the section.
"""

from __future__ import annotations

import argparse
import time


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


if __name__ == "__main__":
    main()
