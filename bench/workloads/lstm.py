"""LSTM training step: one `Lstm` layer over a sequence, a Linear head on the last hidden state,
cross-entropy, Adam (e.g. batch 32, 32 steps, 128 inputs, 256 hidden units, 10 classes). burn
and torch start from the same weights; no NumPy floor (backpropagation through time by hand would
be a second implementation to trust)."""

from __future__ import annotations

from typing import Any

import numpy as np

from workloads.common import Workload, burn_trained, torch_trained, uniform_init

# burn's gate order (GateController fields) and the row block of each gate in torch's weights
# (input, forget, cell, output).
GATES = {"input_gate": 0, "forget_gate": 1, "cell_gate": 2, "output_gate": 3}


def init_weights(d_input: int, d_hidden: int, classes: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Per gate: input and hidden weights ``[in, hidden]`` (burn's layout) and biases; the head."""
    rng = np.random.default_rng(seed)
    weights: dict[str, np.ndarray] = {}
    for gate in GATES:
        weights[f"{gate}.x.w"] = uniform_init(rng, (d_input, d_hidden), d_hidden)
        weights[f"{gate}.x.b"] = uniform_init(rng, (d_hidden,), d_hidden)
        weights[f"{gate}.h.w"] = uniform_init(rng, (d_hidden, d_hidden), d_hidden)
        weights[f"{gate}.h.b"] = uniform_init(rng, (d_hidden,), d_hidden)
    weights["head.w"] = uniform_init(rng, (d_hidden, classes), d_hidden)
    weights["head.b"] = uniform_init(rng, (classes,), d_hidden)
    return weights


def burn_lstm(backend: Any, weights: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """burn: `nn.Lstm` built from `nn.GateController`s, `nn.Linear` head, `CrossEntropyLoss`, Adam."""
    from burn import Tensor, nn
    from burn.module import Module, Param

    device = backend.default_device()

    def linear(prefix: str) -> nn.Linear:
        w, b = (Param.from_tensor(Tensor.from_data(weights[f"{prefix}.{k}"], device=device)) for k in "wb")
        return nn.Linear(w, b)

    class Model(Module):
        lstm: nn.Lstm
        head: nn.Linear

        def forward(self, x: Tensor) -> Tensor:
            _, state = self.lstm(x)
            return self.head(state.hidden)

    gates = {g: nn.GateController(linear(f"{g}.x"), linear(f"{g}.h")) for g in GATES}
    d_input, d_hidden = weights["input_gate.x.w"].shape
    lstm = nn.Lstm(
        input_gate=gates["input_gate"], forget_gate=gates["forget_gate"], output_gate=gates["output_gate"],
        cell_gate=gates["cell_gate"], d_input=d_input, d_hidden=d_hidden,
    )  # fmt: skip
    return burn_trained(backend, Model(lstm, linear("head")), x_np, y_np)


def torch_lstm(torch: Any, weights: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """PyTorch eager: `nn.LSTM(batch_first=True)`, `nn.Linear`, `F.cross_entropy`, Adam."""
    nn = torch.nn
    d_input, d_hidden = weights["input_gate.x.w"].shape
    order = sorted(GATES, key=GATES.__getitem__)

    def stacked(kind: str) -> Any:
        if kind.endswith(".w"):
            return torch.from_numpy(np.concatenate([weights[f"{g}.{kind}"].T for g in order]))
        return torch.from_numpy(np.concatenate([weights[f"{g}.{kind}"] for g in order]))

    base: Any = nn.Module

    class Model(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(d_input, d_hidden, batch_first=True)
            self.head = nn.Linear(d_hidden, weights["head.w"].shape[1])

        def forward(self, x: Any) -> Any:
            _, (h, _) = self.lstm(x)
            return self.head(h[0])

    model = Model()
    with torch.no_grad():
        model.lstm.weight_ih_l0.copy_(stacked("x.w"))
        model.lstm.weight_hh_l0.copy_(stacked("h.w"))
        model.lstm.bias_ih_l0.copy_(stacked("x.b"))
        model.lstm.bias_hh_l0.copy_(stacked("h.b"))
        model.head.weight.copy_(torch.from_numpy(weights["head.w"].T.copy()))
        model.head.bias.copy_(torch.from_numpy(weights["head.b"]))
    return torch_trained(torch, model, x_np, y_np)
