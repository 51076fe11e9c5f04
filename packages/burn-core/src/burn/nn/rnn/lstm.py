"""The LSTM layer (`Lstm`), its config and its state (`LstmState`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.init import Initializer, XavierNormal
from burn.nn.rnn._scan import States, _initial, _OneDirection, _project
from burn.nn.rnn.gate import GateController, _gate, _stacked
from burn.tensor.module.rnn import lstm_sequence
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


class LstmState(NamedTuple):
    """The state of an LSTM layer: ``cell`` and ``hidden``, each ``[B, d_hidden]`` (``[2, B,
    d_hidden]`` for a `BiLstm`, ``[num_layers * num_directions, B, d_hidden]`` for a `StackedLstm`)."""

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
    batch_first: bool = True

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
            batch_first=self.batch_first,
        )


class Lstm(_OneDirection):
    """Long short-term memory over a sequence (``[B, T, D]``, or ``[T, B, D]`` when not `batch_first`)."""

    input_gate: GateController
    forget_gate: GateController
    output_gate: GateController
    cell_gate: GateController
    d_input: int
    d_hidden: int
    batch_first: bool = True

    def forward(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        """``x [B, T, d_input]`` (and an optional initial state) -> (every hidden state
        ``[B, T, d_hidden]``, the final `LstmState`)."""
        states = None if state is None else (state.cell, state.hidden)
        out, (c, h) = self._run(x, states)
        return out, LstmState(c, h)

    def _scan(self, x: Tensor, states: States | None, reverse: bool) -> tuple[Tensor, States]:
        op, hidden = "Lstm", self.d_hidden
        # Stacked in `lstm_cell`'s gate order: input, forget, output, cell candidate.
        w_x, w_h, b_x, b_h = _stacked((self.input_gate, self.forget_gate, self.output_gate, self.cell_gate))
        bias = b_x if b_h is None else (b_h if b_x is None else b_x + b_h)
        proj, batch, steps = _project(op, x, self.d_input, w_x, bias)
        c = _initial(op, None if states is None else states[0], x, batch, hidden, "cell state")
        h = _initial(op, None if states is None else states[1], x, batch, hidden, "hidden state")
        # Every step's recurrent GEMM and cell in one op (`burn.tensor.module.lstm_sequence`): one
        # autodiff node for the sequence, back-propagation through time in its backward.
        hc = lstm_sequence(proj, w_h, c, h, reverse)  # [T, B, 6H]: hidden, cell, gates
        last = hc[0 if reverse else steps - 1]
        out = hc.narrow(2, 0, hidden).swap_dims(0, 1)
        return out, (last.narrow(1, hidden, hidden), last.narrow(1, 0, hidden))
