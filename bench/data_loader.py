"""Benchmark of burn.data.DataLoader against torch.utils.data.DataLoader on a CIFAR-shaped pipeline.

Usage (from the checkout root, burn-core + burn-ndarray installed, torch optional):

    python bench/data_loader.py                 # 50,000 items, 1 epoch per configuration
    python bench/data_loader.py --items 10000   # shorter
    python bench/data_loader.py --transform float --workers 2 --torch-workers 2   # the loaders' costs

Data: 50,000 random (3, 32, 32) uint8 images and int64 labels, in memory (an `ArrayDataset`) and
on disk (`write_memmap` / `MemmapDataset`). Batch 128, shuffled. The transform (written here with
NumPy; `burn.data.transforms` has the library's own): pad 4 pixels, random 32x32 crop, random
horizontal flip, per-channel normalize to float32, each item with
``numpy.random.default_rng([seed, epoch, index])``. burn's default batcher turns the batch into
ndarray tensors (process workers stack the arrays first, into shared memory); torch's default
collate stacks it into torch tensors. torch's
dataset runs the same NumPy function on the same generators and wraps the result with
``torch.from_numpy``.

Reported: batches per second over a whole epoch, the best of ``--repeats`` rounds (default 2;
each round times every row once, rows in turn, so a load that comes and goes on a shared machine
falls on all rows alike), and each round's rate. Rows
without "persistent" start their workers every epoch (torch's default too:
``persistent_workers=False``), so the start is in the time; "persistent" rows keep them
(``persistent_workers=True`` on both sides) and time the second and later epochs. burn's process
workers start with forkserver and return batches through shared memory; torch's start with fork
(its default on Linux) and return them through shared memory too (its tensors' storage).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

MEAN = (np.array([0.4914, 0.4822, 0.4465], np.float32) * 255).reshape(3, 1, 1)
INV_STD = (1 / (np.array([0.2470, 0.2435, 0.2616], np.float32) * 255)).reshape(3, 1, 1)


def augment(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Pad 4, random 32x32 crop, random horizontal flip, normalize: (3, 32, 32) uint8 -> float32."""
    padded = np.pad(image, ((0, 0), (4, 4), (4, 4)))
    top, left = rng.integers(0, 9, size=2)
    out = padded[:, top : top + 32, left : left + 32]
    if rng.random() < 0.5:
        out = out[:, :, ::-1]
    return (out.astype(np.float32) - MEAN) * INV_STD


def to_float(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``--transform float``: only uint8 -> float32, so the loader's own costs show."""
    return image.astype(np.float32)


FUNCTIONS = {"cifar": augment, "float": to_float}


def burn_transform(item: tuple[np.ndarray, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    image, label = item
    return augment(image, rng), label


def burn_float(item: tuple[np.ndarray, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    image, label = item
    return to_float(image, rng), label


class TorchCifar:
    """torch's side: the same arrays, the same function, the same per-item generators."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, seed: int, function: str = "cifar") -> None:
        self.images, self.labels, self.seed, self.epoch = images, labels, seed, 0
        self.function = function

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> Any:
        import torch

        rng = np.random.default_rng([self.seed, self.epoch, index])
        image = FUNCTIONS[self.function](self.images[index], rng)
        return torch.from_numpy(np.ascontiguousarray(image)), int(self.labels[index])


def timed_epoch(batches: Callable[[], Any]) -> tuple[float, int]:
    start = time.perf_counter()
    count = 0
    for _ in batches():
        count += 1
    return time.perf_counter() - start, count


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--torch-workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--no-memmap", action="store_true", help="skip the MemmapDataset rows")
    parser.add_argument("--no-thread", action="store_true", help="skip the thread-worker rows")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--transform",
        choices=["cifar", "float"],
        default="cifar",
        help="cifar: pad-crop-flip-normalize; float: only uint8 -> float32 (the loaders' own costs)",
    )
    args = parser.parse_args()

    import burn
    from burn.data import ArrayDataset, DataLoader, MemmapDataset, write_memmap

    device = burn.backend("ndarray").default_device()
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(args.items, 3, 32, 32), dtype=np.uint8)
    labels = rng.integers(0, 10, size=args.items).astype(np.int64)
    folder = os.path.join(tempfile.mkdtemp(prefix="burn-bench-data-"), "cifar")
    write_memmap(folder, {"image": images, "label": labels})
    sources = {"ArrayDataset": ArrayDataset(images, labels)}
    if not args.no_memmap:
        sources["MemmapDataset"] = MemmapDataset(folder)
    print(
        f"{args.items} items of (3, 32, 32) uint8, batch {args.batch_size}, transform {args.transform}, "
        f"{os.cpu_count()} CPUs"
    )

    # the reference: one batch made by hand, to check every pipeline computes the same first batch
    transform = burn_transform if args.transform == "cifar" else burn_float
    first = DataLoader(sources["ArrayDataset"], args.batch_size, shuffle=True, transform=transform)
    want = next(first.batches(device))[0].to_data().array

    # Every row's epoch runs once per round, rows in turn, so that a load that comes and goes on a
    # shared machine falls on all of them alike; a row's rate is its best round.
    rows: dict[str, Callable[[], Any]] = {}
    closers: list[Callable[[], None]] = []
    configurations = [("process", w, False) for w in args.workers]
    configurations += [("process", w, True) for w in args.workers if w]
    configurations += [] if args.no_thread else [("thread", w, False) for w in args.workers if w]
    for name, source in sources.items():
        for kind, workers, persistent in configurations:
            if kind == "thread" and name != "ArrayDataset":
                continue
            loader = DataLoader(
                source,
                args.batch_size,
                shuffle=True,
                transform=transform,
                num_workers=workers,
                worker_type=kind,
                persistent_workers=persistent,
            )
            got = next(loader.batches(device))[0].to_data().array  # also starts persistent workers
            assert np.array_equal(got, want), "burn: the first batch differs"
            closers.append(loader.close)
            label = f"burn {name}, num_workers={workers}"
            label += f" ({kind}{', persistent' if persistent else ''})" if workers else ""
            rows[label] = lambda loader=loader: loader.batches(device, epoch=0)

    try:
        import torch
        from torch.utils.data import DataLoader as TorchLoader
    except ImportError:
        torch = None
        print("torch is not installed: no torch rows")
    if torch is not None:
        dataset = TorchCifar(images, labels, seed=0, function=args.transform)
        torch_configurations = [(w, False) for w in args.torch_workers]
        torch_configurations += [(w, True) for w in args.torch_workers if w]
        for workers, persistent in torch_configurations:
            loader_t = TorchLoader(
                dataset,
                args.batch_size,
                shuffle=True,
                num_workers=workers,
                generator=torch.Generator().manual_seed(0),
                persistent_workers=persistent,
            )
            if persistent:  # start the workers outside the timed epochs
                next(iter(loader_t))
            label = f"torch DataLoader, num_workers={workers}" + (" (persistent)" if persistent else "")
            rows[label] = lambda loader_t=loader_t: iter(loader_t)

    rates: dict[str, list[float]] = {label: [] for label in rows}
    for _ in range(args.repeats):
        for label, run in rows.items():
            seconds, count = timed_epoch(run)
            rates[label].append(count / seconds)
    print(f"{'pipeline':46s} {'batches/s':>10s} {'rounds':>16s}")
    for label, got in rates.items():
        print(f"{label:46s} {max(got):10.1f} {' '.join(f'{r:.1f}' for r in got):>16s}", flush=True)
    for close in closers:
        close()


if __name__ == "__main__":
    main()
