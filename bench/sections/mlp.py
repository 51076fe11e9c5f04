"""MLP 784-512-512-10 at batch 128: training step (forward, backward, Adam) and forward + backward
alone, burn autodiff(ndarray) vs torch vs the NumPy floor, from the same weights and data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from harness import Row, Settings, Table, setup_torch, time_side_by_side, timed_row
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
    mixed = autocast_table("MLP 784-512-512-10, batch 128", lambda a: build(backend, torch, sizes, batch, a),
                           settings)
    return [Table("MLP 784-512-512-10, batch 128, float32", [step, fb], notes=[note]), mixed]


def autocast_table(
    title: str, build_with: Callable[[str | None], dict[str, Workload | None]], settings: Settings, **kw: Any
) -> Table:
    """burn's training step under bfloat16 autocast against its float32 step and torch's
    bfloat16-autocast step, the three timed interleaved (`time_side_by_side`), so the ratio
    bf16 / float32 is not a change of load between two rows."""
    mixed, full = build_with("bfloat16"), build_with(None)

    def step(w: Workload | None) -> Callable[[], object] | None:
        return None if w is None else w.step

    fns = {"mixed": step(mixed["burn"]), "full": step(full["burn"]), "torch": step(mixed["torch"])}
    t = time_side_by_side(fns, settings, **kw)
    row = Row("training step (Adam)", t["mixed"], t["full"], t["torch"], unit="ms")
    note = (
        "bf16: burn.amp.autocast('bfloat16') / torch.autocast('cpu', torch.bfloat16) around forward "
        "and loss; params and Adam in float32. First ratio: burn bf16 / burn float32 (issue 37's "
        "target: <= 1.0)"
    )
    return Table(f"{title}: bf16 autocast", [row], labels=("burn bf16", "burn float32", "torch bf16"),
                 notes=[note])
