"""Does the DataLoader keep a training step fed? A short CNN training loop on the ndarray backend.

Usage (from the checkout root; burn-core, burn-ndarray and burn-autodiff importable):

    python bench/data_loader_training.py                      # 0 and 2 workers, 30 steps each
    python bench/data_loader_training.py --workers 2 --steps 60

Data: random (3, 32, 32) uint8 images and int labels in memory, batch 128, shuffled, augmented by
`burn.data.transforms` (random crop with 4 pixels of padding, horizontal flip, normalize) in the
loader (``persistent_workers=True`` with workers). Model: `examples/cifar_cnn.py`'s CNN (width 16,
one conv block per stage) under ``autodiff(ndarray)``, SGD, one optimizer step per batch.

Reported per worker count, after `--warmup` steps (the workers' start and first batches): the mean
step time (data wait included), the time the loop waited for data per step as `DataLoader.stats`
counts it, and the share of the loop's time the ``data.wait`` spans of a `burn.profile` around
the loop take, and how many batches were not ready when the loop asked for them ("not ready":
``LoaderStats.starved``). "The step never waits on data" reads as 0 batches not ready after the
warm-up; the remaining wait of ready batches is reading the layout and the OS scheduler's delays
on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--verbose", action="store_true", help="print every batch's wait")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from cifar_cnn import CIFAR_MEAN, CIFAR_STD, CifarCnnConfig, classify, train_transform

    import burn
    from burn import optim
    from burn.data import ArrayDataset, DataLoader

    items = args.batch_size * (args.steps + args.warmup)
    rng = np.random.default_rng(0)
    dataset = ArrayDataset(
        rng.integers(0, 256, size=(items, 3, 32, 32), dtype=np.uint8), rng.integers(0, 10, size=items)
    )
    backend = burn.backend("autodiff(ndarray)")
    device = backend.default_device()
    print(f"{os.cpu_count()} CPUs, batch {args.batch_size}, {args.steps} steps after {args.warmup} warm-up")
    print(f"{'workers':>7s} {'step ms':>8s} {'wait ms/step':>13s} {'data.wait %':>12s} {'not ready':>10s}")
    for workers in args.workers:
        backend.seed(0)
        model = CifarCnnConfig(width=args.width).init(device)
        optimizer = optim.SgdConfig().init()
        loader = DataLoader(
            dataset,
            args.batch_size,
            shuffle=True,
            transform=train_transform(CIFAR_MEAN, CIFAR_STD),
            num_workers=workers,
            persistent_workers=workers > 0,
        )
        with loader, burn.profile(sync=False) as prof:
            marks = []
            for batch in loader.batches(device, epoch=0):
                loss = classify(model, batch).loss
                grads = optim.GradientsParams.from_grads(loss.backward(), model)
                model = optimizer.step(0.01, model, grads)
                loss.to_data()  # the step is done (nothing left queued)
                marks.append(time.perf_counter_ns())
        stats = loader.stats()
        assert stats is not None
        if args.verbose:
            print("waits (ms):", " ".join(f"{w * 1e3:.1f}" for w in stats.wait_s))
            print("batching (ms):", " ".join(f"{w * 1e3:.1f}" for w in stats.batch_s))
            print("ready:", " ".join("y" if r else "n" for r in stats.ready))
        timed = args.steps - 1
        loop_ns = marks[-1] - marks[args.warmup]
        waits = [e for e in prof.events if e.name == "data.wait" and e.start_ns >= marks[args.warmup]]
        waited_ns = sum(e.duration_ns for e in waits)
        wait_ms = stats.waited(skip=args.warmup + 1) / timed * 1e3
        step_ms = loop_ns / timed / 1e6
        starved = f"{stats.starved(skip=args.warmup + 1)}/{timed}"
        share = 100 * waited_ns / loop_ns
        print(f"{workers:>7d} {step_ms:8.1f} {wait_ms:13.2f} {share:11.1f}% {starved:>10s}", flush=True)


if __name__ == "__main__":
    main()
