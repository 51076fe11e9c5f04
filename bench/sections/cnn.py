"""CNN training step (two 3x3 conv + ReLU + 2x2 max-pool, two Linear; batch 64, 1x28x28):
burn autodiff(ndarray) vs torch vs the NumPy floor."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Settings, Table, setup_torch, timed_row
from workloads.cnn import burn_cnn, init_weights, numpy_cnn, torch_cnn
from workloads.common import Workload, classification_batch

from sections.mlp import agreement, autocast_table


def build(backend: Any, torch: Any, batch: int, autocast: str | None = None) -> dict[str, Workload | None]:
    weights = init_weights()
    x, y = classification_batch(np.random.default_rng(1), (batch, 1, 28, 28))
    return {
        "burn": burn_cnn(backend, weights, x, y, autocast),
        "torch": torch_cnn(torch, weights, x, y, autocast=autocast) if torch else None,
        "numpy": numpy_cnn(weights, x, y) if autocast is None else None,
    }


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    batch = 64
    note = agreement(build(backend, torch, batch))
    rows = []
    for case, attr in (("training step (Adam)", "step"), ("forward + backward", "fwd_bwd")):
        w = build(backend, torch, batch)
        fns = {k: getattr(v, attr) if v else None for k, v in w.items()}
        rows.append(timed_row(case, fns, settings, "ms", warmup=1, min_time=settings.min_time * 2))
    title = "CNN conv32-pool-conv64-pool-fc128-fc10, batch 64, 1x28x28"
    mixed = autocast_table(
        title, lambda a: build(backend, torch, batch, a), settings, warmup=1, min_time=settings.min_time * 2
    )
    return [Table(title, rows, notes=[note]), mixed]
