"""Recurrent layers: `Lstm` and `Gru`, batch-first ``[B, T, D]``, with Burn's gate layout.

Each gate is a `GateController` holding two `Linear` layers (``input_transform`` on ``x``,
``hidden_transform`` on the hidden state), so params have Burn's paths, e.g.
``forget_gate.hidden_transform.weight`` (``[d_hidden, d_hidden]``, Burn's ``[in, out]`` layout).

The forward concatenates the gates' weights once per call, projects every time step of the input
with one matmul, then runs one matmul per step for the hidden state: the same arithmetic as gate
by gate, with far fewer ops. Gate equations (as Burn and PyTorch):

- LSTM: ``i, f, o = sigmoid(...)``, ``g = tanh(...)``, ``c' = f * c + i * g``, ``h' = o * tanh(c')``.
- GRU: ``z, r = sigmoid(...)``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` (``reset_after``;
  otherwise ``W_hn (r * h) + b_hn``), ``h' = (1 - z) * n + z * h``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.init import Initializer, XavierNormal
from burn.nn.linear import Linear, LinearConfig
from burn.tensor import activation as A
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = ["GateController", "Gru", "GruConfig", "Lstm", "LstmConfig", "LstmState"]


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


def _project(op: str, x: Tensor, d_input: int, w_x: Tensor, b: Tensor | None) -> tuple[Tensor, int, int]:
    """Every time step of ``x [B, T, D]`` through `w_x` -> ``[T, B, G*H]``."""
    shape = x.shape
    if len(shape) != 3 or shape[2] != d_input:
        raise ShapeError(f"{op}: expected a batch-first input [B, T, {d_input}], got shape {shape}")
    batch, steps, _ = shape
    if steps == 0:
        raise ShapeError(f"{op}: the input {shape} has no time steps")
    proj = x.matmul(w_x)
    if b is not None:
        proj = proj + b
    return proj.swap_dims(0, 1), batch, steps


def _initial(op: str, state: Tensor | None, x: Tensor, batch: int, hidden: int, name: str) -> Tensor:
    if state is None:
        return Tensor.zeros((batch, hidden), device=x.device, dtype=x.dtype)
    if state.shape != (batch, hidden):
        raise ShapeError(f"{op}: the initial {name} must have shape ({batch}, {hidden}), got {state.shape}")
    return state


class LstmState(NamedTuple):
    """The state of an `Lstm`: ``cell`` and ``hidden``, each ``[B, d_hidden]``."""

    cell: Tensor
    hidden: Tensor


@config
class LstmConfig:
    """Builds an `Lstm`; weights start as ``XavierNormal(gain=1)`` as Burn's.

    Example:
        >>> from burn import nn
        >>> lstm = nn.LstmConfig(8, 16).init(device)  # doctest: +SKIP
        >>> out, state = lstm(x)  # x: [B, T, 8] -> out [B, T, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    bias: bool = True
    initializer: Initializer = XavierNormal(gain=1.0)

    def init(self, device: Device | None = None) -> Lstm:
        device = resolve_device(device)
        args = (self.d_input, self.d_hidden, self.bias, self.initializer, device)
        return Lstm(
            input_gate=_gate(*args),
            forget_gate=_gate(*args),
            output_gate=_gate(*args),
            cell_gate=_gate(*args),
            d_input=self.d_input,
            d_hidden=self.d_hidden,
        )


class Lstm(Module):
    """Long short-term memory over a batch-first sequence."""

    input_gate: GateController
    forget_gate: GateController
    output_gate: GateController
    cell_gate: GateController
    d_input: int
    d_hidden: int

    def forward(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        """``x [B, T, d_input]`` (and an optional initial state) -> (every hidden state
        ``[B, T, d_hidden]``, the final `LstmState`)."""
        op, hidden = "Lstm", self.d_hidden
        # Sigmoid gates first so that one sigmoid covers all three.
        w_x, w_h, b_x, b_h = _stacked((self.input_gate, self.forget_gate, self.output_gate, self.cell_gate))
        bias = b_x if b_h is None else (b_h if b_x is None else b_x + b_h)
        proj, batch, steps = _project(op, x, self.d_input, w_x, bias)
        c = _initial(op, None if state is None else state.cell, x, batch, hidden, "cell state")
        h = _initial(op, None if state is None else state.hidden, x, batch, hidden, "hidden state")
        outputs = []
        for t in range(steps):
            g = proj[t] + h.matmul(w_h)
            sig = A.sigmoid(g.narrow(1, 0, 3 * hidden))
            i = sig.narrow(1, 0, hidden)
            f = sig.narrow(1, hidden, hidden)
            o = sig.narrow(1, 2 * hidden, hidden)
            c = f * c + i * A.tanh(g.narrow(1, 3 * hidden, hidden))
            h = o * A.tanh(c)
            outputs.append(h)
        return Tensor.stack(outputs, 1), LstmState(c, h)


@config
class GruConfig:
    """Builds a `Gru`; `reset_after` applies the reset gate after the hidden projection
    (PyTorch's and cuDNN's convention, Burn's default)."""

    d_input: int
    d_hidden: int
    bias: bool = True
    reset_after: bool = True
    initializer: Initializer = XavierNormal(gain=1.0)

    def init(self, device: Device | None = None) -> Gru:
        device = resolve_device(device)
        args = (self.d_input, self.d_hidden, self.bias, self.initializer, device)
        return Gru(
            update_gate=_gate(*args),
            reset_gate=_gate(*args),
            new_gate=_gate(*args),
            d_input=self.d_input,
            d_hidden=self.d_hidden,
            reset_after=self.reset_after,
        )


class Gru(Module):
    """Gated recurrent unit over a batch-first sequence."""

    update_gate: GateController
    reset_gate: GateController
    new_gate: GateController
    d_input: int
    d_hidden: int
    reset_after: bool = True

    def forward(self, x: Tensor, state: Tensor | None = None) -> Tensor:
        """``x [B, T, d_input]`` (and an optional initial hidden state ``[B, d_hidden]``) ->
        every hidden state ``[B, T, d_hidden]`` (the last one is the final state)."""
        op, hidden = "Gru", self.d_hidden
        w_x, w_h, b_x, b_h = _stacked((self.update_gate, self.reset_gate, self.new_gate))
        proj, batch, steps = _project(op, x, self.d_input, w_x, b_x)
        h = _initial(op, state, x, batch, hidden, "hidden state")
        outputs = []
        if self.reset_after:
            for t in range(steps):
                xs = proj[t]
                hs = h.matmul(w_h)
                if b_h is not None:
                    hs = hs + b_h
                zr = A.sigmoid(xs.narrow(1, 0, 2 * hidden) + hs.narrow(1, 0, 2 * hidden))
                z = zr.narrow(1, 0, hidden)
                r = zr.narrow(1, hidden, hidden)
                n = A.tanh(xs.narrow(1, 2 * hidden, hidden) + r * hs.narrow(1, 2 * hidden, hidden))
                h = n + z * (h - n)
                outputs.append(h)
        else:
            w_zr, w_n = w_h.narrow(1, 0, 2 * hidden), w_h.narrow(1, 2 * hidden, hidden)
            b_zr = b_n = None
            if b_h is not None:
                b_zr, b_n = b_h.narrow(0, 0, 2 * hidden), b_h.narrow(0, 2 * hidden, hidden)
            for t in range(steps):
                xs = proj[t]
                hs = h.matmul(w_zr)
                if b_zr is not None:
                    hs = hs + b_zr
                zr = A.sigmoid(xs.narrow(1, 0, 2 * hidden) + hs)
                z = zr.narrow(1, 0, hidden)
                r = zr.narrow(1, hidden, hidden)
                hn = (r * h).matmul(w_n)
                if b_n is not None:
                    hn = hn + b_n
                n = A.tanh(xs.narrow(1, 2 * hidden, hidden) + hn)
                h = n + z * (h - n)
                outputs.append(h)
        return Tensor.stack(outputs, 1)
