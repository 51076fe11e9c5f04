"""Memory saved by balanced gradient checkpointing on a deep MLP, and what it costs in time.

Each layer is ``z = h @ W + b`` (compute-bound: kept) followed by a chain of memory-bound ops
(``gelu(z) * sigmoid(z) + tanh(z / 2)``: recomputed in backward under checkpointing). Peak
memory is NumPy's allocations traced by `tracemalloc` over one forward + backward.

Run: ``python packages/burn-autodiff/benchmarks/checkpoint_memory.py [depth] [width] [batch]``.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from typing import Any

import numpy as np


def step(x: Any, ws: list[Any], b: Any) -> None:
    """One forward + backward; gradients are taken out of `Gradients` as an optimizer would."""
    from burn import activation

    h = x
    for w in ws:
        z = h @ w + b
        h = activation.gelu(z) * activation.sigmoid(z) + (z * 0.5).tanh()
    grads = h.mean().backward()
    for w in ws:
        w.grad_remove(grads)


def main(depth: int = 16, width: int = 512, batch: int = 256) -> None:
    import burn
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((batch, width)).astype(np.float32)
    w_np = [(rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32) for _ in range(depth)]

    print(f"deep MLP: {depth} layers of {width}, batch {batch}, float32")
    print(f"{'checkpointing':14} {'peak MiB':>9} {'fwd+bwd ms':>11}")
    for strategy in ("none", "balanced"):
        B = Autodiff(NdArray(), checkpointing=strategy)
        x = burn.Tensor.from_data(x_np, backend=B)
        ws = [burn.Tensor.from_data(w, backend=B).require_grad() for w in w_np]
        b = burn.Tensor.zeros((width,), backend=B).require_grad()

        step(x, ws, b)  # warm up
        tracemalloc.start()
        start = time.perf_counter()
        step(x, ws, b)
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"{strategy:14} {peak / 2**20:9.1f} {elapsed * 1e3:11.1f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
