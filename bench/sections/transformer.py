"""Transformer encoder block training step (pre-norm, 4-head self-attention, GELU MLP; batch 32,
seq 128, d_model 256; MSE, Adam) and forward + backward alone: burn autodiff(ndarray) vs torch;
and the block's forward on ndarray: `burn.compile` against burn eager and torch (no grad)."""

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
    table = Table(title, rows, notes=[note, "no NumPy floor for this workload"])
    return [table, mixed, forward_table(settings, torch, batch)]


def forward_table(settings: Settings, torch: Any, batch: int) -> Table:
    """The block's forward on ndarray: compiled (`burn.compile`, fused element-wise chains, replayed
    without the Tensor API) against eager, and torch under ``no_grad``."""
    import burn

    backend = burn.backend("ndarray")
    w = build(backend, torch, batch)
    burn_model = w["burn"].model() if w["burn"] and w["burn"].model else None
    assert burn_model is not None
    x_np = np.random.default_rng(1).standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    x = burn.Tensor.from_data(x_np, device=backend.default_device())
    forward = burn.compile(lambda m, v: m(v))
    torch_fwd = None
    if torch and w["torch"] and w["torch"].model:
        tmodel, tx = w["torch"].model(), torch.from_numpy(x_np.copy())

        def torch_fwd() -> object:
            with torch.no_grad():
                return tmodel(tx)

    same = np.array_equal(forward(burn_model, x).to_data().to_numpy(), burn_model(x).to_data().to_numpy())
    fns = {"burn": lambda: forward(burn_model, x), "torch": lambda: burn_model(x), "numpy": torch_fwd}
    row = timed_row("forward", fns, settings, "ms", warmup=1, min_time=settings.min_time * 2)
    s = forward.stats()
    notes = [
        f"compiled equals eager bitwise: {same}; {s['fused_groups']} fused groups ({s['fused_ops']} ops), "
        f"{s['traces']} trace",
    ]
    title = f"transformer block forward on ndarray, batch {batch}, seq {SEQ}, d_model {D_MODEL}"
    return Table(title, [row], labels=("burn.compile", "burn eager", "torch"), notes=notes)
