"""LSTM training step (one layer, 128 inputs, 256 hidden, 32 steps, batch 32; Linear head on the
last hidden state, cross-entropy, Adam) and forward + backward alone: burn autodiff(ndarray) vs
torch (`nn.LSTM`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Settings, Table, setup_torch, timed_row
from workloads.common import Workload, classification_batch
from workloads.lstm import burn_lstm, init_weights, torch_lstm

from sections.mlp import agreement

BATCH, STEPS, D_INPUT, D_HIDDEN, CLASSES = 32, 32, 128, 256, 10


def build(backend: Any, torch: Any) -> dict[str, Workload | None]:
    weights = init_weights(D_INPUT, D_HIDDEN, CLASSES)
    x, y = classification_batch(np.random.default_rng(1), (BATCH, STEPS, D_INPUT), CLASSES)
    return {
        "burn": burn_lstm(backend, weights, x, y),
        "torch": torch_lstm(torch, weights, x, y) if torch else None,
        "numpy": None,
    }


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    note = agreement(build(backend, torch))
    rows = []
    for case, attr in (("training step (Adam)", "step"), ("forward + backward", "fwd_bwd")):
        w = build(backend, torch)
        fns = {k: getattr(v, attr) if v else None for k, v in w.items()}
        rows.append(timed_row(case, fns, settings, "ms", warmup=1))
    title = f"LSTM {D_INPUT}->{D_HIDDEN}, {STEPS} steps, batch {BATCH}, head to {CLASSES} classes"
    return [Table(title, rows, notes=[note, "no NumPy floor for this workload"])]
