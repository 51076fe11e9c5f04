"""GRU training step: one `Gru` layer (reset gate after the hidden projection, PyTorch's and Burn's
default) over a sequence, a Linear head on the last hidden state, cross-entropy, Adam (e.g. batch
32, 32 steps, 128 inputs, 256 hidden units, 10 classes). burn and torch start from the same
weights; no NumPy floor (as the LSTM's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from workloads import recurrent
from workloads.common import Workload, burn_trained
from workloads.recurrent import Weights

# burn's gate fields and the row block of each gate in torch's weights (reset, update, new).
GATES = {"update_gate": 1, "reset_gate": 0, "new_gate": 2}


def init_weights(d_input: int, d_hidden: int, classes: int, seed: int = 0) -> Weights:
    """Per gate: input and hidden weights ``[in, hidden]`` (burn's layout) and biases; the head."""
    return recurrent.init_weights(GATES, d_input, d_hidden, classes, seed)


def burn_gru(backend: Any, weights: Weights, x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """burn: `nn.Gru` built from `nn.GateController`s, `nn.Linear` head, `CrossEntropyLoss`, Adam."""
    from burn import Tensor, nn
    from burn.module import Module

    class Model(Module):
        gru: nn.Gru
        head: nn.Linear

        def forward(self, x: Tensor) -> Tensor:
            out = self.gru(x)
            return self.head(out.narrow(1, out.shape[1] - 1, 1).squeeze(1))

    gates, head = recurrent.burn_layers(weights, GATES, backend.default_device())
    d_input, d_hidden = weights["update_gate.x.w"].shape
    gru = nn.Gru(
        update_gate=gates["update_gate"], reset_gate=gates["reset_gate"], new_gate=gates["new_gate"],
        d_input=d_input, d_hidden=d_hidden,
    )  # fmt: skip
    return burn_trained(backend, Model(gru, head), x_np, y_np)


def torch_gru(torch: Any, weights: Weights, x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """PyTorch eager: `nn.GRU(batch_first=True)`, `nn.Linear`, `F.cross_entropy`, Adam."""
    return recurrent.torch_workload(torch, torch.nn.GRU, weights, GATES, x_np, y_np)
