"""The static int8 convolution on burn-ndarray against its float32 convolution (issue 37).

Usage: ``python bench/quantized_conv.py [--threads 1 2] [--repeats 7]``.

Each row is one layer shape, timed on burn-ndarray's primitives: ``conv2d`` on the float32
input and weight, and ``static_quantized_conv2d`` (the input quantized with a calibrated scale
and zero point, int8 weight, int32 sums, float32 output). The two are timed in turn, A B A B ...
(`--repeats` pairs, each the best of as many calls as fill 50 ms), so a drift of the shared
machine's speed reaches both; the table gives the median of each and the median of the pair
ratios int8 / float32.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

# (name, N, C_in, H, C_out, kernel, stride, padding, groups)
SHAPES = [
    ("digits cnn conv2 16@4 b256", 256, 16, 4, 32, 3, 1, 1, 1),
    ("grouped g8 64@28 3x3 b4", 4, 64, 28, 64, 3, 1, 1, 8),
    ("resnet 64@56 3x3 b1", 1, 64, 56, 64, 3, 1, 1, 1),
    ("resnet 128@28 3x3 b4", 4, 128, 28, 128, 3, 1, 1, 1),
    ("stem 3@224 7x7 s2 b1", 1, 3, 224, 64, 7, 2, 3, 1),
    ("depthwise 144@56 3x3 b1", 1, 144, 56, 144, 3, 1, 1, 144),
    ("depthwise 240@28 5x5 b4", 4, 240, 28, 240, 5, 1, 2, 240),
]


def best_ms(fn: Callable[[], object], min_time: float = 0.05) -> float:
    """The fastest call of `fn` in milliseconds, over as many calls as fill `min_time`."""
    best = float("inf")
    spent = 0.0
    while spent < min_time:
        start = time.perf_counter()
        fn()
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    import burn

    B = burn.backend("ndarray")
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'layer':28s} {'thr':>3s} {'f32 ms':>9s} {'int8 ms':>9s} {'int8/f32':>9s}")
    for threads in args.threads:
        burn.set_num_threads(threads)
        for name, n, c, h, o, k, s, p, g in SHAPES:
            x = np.maximum(rng.standard_normal((n, c, h, h)), 0).astype(np.float32)  # ReLU output
            w = (rng.standard_normal((o, c // g, k, k)) * 0.1).astype(np.float32)
            qw = np.clip(np.rint(w / (np.abs(w).max() / 127)), -127, 127).astype(np.int8)
            ws = np.full(o, np.abs(w).max() / 127, np.float32)
            scale, zp = np.array([x.max() / 254], np.float32), np.array([-127], np.int8)
            bias = np.zeros(o, np.float32)
            hyper = ((s, s), (p, p), (1, 1), g)

            f32 = functools.partial(B.conv2d, x, w, bias, *hyper)
            int8 = functools.partial(B.static_quantized_conv2d, x, qw, ws, scale, zp, bias, *hyper)
            f32(), int8()  # compiles and warms
            a_ms, b_ms, ratios = [], [], []
            for _ in range(args.repeats):
                a, b = best_ms(f32), best_ms(int8)
                a_ms.append(a)
                b_ms.append(b)
                ratios.append(b / a)
            med = statistics.median
            print(f"{name:28s} {threads:3d} {med(a_ms):9.3f} {med(b_ms):9.3f} {med(ratios):9.2f}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
