"""The GRU layer (`Gru`) and its config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.init import Initializer, XavierNormal
from burn.nn.rnn._scan import States, _collect, _initial, _OneDirection, _project, _steps
from burn.nn.rnn.gate import GateController, _gate, _stacked
from burn.tensor import activation as A
from burn.tensor.module.rnn import gru_cell
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


@config
class GruConfig:
    """Builds a `Gru`; `reset_after` applies the reset gate after the hidden projection
    (PyTorch's and cuDNN's convention, Burn's default).

    Example:
        >>> from burn import nn
        >>> gru = nn.GruConfig(8, 16).init(device)  # doctest: +SKIP
        >>> gru(x).shape  # x: [B, T, 8] -> [B, T, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    bias: bool = True
    reset_after: bool = True
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

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
            batch_first=self.batch_first,
        )


class Gru(_OneDirection):
    """Gated recurrent unit over a sequence (``[B, T, D]``, or ``[T, B, D]`` when not `batch_first`)."""

    update_gate: GateController
    reset_gate: GateController
    new_gate: GateController
    d_input: int
    d_hidden: int
    reset_after: bool = True
    batch_first: bool = True

    def forward(self, x: Tensor, state: Tensor | None = None) -> Tensor:
        """``x [B, T, d_input]`` (and an optional initial hidden state ``[B, d_hidden]``) ->
        every hidden state ``[B, T, d_hidden]`` (the last one is the final state)."""
        out, _ = self._run(x, None if state is None else (state,))
        return out

    def _scan(self, x: Tensor, states: States | None, reverse: bool) -> tuple[Tensor, States]:
        op, hidden = "Gru", self.d_hidden
        w_x, w_h, b_x, b_h = _stacked((self.update_gate, self.reset_gate, self.new_gate))
        proj, batch, steps = _project(op, x, self.d_input, w_x, b_x)
        h = _initial(op, None if states is None else states[0], x, batch, hidden, "hidden state")
        outputs = []
        if self.reset_after:
            for t in _steps(steps, reverse):
                hs = h.matmul(w_h)
                if b_h is not None:
                    hs = hs + b_h
                # The gates' element-wise part is one op each way (`burn.tensor.module.gru_cell`).
                h = gru_cell(proj[t], hs, h)
                outputs.append(h)
        else:
            w_zr, w_n = w_h.narrow(1, 0, 2 * hidden), w_h.narrow(1, 2 * hidden, hidden)
            b_zr = b_n = None
            if b_h is not None:
                b_zr, b_n = b_h.narrow(0, 0, 2 * hidden), b_h.narrow(0, 2 * hidden, hidden)
            for t in _steps(steps, reverse):
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
        return _collect(outputs, reverse), (h,)
