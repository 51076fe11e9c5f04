"""CPU time per batch of burn's and torch's loaders with 2 persistent workers on a CIFAR-shaped
pipeline (random crop with padding 4, horizontal flip, normalize; batch 128): the workers' (from
``/proc/PID/stat``), the calling process's, and batches per second.

``--pipeline library`` (the default): both loaders run `burn.data.transforms`' ``Compose([
RandomCrop(32, padding=4), RandomHorizontalFlip(), Normalize(...)])`` with the same per-item
generators ``default_rng([seed, epoch, index])``, so they make the same values. burn's workers
apply it to the whole batch (``apply_batch``), torch's dataset to each item, as a PyTorch user's
``Dataset.__getitem__`` does (torchvision's v2 transforms, the other choice there, take about 10x
longer per item on a 32x32 image: ``bench/transforms.py``). ``--pipeline numpy``: both run the
hand-written NumPy function of `bench/data_loader.py` per item.

On a machine shared with other jobs, batches per second measure the scheduler's share as much as
the loaders; CPU time per batch measures what each loader costs. Usage:

    python bench/data_loader_cpu.py [--items 10000] [--rounds 3] [--pipeline library|numpy]
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
MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def library_pipeline() -> Any:
    from burn.data import transforms as T

    return T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)])


class TorchLibrary:
    """torch's side of ``--pipeline library``: the same transforms on each item, as a tensor."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, seed: int) -> None:
        self.images, self.labels, self.seed = images, labels, seed
        self.pipeline = library_pipeline()

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> Any:
        import torch

        rng = np.random.default_rng([self.seed, 0, index])
        return torch.from_numpy(self.pipeline(self.images[index], rng)), int(self.labels[index])


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
    parser.add_argument("--pipeline", choices=["library", "numpy"], default="library")
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
        transform=library_pipeline() if args.pipeline == "library" else burn_transform,
        num_workers=2,
        persistent_workers=True,
    )
    list(ours.batches(device))  # starts the workers
    our_pids = [p.pid for p in multiprocessing.active_children() if p.name.startswith("burn-data-")]
    dataset = TorchLibrary(images, labels, 0) if args.pipeline == "library" else TorchCifar(images, labels, 0)
    theirs = TorchLoader(dataset, 128, shuffle=True, num_workers=2, persistent_workers=True)
    list(theirs)
    their_pids = [w.pid for w in theirs._iterator._workers]  # type: ignore[union-attr]
    print(
        f"torch {torch.__version__}, {os.cpu_count()} CPUs, {args.items} items, batch 128, "
        f"2 persistent workers, {args.pipeline} pipeline, load average {os.getloadavg()[0]:.1f}"
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
