"""MLP 784-512-512-10 at batch 128: training step (forward, backward, Adam) and forward + backward
alone, burn autodiff(ndarray) vs torch vs the NumPy floor, from the same weights and data."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Settings, Table, setup_torch, timed_row
from workloads.common import Workload, classification_batch
from workloads.mlp import burn_mlp, init_weights, numpy_mlp, torch_mlp


def build(
    backend: Any, torch: Any, sizes: list[int], batch: int, autocast: str | None = None
) -> dict[str, Workload | None]:
    """The three contenders; with `autocast` (``"bfloat16"``), burn and torch under their
    autocast and no NumPy floor."""
    weights = init_weights(sizes)
    x, y = classification_batch(np.random.default_rng(1), (batch, sizes[0]), sizes[-1])
    return {
        "burn": burn_mlp(backend, weights, x, y, autocast),
        "torch": torch_mlp(torch, weights, x, y, autocast=autocast) if torch else None,
        "numpy": numpy_mlp(weights, x, y) if autocast is None else None,
    }


def agreement(workloads: dict[str, Workload | None], steps: int = 3) -> str:
    """Loss after `steps` fresh training steps per contender: the three must agree."""
    losses = []
    for name, w in workloads.items():
        if w is not None:
            for _ in range(steps):
                w.step()
            losses.append(f"{name} {w.loss():.6f}")
    return f"loss after {steps} steps from the same weights: " + ", ".join(losses)


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    sizes, batch = [784, 512, 512, 10], 128
    note = agreement(build(backend, torch, sizes, batch))
    w = build(backend, torch, sizes, batch)
    step = timed_row("training step (Adam)", {k: v.step if v else None for k, v in w.items()}, settings, "ms")
    w = build(backend, torch, sizes, batch)
    fb = timed_row("forward + backward", {k: v.fwd_bwd if v else None for k, v in w.items()}, settings, "ms")
    w = build(backend, torch, sizes, batch, "bfloat16")
    fns = {k: v.step if v else None for k, v in w.items()}
    mixed = timed_row("training step (Adam), bf16 autocast", fns, settings, "ms")
    return [Table("MLP 784-512-512-10, batch 128, float32", [step, fb, mixed], notes=[note, AUTOCAST_NOTE])]


AUTOCAST_NOTE = (
    "bf16 autocast: burn.amp.autocast('bfloat16') / torch.autocast('cpu', torch.bfloat16) around "
    "forward and loss; params and Adam in float32"
)
