"""Depthwise and grouped convolutions of real models: burn(ndarray) against PyTorch (issue 34).

Usage: ``python bench/conv_depthwise.py [--threads 1 2] [--batch 1 8] [--repeats 5] [--only NAME]
[--gemm] [--positions]``.

Each row is one layer shape of MobileNetV3-small, EfficientNet-B0 or ConvNeXt-tiny (their depthwise
convolutions), a ResNeXt-style grouped convolution and a 1-D depthwise convolution, timed for
the forward op, the input gradient (``conv2d_x_backward``) and the weight gradient
(``conv2d_weight_backward``) on burn-ndarray's primitives, against ``torch.nn.functional.conv2d``
and ``torch.ops.aten.convolution_backward`` with the same thread count (``burn.set_num_threads``
and ``torch.set_num_threads``). Inputs are float32 channels-last views, as a previous burn
convolution hands them on. Times are the best of `--repeats` batches, in milliseconds; ``--gemm``
adds burn-ndarray's im2col + GEMM path, which these convolutions took before issue 34;
``--positions`` adds the per-position direct kernels that depthwise layers with few channels took
before the row kernels (``grouped.MAX_ROW_CHANNELS = 0``).
"""

from __future__ import annotations

import argparse
import time
import unittest.mock
from collections.abc import Callable
from typing import Any

import numpy as np

# (name, x shape, C_out, kernel, stride, padding, groups) ; groups None: depthwise (groups = C_in)
SHAPES: list[tuple[str, tuple[int, ...], int, tuple[int, int], int, tuple[int, int], int | None]] = [
    ("mnv3s 16@112 3x3 s2", (16, 112, 112), 16, (3, 3), 2, (1, 1), None),
    ("mnv3s 72@56 3x3 s2", (72, 56, 56), 72, (3, 3), 2, (1, 1), None),
    ("mnv3s 96@14 5x5", (96, 14, 14), 96, (5, 5), 1, (2, 2), None),
    ("effb0 32@112 3x3", (32, 112, 112), 32, (3, 3), 1, (1, 1), None),
    ("effb0 144@56 3x3", (144, 56, 56), 144, (3, 3), 1, (1, 1), None),
    ("effb0 240@28 5x5", (240, 28, 28), 240, (5, 5), 1, (2, 2), None),
    ("cnxt 96@56 7x7", (96, 56, 56), 96, (7, 7), 1, (3, 3), None),
    ("cnxt 384@14 7x7", (384, 14, 14), 384, (7, 7), 1, (3, 3), None),
    ("x2 mult 32@56 3x3", (32, 56, 56), 64, (3, 3), 1, (1, 1), None),
    ("rnxt 128@56 g32 3x3", (128, 56, 56), 128, (3, 3), 1, (1, 1), 32),
    ("g8 64@28 3x3", (64, 28, 28), 64, (3, 3), 1, (1, 1), 8),
    ("1d 256@400 k15", (256, 1, 400), 256, (1, 15), 1, (0, 7), None),
]


def best_ms(fn: Callable[[], object], repeats: int, min_time: float = 0.05) -> float:
    fn()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start >= min_time or number >= 1 << 12:
            break
        number *= 2
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e3


def measure(
    backend: Any,
    torch: Any,
    x: np.ndarray,
    weight: np.ndarray,
    grad: np.ndarray,
    opts: tuple[Any, ...],
    repeats: int,
    gemm: bool,
    positions: bool = False,
) -> list[float]:
    """Times of one shape: burn then torch for the forward op, the input and the weight gradient;
    with `gemm`, burn-ndarray's im2col + GEMM path (before issue 34) ahead of each pair."""
    from burn_ndarray.ops import grouped

    stride, padding, dilation, groups = opts
    tx = torch.from_numpy(np.ascontiguousarray(x)).contiguous(memory_format=torch.channels_last)
    tw = torch.from_numpy(weight)
    tg = torch.from_numpy(np.ascontiguousarray(grad)).contiguous(memory_format=torch.channels_last)
    hyper = (list(stride), list(padding), list(dilation), False, [0, 0], groups)
    burn_ops = [
        lambda: backend.conv2d(x, weight, None, *opts),
        lambda: backend.conv2d_x_backward(x, weight, grad, *opts),
        lambda: backend.conv2d_weight_backward(x, weight, grad, *opts),
    ]
    torch_ops = [
        lambda: torch.nn.functional.conv2d(tx, tw, None, *opts),
        lambda: torch.ops.aten.convolution_backward(tg, tx, tw, None, *hyper, [True, False, False]),
        lambda: torch.ops.aten.convolution_backward(tg, tx, tw, None, *hyper, [False, True, False]),
    ]
    row: list[float] = []
    for ours, theirs in zip(burn_ops, torch_ops, strict=True):
        # The paths burn-ndarray took before: a threshold of 0 sends every shape past the kernels.
        for wanted, threshold in ((gemm, "MAX_GROUP_CHANNELS"), (positions, "MAX_ROW_CHANNELS")):
            if wanted:
                with unittest.mock.patch.object(grouped, threshold, 0):
                    row.append(best_ms(ours, repeats))
        row += [best_ms(ours, repeats), best_ms(theirs, repeats)]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="rows whose name contains this")
    parser.add_argument("--gemm", action="store_true", help="also time the im2col + GEMM path")
    parser.add_argument("--positions", action="store_true", help="also time the per-position kernels")
    args = parser.parse_args()

    import torch

    import burn

    backend: Any = burn.backend("ndarray")
    rng = np.random.default_rng(0)
    names = ["fwd", "dx", "dw"]
    extra = (["gemm"] if args.gemm else []) + (["pos"] if args.positions else [])
    cols = [c for n in names for c in [f"{n} {e}" for e in extra] + [f"{n} burn", f"{n} torch"]]
    print("| shape | batch | threads | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for name, (c, h, w), o, kernel, s, padding, g in SHAPES:
        if args.only not in name:
            continue
        groups = c if g is None else g
        stride = (1, s) if h == 1 else (s, s)
        for n in args.batch:
            # channels-last memory seen as [N, C, H, W], as a previous burn convolution hands it on
            x = rng.standard_normal((n, h, w, c), dtype=np.float32).transpose(0, 3, 1, 2)
            weight = rng.standard_normal((o, c // groups, *kernel), dtype=np.float32)
            opts = (stride, padding, (1, 1), groups)
            out_shape = backend.conv2d(x, weight, None, *opts).shape
            grad = np.ascontiguousarray(
                rng.standard_normal(out_shape, dtype=np.float32).transpose(0, 2, 3, 1)
            ).transpose(0, 3, 1, 2)
            for t in args.threads:
                burn.set_num_threads(t)
                torch.set_num_threads(t)
                row = measure(backend, torch, x, weight, grad, opts, args.repeats, args.gemm, args.positions)
                cells = " | ".join(f"{v:.2f}" for v in row)
                print(f"| {name} | {n} | {t} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
