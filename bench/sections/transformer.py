"""Transformer encoder block training step (pre-norm, 4-head self-attention, GELU MLP; batch 32,
seq 128, d_model 256; MSE, Adam) and forward + backward alone: burn autodiff(ndarray) vs torch."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Settings, Table, setup_torch, timed_row
from workloads.common import Workload
from workloads.transformer import burn_block, init_weights, torch_block

from sections.mlp import agreement, autocast_table

BATCH, SEQ, D_MODEL, HEADS = 32, 128, 256, 4


def build(backend: Any, torch: Any, batch: int, autocast: str | None = None) -> dict[str, Workload | None]:
    weights = init_weights(D_MODEL)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    y = rng.standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    return {
        "burn": burn_block(backend, weights, x, y, HEADS, autocast),
        "torch": torch_block(torch, weights, x, y, HEADS, autocast) if torch else None,
        "numpy": None,
    }


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    batch = 8 if settings.quick else BATCH
    note = agreement(build(backend, torch, batch))
    rows = []
    for case, attr in (("training step (Adam)", "step"), ("forward + backward", "fwd_bwd")):
        w = build(backend, torch, batch)
        fns = {k: getattr(v, attr) if v else None for k, v in w.items()}
        rows.append(timed_row(case, fns, settings, "ms", warmup=1, min_time=settings.min_time * 2))
    title = (
        f"transformer block (pre-norm, {HEADS} heads, GELU MLP), batch {batch}, seq {SEQ}, d_model {D_MODEL}"
    )
    mixed = autocast_table(
        f"transformer block, batch {batch}", lambda a: build(backend, torch, batch, a), settings, warmup=1,
        min_time=settings.min_time * 2,
    )
    return [Table(title, rows, notes=[note, "no NumPy floor for this workload"]), mixed]
