"""Per-item time of the CIFAR augmentation: burn.data.transforms vs torchvision.transforms.v2.

Usage: ``python bench/transforms.py [--items 20000] [--repeats 5]``. Times RandomCrop(32,
padding=4) + RandomHorizontalFlip + Normalize on one (3, 32, 32) uint8 image, per item, the
median and the best of ``--repeats`` runs over ``--items`` items (on a loaded machine the best is
the steadier number): burn's on a NumPy array (with and without
making the per-item Generator the loader makes; and on a batch of 128 by ``apply_batch``, as the
loader's workers run it, per image), torchvision's v2 on a uint8 tensor (ToDtype to
float32 in [0, 1] before Normalize, as burn's Normalize scales uint8 itself), when importable.
torch runs on one thread, as in a loader worker.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from burn.data import transforms as T

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def per_item_us(step: Callable[[int], object], items: int, repeats: int) -> tuple[float, float]:
    """The median and the minimum over ``repeats`` of the mean time of ``step(i)``, ``i < items``."""
    for i in range(min(items, 200)):  # warm-up
        step(i)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(items):
            step(i)
        times.append((time.perf_counter() - start) / items)
    return statistics.median(times) * 1e6, min(times) * 1e6


def _per_image(step: Callable[[int], object], batches: int, repeats: int) -> tuple[float, float]:
    """`per_item_us` of a step that transforms a batch of 128 images, per image."""
    median, best = per_item_us(step, batches, repeats)
    return median / 128, best / 128


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    image = np.random.default_rng(0).integers(0, 256, size=(3, 32, 32), dtype=np.uint8)
    ours = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)])
    shared = np.random.default_rng(0)
    rows = [
        (
            "burn.data.transforms, one Generator",
            per_item_us(lambda i: ours(image, shared), args.items, args.repeats),
        ),
        (
            "burn.data.transforms + default_rng([seed, epoch, i])",
            per_item_us(lambda i: ours(image, np.random.default_rng([0, 0, i])), args.items, args.repeats),
        ),
        (
            "np.random.default_rng([seed, epoch, i]) alone",
            per_item_us(lambda i: np.random.default_rng([0, 0, i]), args.items, args.repeats),
        ),
    ]
    # The loader's workers: one apply_batch over a batch of 128 (one generator per image),
    # timed per batch and divided by 128.
    batch = np.repeat(image[None], 128, axis=0)
    generators = [np.random.default_rng([0, 0, i]) for i in range(128)]
    batches = max(args.items // 128, 1)
    rows += [
        (
            "burn apply_batch, 128 images, generators made ahead",
            _per_image(lambda i: ours.apply_batch(batch, generators), batches, args.repeats),
        ),
        (
            "burn apply_batch, 128 images + their default_rng",
            _per_image(
                lambda i: ours.apply_batch(batch, [np.random.default_rng([0, i, k]) for k in range(128)]),
                batches,
                args.repeats,
            ),
        ),
    ]
    try:
        import torch
        from torchvision.transforms import v2
    except Exception as err:  # not installed, or a build that does not load against this torch
        print(f"torchvision not usable ({err!r}): burn only")
    else:
        torch.set_num_threads(1)
        tensor = torch.from_numpy(image)
        theirs = v2.Compose(
            [
                v2.RandomCrop(32, padding=4),
                v2.RandomHorizontalFlip(),
                v2.ToDtype(torch.float32, scale=True),
                v2.Normalize(MEAN, STD),
            ]
        )
        rows.append(
            (
                "torchvision.transforms.v2 (uint8 tensor)",
                per_item_us(lambda i: theirs(tensor), args.items, args.repeats),
            )
        )
    print(f"{'pipeline (us per item)':<56} {'median':>8} {'best':>8}")
    for name, (median, best) in rows:
        print(f"{name:<56} {median:8.1f} {best:8.1f}")


if __name__ == "__main__":
    main()
