"""`GateController`: one gate of a recurrent layer, and the gates' weights stacked for a step."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.nn.init import Initializer
from burn.nn.linear import Linear, LinearConfig
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


class GateController(Module):
    """One gate: ``input_transform(x) + hidden_transform(h)`` (before its activation)."""

    input_transform: Linear
    hidden_transform: Linear

    def gate_product(self, x: Tensor, hidden: Tensor) -> Tensor:
        return self.input_transform(x) + self.hidden_transform(hidden)


def _gate(
    d_input: int, d_hidden: int, bias: bool, initializer: Initializer, device: Device
) -> GateController:
    return GateController(
        input_transform=LinearConfig(d_input, d_hidden, bias=bias, initializer=initializer).init(device),
        hidden_transform=LinearConfig(d_hidden, d_hidden, bias=bias, initializer=initializer).init(device),
    )


def _stacked(gates: tuple[GateController, ...]) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
    """The gates' input weights ``[D, G*H]``, hidden weights ``[H, G*H]`` and biases ``[G*H]``."""
    w_x = Tensor.cat([g.input_transform.weight.val() for g in gates], 1)
    w_h = Tensor.cat([g.hidden_transform.weight.val() for g in gates], 1)
    b_x = b_h = None
    if gates[0].input_transform.bias is not None:
        b_x = Tensor.cat([g.input_transform.bias.val() for g in gates], 0)  # type: ignore[union-attr]
    if gates[0].hidden_transform.bias is not None:
        b_h = Tensor.cat([g.hidden_transform.bias.val() for g in gates], 0)  # type: ignore[union-attr]
    return w_x, w_h, b_x, b_h
