"""Convolution + activation as one op against the two ops apart, on burn-ndarray (issue 34).

Usage: ``python bench/conv_epilogue.py [--batch 8] [--threads 1] [--calls 15]``.

Each row is a layer shape of MobileNetV3-small or EfficientNet-B0 with the activation that follows
it there: ``conv2d_fused(..., activation)`` (the bias and activation applied in the convolution's
output pass) against ``conv2d`` then the activation family's op, on burn-ndarray's primitives,
called in turn in one process and timed by the calling thread's CPU time (robust on a shared
machine). Prints the medians, their ratio (fused / apart; below 1 the fusion pays) and the largest
difference between the two results.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

# (name, x shape without the batch, weight shape, stride, padding, groups, activation)
SHAPES: list[tuple[str, tuple[int, int, int], tuple[int, int, int, int], int, int, int, str]] = [
    ("stem 3->16 3x3 s2 @224", (3, 224, 224), (16, 3, 3, 3), 2, 1, 1, "hardswish"),
    ("dw 16 3x3 s2 @112", (16, 112, 112), (16, 1, 3, 3), 2, 1, 16, "relu"),
    ("dw 96 5x5 @14", (96, 14, 14), (96, 1, 5, 5), 1, 2, 96, "hardswish"),
    ("1x1 96->576 @7", (96, 7, 7), (576, 96, 1, 1), 1, 0, 1, "hardswish"),
    ("1x1 24->144 @56", (24, 56, 56), (144, 24, 1, 1), 1, 0, 1, "silu"),
    ("dw 144 3x3 @56", (144, 56, 56), (144, 1, 3, 3), 1, 1, 144, "silu"),
]
OPS = {"hardswish": "hard_swish", "relu": "relu", "silu": "silu"}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args()
    from harness import pin_threads

    pin_threads(args.threads)
    import burn
    from burn import Tensor

    b: Any = burn.backend("ndarray")
    rng = np.random.default_rng(0)
    clock = time.thread_time if args.threads == 1 else time.process_time
    for name, xs, ws, s, p, g, act in SHAPES:
        x = Tensor.from_data(rng.standard_normal((args.batch, *xs)).astype(np.float32), backend=b)._p
        w = Tensor.from_data((rng.standard_normal(ws) * 0.2).astype(np.float32), backend=b)._p
        bias = Tensor.from_data(rng.standard_normal(ws[0]).astype(np.float32), backend=b)._p

        def fused(x: Any = x, w: Any = w, bias: Any = bias, s: int = s, p: int = p, g: int = g,
                  act: str = act) -> Any:
            return b.conv2d_fused(x, w, bias, (s, s), (p, p, p, p), (1, 1), g, act)

        def apart(x: Any = x, w: Any = w, bias: Any = bias, s: int = s, p: int = p, g: int = g,
                  act: str = act) -> Any:
            return getattr(b, OPS[act])(b.conv2d(x, w, bias, (s, s), (p, p), (1, 1), g))

        diff = float(np.abs(np.asarray(fused()) - np.asarray(apart())).max())
        times: dict[str, list[float]] = {"fused": [], "apart": []}
        for _ in range(3):
            fused()
            apart()
        for _ in range(args.calls):
            for key, fn in (("fused", fused), ("apart", apart)):
                start = clock()
                fn()
                times[key].append(clock() - start)
        f, a = (statistics.median(times[k]) * 1e3 for k in ("fused", "apart"))
        print(f"{name:24s} {act:9s} fused {f:8.3f} ms  apart {a:8.3f} ms  fused/apart {f / a:.2f}  "
              f"max diff {diff:.1e}")


if __name__ == "__main__":
    main()
