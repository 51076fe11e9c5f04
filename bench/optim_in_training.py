"""An optimizer step as training runs it: on a fresh gradient from every backward pass.

Usage: ``python bench/optim_in_training.py [--optimizer {adam,sgd,rmsprop}] [--params 25000000]
[--steps 20] [--threads 2]``.

`bench/run.py`'s optimizer rows step with the same gradient every call, which isolates the update
but keeps every gradient alive. In training each backward pass makes new gradients, and burn's
`OptimizerAdaptor` hands a gradient that nothing else holds to the fused update, which writes the
new param over it (`burn.optim.transforms.take_grad`). This script times the optimizer call of
training steps (`workloads.optim_training`): burn with the gradients handed over (the default),
burn with each step's gradient kept by the loop (so only read), and torch's ``Adam(fused=True)``,
``SGD(momentum=0.9, fused=True)`` or ``RMSprop(momentum=0.9)`` (torch has no fused RMSProp), rounds
interleaved; it prints the median and best of each and the ratios to torch's median.
"""

from __future__ import annotations

import argparse
import statistics

from harness import pin_threads, setup_torch


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--optimizer", choices=["adam", "sgd", "rmsprop"], default="adam")
    parser.add_argument("--params", type=int, default=25_000_000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    pin_threads(args.threads)
    from workloads.optim_training import burn_loop, time_loops, torch_loop

    torch = setup_torch()
    times = time_loops(
        {
            "burn (gradient handed over)": burn_loop(args.optimizer, args.params),
            "burn (gradient kept by the loop)": burn_loop(args.optimizer, args.params, keep_grads=True),
            "torch": None if torch is None else torch_loop(torch, args.optimizer, args.params),
        },
        rounds=args.steps,
        steps=1,
    )
    size = f"{args.params:,} float32 params, {args.threads} thread(s)"
    print(f"{args.optimizer} step on a fresh gradient, {size}")
    reference = statistics.median(times["torch"]) if "torch" in times else None
    for name, ts in times.items():
        median = statistics.median(ts)
        ratio = f", {median / reference:.2f} of torch" if reference else ""
        print(f"  {name:34s} median {median * 1e3:7.2f} ms, best {min(ts) * 1e3:7.2f} ms{ratio}")


if __name__ == "__main__":
    main()
