"""GRU training step: one `Gru` layer (reset gate after the hidden projection, PyTorch's and Burn's
default) over a sequence, a Linear head on the last hidden state, cross-entropy, Adam (e.g. batch
32, 32 steps, 128 inputs, 256 hidden units, 10 classes). burn and torch start from the same
weights; no NumPy floor (as the LSTM's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from workloads.common import Workload, burn_trained, torch_trained, uniform_init

# burn's gate fields and the row block of each gate in torch's weights (reset, update, new).
GATES = {"update_gate": 1, "reset_gate": 0, "new_gate": 2}


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


def burn_gru(backend: Any, weights: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """burn: `nn.Gru` built from `nn.GateController`s, `nn.Linear` head, `CrossEntropyLoss`, Adam."""
    from burn import Tensor, nn
    from burn.module import Module, Param

    device = backend.default_device()

    def linear(prefix: str) -> nn.Linear:
        w, b = (Param.from_tensor(Tensor.from_data(weights[f"{prefix}.{k}"], device=device)) for k in "wb")
        return nn.Linear(w, b)

    class Model(Module):
        gru: nn.Gru
        head: nn.Linear

        def forward(self, x: Tensor) -> Tensor:
            out = self.gru(x)
            return self.head(out.narrow(1, out.shape[1] - 1, 1).squeeze(1))

    gates = {g: nn.GateController(linear(f"{g}.x"), linear(f"{g}.h")) for g in GATES}
    d_input, d_hidden = weights["update_gate.x.w"].shape
    gru = nn.Gru(
        update_gate=gates["update_gate"], reset_gate=gates["reset_gate"], new_gate=gates["new_gate"],
        d_input=d_input, d_hidden=d_hidden,
    )  # fmt: skip
    return burn_trained(backend, Model(gru, linear("head")), x_np, y_np)


def torch_gru(torch: Any, weights: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """PyTorch eager: `nn.GRU(batch_first=True)`, `nn.Linear`, `F.cross_entropy`, Adam."""
    nn = torch.nn
    d_input, d_hidden = weights["update_gate.x.w"].shape
    order = sorted(GATES, key=GATES.__getitem__)

    def stacked(kind: str) -> Any:
        if kind.endswith(".w"):
            return torch.from_numpy(np.concatenate([weights[f"{g}.{kind}"].T for g in order]))
        return torch.from_numpy(np.concatenate([weights[f"{g}.{kind}"] for g in order]))

    base: Any = nn.Module

    class Model(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.gru = nn.GRU(d_input, d_hidden, batch_first=True)
            self.head = nn.Linear(d_hidden, weights["head.w"].shape[1])

        def forward(self, x: Any) -> Any:
            _, h = self.gru(x)
            return self.head(h[0])

    model = Model()
    with torch.no_grad():
        model.gru.weight_ih_l0.copy_(stacked("x.w"))
        model.gru.weight_hh_l0.copy_(stacked("h.w"))
        model.gru.bias_ih_l0.copy_(stacked("x.b"))
        model.gru.bias_hh_l0.copy_(stacked("h.b"))
        model.head.weight.copy_(torch.from_numpy(weights["head.w"].T.copy()))
        model.head.bias.copy_(torch.from_numpy(weights["head.b"]))
    return torch_trained(torch, model, x_np, y_np)
