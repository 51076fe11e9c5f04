"""burn (ndarray) against onnxruntime on one real model, by CPU time: for a shared, loaded machine,
where wall times measure the other jobs as much as the code.

Each call of burn and of onnxruntime is timed in turn (burn, ort, burn, ort...) on the same
exported model and input (the `models` section's, `workloads.models.inference`), by the CPU time
of the calling thread at one thread (both run their work on it) or of the whole process at more
(workers included, so a pool that spins while it waits shows). Prints the medians and the
burn / onnxruntime ratio of one process: compare two commits by running this in each, in turn.

Usage: ``python bench/models_cpu.py MODEL [--batch 1] [--threads 1] [--calls 15]``; MODEL is one
of the section's (``mobilenet_v3_small``, ``efficientnet_b0``, ``resnet18``...). Needs torch, onnx,
onnxruntime and transformers, like the section.

Example:
    ``python bench/models_cpu.py mobilenet_v3_small --batch 1 --calls 15`` prints a line like
    ``mobilenet_v3_small b1 t1: burn cpu 14.08 wall 33.64 ms | ort cpu 3.44 wall 7.49 ms |
    burn/ort cpu 4.09 wall 4.49``.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--calls", type=int, default=15, help="timed calls of each (after 2 warm-up calls)")
    args = parser.parse_args()
    from harness import pin_threads

    pin_threads(args.threads)
    from harness import setup_torch
    from workloads.models import SPECS, inference

    torch = setup_torch()
    fns = inference(torch, SPECS[args.model], args.batch, args.threads).fns
    clock = time.thread_time if args.threads == 1 else time.process_time
    cpu: dict[str, list[float]] = {"burn": [], "ort": []}
    wall: dict[str, list[float]] = {"burn": [], "ort": []}
    for name in cpu:
        fns[name]()
        fns[name]()
    for _ in range(args.calls):
        for name in cpu:
            start_wall, start_cpu = time.perf_counter(), clock()
            fns[name]()
            cpu[name].append(clock() - start_cpu)
            wall[name].append(time.perf_counter() - start_wall)
    b_cpu, o_cpu = (statistics.median(cpu[k]) * 1e3 for k in ("burn", "ort"))
    b_wall, o_wall = (statistics.median(wall[k]) * 1e3 for k in ("burn", "ort"))
    print(
        f"{args.model} b{args.batch} t{args.threads}: burn cpu {b_cpu:.2f} wall {b_wall:.2f} ms | "
        f"ort cpu {o_cpu:.2f} wall {o_wall:.2f} ms | "
        f"burn/ort cpu {b_cpu / o_cpu:.2f} wall {b_wall / o_wall:.2f}"
    )


if __name__ == "__main__":
    main()
