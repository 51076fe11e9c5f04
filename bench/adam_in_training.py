"""The Adam step as training runs it: on a fresh gradient from every backward pass.

Usage: ``python bench/adam_in_training.py [--params 25000000] [--steps 15] [--threads 2]``.

`bench/run.py`'s Adam section steps with the same gradient every call, which isolates the update
but keeps every gradient alive. In training each backward pass makes new gradients, and burn's
`OptimizerAdaptor` hands a gradient that nothing else holds to the fused update, which writes the
new param over it (`burn.optim.transforms.take_grad`). This script trains one param of
`--params` elements on ``loss = sum(w * c)`` (its gradient, ``c``, a fresh array every backward)
and times only the optimizer call of each step: burn's `AdamConfig().init()` with the gradients
handed over (the default), burn with each step's gradients kept by the loop (so only read), and
``torch.optim.Adam(fused=True)`` after ``zero_grad()`` (fresh gradients too), rounds
interleaved; it prints the median and best of each and the ratios to torch.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from harness import pin_threads, setup_torch


def burn_loop(n: int, keep_grads: bool) -> Callable[[], float]:
    """One training step of burn per call; returns the seconds of its optimizer call."""
    import burn
    from burn import Tensor, optim
    from burn.module import Module, Param

    ad = burn.backend("autodiff(ndarray)")
    rng = np.random.default_rng(0)

    class Weights(Module):
        w: Param

    model = [
        Weights(Param.from_tensor(Tensor.from_data(rng.standard_normal(n, dtype=np.float32), backend=ad)))
    ]
    c = Tensor.from_data(rng.standard_normal(n, dtype=np.float32), backend=ad)
    optimizer = optim.AdamConfig(epsilon=1e-8).init()
    kept: list[Any] = []

    def step() -> float:
        grads = model[0].w.val().mul(c).sum().backward()
        grads_params = optim.GradientsParams.from_grads(grads, model[0])
        if keep_grads:
            kept[:] = [grads_params.get(model[0].w.id)]  # the loop holds this step's gradient
        start = time.perf_counter()
        model[0] = optimizer.step(1e-3, model[0], grads_params)
        return time.perf_counter() - start

    return step


def torch_loop(torch: Any, n: int) -> Callable[[], float]:
    rng = np.random.default_rng(0)
    w = torch.from_numpy(rng.standard_normal(n, dtype=np.float32)).requires_grad_()
    c = torch.from_numpy(rng.standard_normal(n, dtype=np.float32))
    optimizer = torch.optim.Adam([w], lr=1e-3, eps=1e-8, fused=True)

    def step() -> float:
        optimizer.zero_grad()  # set_to_none: backward makes a fresh gradient, as burn's does
        (w * c).sum().backward()
        start = time.perf_counter()
        optimizer.step()
        return time.perf_counter() - start

    return step


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--params", type=int, default=25_000_000)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    pin_threads(args.threads)
    torch = setup_torch()
    loops = {
        "burn (gradient handed over)": burn_loop(args.params, keep_grads=False),
        "burn (gradient kept by the loop)": burn_loop(args.params, keep_grads=True),
    }
    if torch is not None:
        loops["torch Adam(fused=True)"] = torch_loop(torch, args.params)
    times: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(2):  # warm-up: the moments exist from the second step on
        for loop in loops.values():
            loop()
    for _ in range(args.steps):
        for name, loop in loops.items():
            times[name].append(loop())
    print(f"Adam step on a fresh gradient, {args.params:,} float32 params, {args.threads} threads")
    reference = statistics.median(times["torch Adam(fused=True)"]) if torch is not None else None
    for name, ts in times.items():
        median = statistics.median(ts)
        ratio = f", {median / reference:.2f} of torch" if reference else ""
        print(f"  {name:34s} median {median * 1e3:7.2f} ms, best {min(ts) * 1e3:7.2f} ms{ratio}")


if __name__ == "__main__":
    main()
