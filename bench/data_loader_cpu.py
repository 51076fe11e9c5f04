"""CPU time per batch of burn's and torch's loaders with 2 persistent workers (the CIFAR pipeline
of `bench/data_loader.py`): the workers' (from ``/proc/PID/stat``) and the calling process's.

On a machine shared with other jobs, batches per second measure the scheduler's share as much as
the loaders; CPU time per batch measures what each loader costs. Usage:

    python bench/data_loader_cpu.py [--items 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of process `pid`."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import torch
    from data_loader import TorchCifar, burn_transform
    from torch.utils.data import DataLoader as TorchLoader

    import burn
    from burn.data import ArrayDataset, DataLoader

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(args.items, 3, 32, 32), dtype=np.uint8)
    labels = rng.integers(0, 10, size=args.items).astype(np.int64)
    device = burn.backend("ndarray").default_device()
    ours = DataLoader(
        ArrayDataset(images, labels),
        128,
        shuffle=True,
        transform=burn_transform,
        num_workers=2,
        persistent_workers=True,
    )
    list(ours.batches(device))  # starts the workers
    our_pids = [p.pid for p in multiprocessing.active_children() if p.name.startswith("burn-data-")]
    theirs = TorchLoader(
        TorchCifar(images, labels, 0), 128, shuffle=True, num_workers=2, persistent_workers=True
    )
    list(theirs)
    their_pids = [w.pid for w in theirs._iterator._workers]  # type: ignore[union-attr]
    print(
        f"torch {torch.__version__}, {os.cpu_count()} CPUs, {args.items} items, batch 128, "
        "2 persistent workers"
    )
    rows: list[tuple[str, list[int], Callable[[], Any]]] = [
        ("burn", our_pids, lambda: list(ours.batches(device))),
        ("torch", their_pids, lambda: list(theirs)),
    ]
    for _ in range(args.rounds):
        for name, pids, run in rows:
            workers, own, start = sum(cpu_of(p) for p in pids), own_cpu(), time.perf_counter()
            count = len(run())
            seconds = time.perf_counter() - start
            worker_ms = 1e3 * (sum(cpu_of(p) for p in pids) - workers) / count
            own_ms = 1e3 * (own_cpu() - own) / count
            print(
                f"{name:6s} workers {worker_ms:5.1f} ms CPU/batch, caller {own_ms:4.1f} ms, "
                f"{count / seconds:5.1f} batches/s"
            )
    ours.close()


if __name__ == "__main__":
    main()
