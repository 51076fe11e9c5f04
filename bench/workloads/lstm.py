"""LSTM training step: one `Lstm` layer over a sequence, a Linear head on the last hidden state,
cross-entropy, Adam (e.g. batch 32, 32 steps, 128 inputs, 256 hidden units, 10 classes). burn
and torch start from the same weights; no NumPy floor (backpropagation through time by hand would
be a second implementation to trust)."""

from __future__ import annotations

from typing import Any

import numpy as np

from workloads import recurrent
from workloads.common import Workload, burn_trained
from workloads.recurrent import Weights

# burn's gate order (GateController fields) and the row block of each gate in torch's weights
# (input, forget, cell, output).
GATES = {"input_gate": 0, "forget_gate": 1, "cell_gate": 2, "output_gate": 3}


def init_weights(d_input: int, d_hidden: int, classes: int, seed: int = 0) -> Weights:
    """Per gate: input and hidden weights ``[in, hidden]`` (burn's layout) and biases; the head."""
    return recurrent.init_weights(GATES, d_input, d_hidden, classes, seed)


def burn_lstm(backend: Any, weights: Weights, x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """burn: `nn.Lstm` built from `nn.GateController`s, `nn.Linear` head, `CrossEntropyLoss`, Adam."""
    from burn import Tensor, nn
    from burn.module import Module

    class Model(Module):
        lstm: nn.Lstm
        head: nn.Linear

        def forward(self, x: Tensor) -> Tensor:
            _, state = self.lstm(x)
            return self.head(state.hidden)

    gates, head = recurrent.burn_layers(weights, GATES, backend.default_device())
    d_input, d_hidden = weights["input_gate.x.w"].shape
    lstm = nn.Lstm(
        input_gate=gates["input_gate"], forget_gate=gates["forget_gate"], output_gate=gates["output_gate"],
        cell_gate=gates["cell_gate"], d_input=d_input, d_hidden=d_hidden,
    )  # fmt: skip
    return burn_trained(backend, Model(lstm, head), x_np, y_np)


def torch_lstm(torch: Any, weights: Weights, x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """PyTorch eager: `nn.LSTM(batch_first=True)`, `nn.Linear`, `F.cross_entropy`, Adam."""
    return recurrent.torch_workload(torch, torch.nn.LSTM, weights, GATES, x_np, y_np)
