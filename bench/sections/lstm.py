"""LSTM training step (one layer, 128 inputs, 256 hidden, 32 steps, batch 32; Linear head on the
last hidden state, cross-entropy, Adam) and forward + backward alone: burn autodiff(ndarray) vs
torch (`nn.LSTM`). `recurrent` runs the same tables for another cell (`sections.gru`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from harness import Settings, Table, setup_torch, timed_row
from workloads.common import Workload, classification_batch
from workloads.lstm import burn_lstm, init_weights, torch_lstm

from sections.mlp import agreement

BATCH, STEPS, D_INPUT, D_HIDDEN, CLASSES = 32, 32, 128, 256, 10
Make = Callable[[Any, dict, np.ndarray, np.ndarray], Workload]


def recurrent(
    settings: Settings, name: str, make_burn: Make, make_torch: Make, init: Callable[..., dict]
) -> list[Table]:
    """The step and forward + backward rows of one recurrent layer's workload."""
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()

    def build() -> dict[str, Workload | None]:
        weights = init(D_INPUT, D_HIDDEN, CLASSES)
        x, y = classification_batch(np.random.default_rng(1), (BATCH, STEPS, D_INPUT), CLASSES)
        return {
            "burn": make_burn(backend, weights, x, y),
            "torch": make_torch(torch, weights, x, y) if torch else None,
            "numpy": None,
        }

    note = agreement(build())
    rows = []
    for case, attr in (("training step (Adam)", "step"), ("forward + backward", "fwd_bwd")):
        fns = {k: getattr(v, attr) if v else None for k, v in build().items()}
        rows.append(timed_row(case, fns, settings, "ms", warmup=1))
    title = f"{name} {D_INPUT}->{D_HIDDEN}, {STEPS} steps, batch {BATCH}, head to {CLASSES} classes"
    return [Table(title, rows, notes=[note, "no NumPy floor for this workload"])]


def run(settings: Settings) -> list[Table]:
    return recurrent(settings, "LSTM", burn_lstm, torch_lstm, init_weights)
