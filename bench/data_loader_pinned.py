"""The data loader's device side on a device backend (default ``opencl``): batch delivery plus
upload, with and without pinned host buffers and device transforms, paired.

A CIFAR-shaped epoch ((3, 32, 32) uint8 images, batch 128, ``RandomCrop(32, padding=4)`` +
``RandomHorizontalFlip()`` + ``Normalize``) is delivered as device tensors by four loaders:

- ``plain``: the transform in the loader (NumPy, whole batches), ``Tensor.from_data`` uploads;
- ``pinned``: the same with ``pin_memory=True`` (a ring of pinned buffers, asynchronous uploads);
- ``device``: ``device_transform=`` the same pipeline (uint8 uploaded, crop/flip/normalize on the
  device);
- ``device+pinned``: both.

Each round runs every row's epoch once, in turn (so a changing machine load falls on all rows
alike), and each epoch ends with ``backend.sync()`` so queued uploads and kernels are counted.
Reported per row: batches per second (median and best round) and the calling thread's time per
batch spent making the batch (``LoaderStats.batch_s``: staging, upload call, device transform).
A second table times the upload alone: one float32 batch (1.5 MB) by ``Tensor.from_data`` against
a view of a pinned buffer (the staging copy into it included), interleaved, until the call returns
and until ``sync``.

Usage:

    python bench/data_loader_pinned.py [--backend opencl] [--items 4096] [--rounds 5] [--workers 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import numpy as np

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
ROWS = ("plain", "pinned", "device", "device+pinned")


def loader_for(row: str, data: Any, device: Any, workers: int) -> Any:
    from burn.data import DataLoader
    from burn.data import transforms as T

    pipeline = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)])
    on_device = row.startswith("device")
    return DataLoader(
        data,
        128,
        shuffle=True,
        seed=0,
        device=device,
        transform=None if on_device else pipeline,
        device_transform=pipeline if on_device else None,
        pin_memory=row.endswith("pinned"),
        num_workers=workers,
        worker_type="thread",
        persistent_workers=workers > 0,
    )


def epoch(loader: Any, backend: Any, number: int) -> tuple[float, float]:
    """Seconds for one epoch (synced at its end) and the mean batch-making ms per batch."""
    began = time.perf_counter()
    for x, _ in loader.batches(epoch=number):
        del x
    backend.sync()
    seconds = time.perf_counter() - began
    stats = loader.stats()
    return seconds, 1e3 * sum(stats.batch_s) / len(stats.batch_s)


def upload_pair(backend: Any, device: Any, repeats: int) -> dict[str, list[float]]:
    """Milliseconds per upload of one (128, 3, 32, 32) float32 batch, ordinary vs pinned, both
    until the call returns (the calling thread's share) and until ``sync`` (the whole copy)."""
    from burn import Tensor
    from burn.backend.capabilities import host_buffer
    from burn.foundations.data import TensorData
    from burn.foundations.kind import Float
    from burn.tensor._base import wrap

    batch = np.random.default_rng(0).random((128, 3, 32, 32), dtype=np.float32)
    buf = host_buffer(backend, batch.nbytes, device)
    view = buf.array.view(np.float32).reshape(batch.shape)

    def ordinary() -> None:
        Tensor.from_data(batch, device)

    def pinned() -> None:
        buf.wait()
        view[...] = batch  # the ring's staging copy is part of the pinned path's cost
        wrap(backend.float_from_data(TensorData.from_numpy(view), device), backend, Float)

    out: dict[str, list[float]] = {}
    for _ in range(repeats):
        for name, run in (("from_data", ordinary), ("pinned view", pinned)):
            for synced in (False, True):
                backend.sync()
                began = time.perf_counter()
                run()
                if synced:
                    backend.sync()
                key = f"{name}, {'until sync' if synced else 'call returns'}"
                out.setdefault(key, []).append(1e3 * (time.perf_counter() - began))
    buf.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", default="opencl")
    parser.add_argument("--items", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=0, help="thread workers (persistent); 0: none")
    parser.add_argument("--upload-repeats", type=int, default=30)
    args = parser.parse_args()

    import burn
    from burn.data import ArrayDataset

    backend = burn.backend(args.backend)
    device = backend.default_device()
    rng = np.random.default_rng(0)
    data = ArrayDataset(
        rng.integers(0, 256, (args.items, 3, 32, 32), dtype=np.uint8), rng.integers(0, 10, args.items)
    )
    loaders = {row: loader_for(row, data, device, args.workers) for row in ROWS}
    for row in ROWS:  # warm-up: kernels compiled, rings and workers made
        epoch(loaders[row], backend, 0)
    print(f"backend {backend.name}, {args.items} items, batch 128, {args.workers} thread workers")
    print(f"load average at start: {os.getloadavg()}")
    rates: dict[str, list[float]] = {row: [] for row in ROWS}
    making: dict[str, list[float]] = {row: [] for row in ROWS}
    batches = len(loaders[ROWS[0]])
    for number in range(1, args.rounds + 1):
        for row in ROWS:
            seconds, ms = epoch(loaders[row], backend, number)
            rates[row].append(batches / seconds)
            making[row].append(ms)
        line = "  ".join(f"{row} {rates[row][-1]:6.1f}/s" for row in ROWS)
        print(f"round {number}: {line}")
    print(f"load average at end: {os.getloadavg()}")
    print()
    print("| loader | batches/s median | best | calling thread, ms per batch (median) |")
    print("| --- | ---: | ---: | ---: |")
    for row in ROWS:
        med, best = statistics.median(rates[row]), max(rates[row])
        print(f"| {row} | {med:.1f} | {best:.1f} | {statistics.median(making[row]):.2f} |")
    for loader in loaders.values():
        loader.close()
    times = upload_pair(backend, device, args.upload_repeats)
    print()
    print("| upload of a (128, 3, 32, 32) float32 batch | ms median | ms best |")
    print("| --- | ---: | ---: |")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} |")


if __name__ == "__main__":
    main()
