"""`Learner(compile=True)` against `compile=False`: whole `fit` calls alternated in one process.

An MLP (256-512-512-10, GELU) trained with Adam on `autodiff(ndarray)`, batch 64, 40 steps per
epoch, 3 epochs per fit, float32; with compile=True each fit traces its step once (its first
step is a warmup) and replays the rest with the Adam update inside the program. Prints the
median fit time of each mode over the pairs, their ratio pair by pair, the compile summary and
whether the trained params are the same bits.

Usage:
    nice -n 19 python bench/compile_learner.py --threads 1 --pairs 4
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time
from typing import Any

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=4)
    args = parser.parse_args()

    from compile_step import mlp_model  # the same model as the step bench

    import burn
    from burn import nn, optim
    from burn.data import ArrayDataset, DataLoader
    from burn.train import Learner, StepOutput

    burn.set_num_threads(args.threads)
    backend = burn.backend("autodiff(ndarray)")
    dev = backend.default_device()

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64 * 40, 256), dtype=np.float32)
    y = rng.integers(0, 10, size=64 * 40).astype(np.int64)
    ce = nn.CrossEntropyLoss()

    def step(model: Any, batch: Any) -> StepOutput:
        inputs, targets = batch
        logits = model(inputs)
        return StepOutput(ce(logits, targets), logits, targets)

    def fit(compile: bool) -> tuple[float, Any, str]:  # noqa: A002 - Learner's name
        backend.seed(5)
        model = mlp_model(dev)
        stream = io.StringIO()
        learner = Learner(
            model, optim.AdamConfig().init(), step, lr=1e-3, num_epochs=3, seed=7, progress="none",
            plot=False, stream=stream, compile=compile,
        )  # fmt: skip
        loader = DataLoader(ArrayDataset(x, y), 64, shuffle=True, seed=2)
        t0 = time.perf_counter()
        result = learner.fit(loader)
        elapsed = time.perf_counter() - t0
        summary = next((line for line in stream.getvalue().splitlines() if line.startswith("compile:")), "")
        return elapsed, result.model, summary

    print(f"threads {args.threads}, pairs {args.pairs}; load {os.getloadavg()[0]:.1f}")
    fit(True)  # warm: numba kernels, allocator
    fit(False)
    compiled_t, eager_t, ratios = [], [], []
    same, summary = True, ""
    for _ in range(args.pairs):
        tc, mc, summary = fit(True)
        te, me, _ = fit(False)
        compiled_t.append(tc)
        eager_t.append(te)
        ratios.append(tc / te)
        same = same and all(
            np.array_equal(a.val().to_numpy(), b.val().to_numpy())
            for (_, a), (_, b) in zip(mc.named_params(), me.named_params(), strict=True)
        )
    print(
        f"fit (3 epochs x 40 steps): compile=True {statistics.median(compiled_t):.2f} s, compile=False "
        f"{statistics.median(eager_t):.2f} s; ratio pair by pair: median {statistics.median(ratios):.3f} "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}); params the same bits: {same}"
    )
    print(summary)
    print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
