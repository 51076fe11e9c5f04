"""What the LSTM and GRU workloads share: weights per gate, burn's gate controllers and a head
built from them, and torch's model (a recurrent layer and a Linear head) holding the same weights
(torch stacks the gates in its own order)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from workloads.common import Workload, torch_trained, uniform_init

Weights = dict[str, np.ndarray]


def init_weights(
    gates: Mapping[str, int], d_input: int, d_hidden: int, classes: int, seed: int = 0
) -> Weights:
    """Per gate: input and hidden weights ``[in, hidden]`` (burn's layout) and biases; the head."""
    rng = np.random.default_rng(seed)
    weights: Weights = {}
    for gate in gates:
        weights[f"{gate}.x.w"] = uniform_init(rng, (d_input, d_hidden), d_hidden)
        weights[f"{gate}.x.b"] = uniform_init(rng, (d_hidden,), d_hidden)
        weights[f"{gate}.h.w"] = uniform_init(rng, (d_hidden, d_hidden), d_hidden)
        weights[f"{gate}.h.b"] = uniform_init(rng, (d_hidden,), d_hidden)
    weights["head.w"] = uniform_init(rng, (d_hidden, classes), d_hidden)
    weights["head.b"] = uniform_init(rng, (classes,), d_hidden)
    return weights


def burn_layers(weights: Weights, gates: Mapping[str, int], device: Any) -> tuple[dict[str, Any], Any]:
    """burn's `nn.GateController` of each gate and the `nn.Linear` head, holding `weights`."""
    from burn import Tensor, nn
    from burn.module import Param

    def linear(prefix: str) -> nn.Linear:
        w, b = (Param.from_tensor(Tensor.from_data(weights[f"{prefix}.{k}"], device=device)) for k in "wb")
        return nn.Linear(w, b)

    return {g: nn.GateController(linear(f"{g}.x"), linear(f"{g}.h")) for g in gates}, linear("head")


def torch_copy(torch: Any, rnn: Any, head: Any, weights: Weights, gates: Mapping[str, int]) -> None:
    """`weights` into a torch recurrent layer (gates stacked by their block index in `gates`) and
    its Linear head."""
    order = sorted(gates, key=gates.__getitem__)

    def stacked(kind: str) -> Any:
        blocks = [weights[f"{g}.{kind}"].T if kind.endswith(".w") else weights[f"{g}.{kind}"] for g in order]
        return torch.from_numpy(np.concatenate(blocks))

    with torch.no_grad():
        rnn.weight_ih_l0.copy_(stacked("x.w"))
        rnn.weight_hh_l0.copy_(stacked("h.w"))
        rnn.bias_ih_l0.copy_(stacked("x.b"))
        rnn.bias_hh_l0.copy_(stacked("h.b"))
        head.weight.copy_(torch.from_numpy(weights["head.w"].T.copy()))
        head.bias.copy_(torch.from_numpy(weights["head.b"]))


def torch_workload(
    torch: Any, layer: Any, weights: Weights, gates: Mapping[str, int], x_np: np.ndarray, y_np: np.ndarray
) -> Workload:
    """PyTorch eager: `layer` (``nn.LSTM`` or ``nn.GRU``, batch first) holding `weights`, a Linear
    head on its output at the last step, `F.cross_entropy`, Adam."""
    nn = torch.nn
    d_input, d_hidden = weights[f"{next(iter(gates))}.x.w"].shape
    base: Any = nn.Module

    class Model(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.rnn = layer(d_input, d_hidden, batch_first=True)
            self.head = nn.Linear(d_hidden, weights["head.w"].shape[1])

        def forward(self, x: Any) -> Any:
            out, _ = self.rnn(x)
            return self.head(out[:, -1])  # one layer, one direction: the last hidden state

    model = Model()
    torch_copy(torch, model.rnn, model.head, weights, gates)
    return torch_trained(torch, model, x_np, y_np)
