"""The plain (Elman) RNN layer (`Rnn`) and its config."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.init import Initializer, XavierNormal
from burn.nn.rnn._scan import States, _collect, _initial, _OneDirection, _project, _steps
from burn.nn.rnn.gate import GateController, _gate, _stacked
from burn.tensor import activation as A
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


_NONLINEARITIES: dict[str, Callable[[Tensor], Tensor]] = {"tanh": A.tanh, "relu": A.relu}


def _check_nonlinearity(op: str, name: str) -> None:
    if name not in _NONLINEARITIES:
        raise ValueError(f"{op}: nonlinearity must be 'tanh' or 'relu', got {name!r}")


@config
class RnnConfig:
    """Builds an `Rnn` (Elman RNN): ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``.

    `nonlinearity` is ``"tanh"`` (the default, as PyTorch and Burn) or ``"relu"`` (Burn calls this
    option ``hidden_activation``).

    Example:
        >>> from burn import nn
        >>> rnn = nn.RnnConfig(8, 16, nonlinearity="relu").init(device)  # doctest: +SKIP
        >>> out, h_n = rnn(x)  # x: [B, T, 8] -> out [B, T, 16], h_n [B, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    bias: bool = True
    nonlinearity: str = "tanh"
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

    def __post_init__(self) -> None:
        _check_nonlinearity("RnnConfig", self.nonlinearity)

    def init(self, device: Device | None = None) -> Rnn:
        device = resolve_device(device)
        return Rnn(
            gate=_gate(self.d_input, self.d_hidden, self.bias, self.initializer, device),
            d_input=self.d_input,
            d_hidden=self.d_hidden,
            nonlinearity=self.nonlinearity,
            batch_first=self.batch_first,
        )


class Rnn(_OneDirection):
    """Elman RNN over a sequence (``[B, T, D]``, or ``[T, B, D]`` when not `batch_first`), one
    `GateController` named ``gate`` as Burn's."""

    gate: GateController
    d_input: int
    d_hidden: int
    nonlinearity: str = "tanh"
    batch_first: bool = True

    def forward(self, x: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """``x [B, T, d_input]`` (and an optional initial hidden state ``[B, d_hidden]``) ->
        (every hidden state ``[B, T, d_hidden]``, the final hidden state ``[B, d_hidden]``)."""
        out, (h,) = self._run(x, None if state is None else (state,))
        return out, h

    def _scan(self, x: Tensor, states: States | None, reverse: bool) -> tuple[Tensor, States]:
        op = "Rnn"
        _check_nonlinearity(op, self.nonlinearity)
        act = _NONLINEARITIES[self.nonlinearity]
        w_x, w_h, b_x, b_h = _stacked((self.gate,))
        bias = b_x if b_h is None else (b_h if b_x is None else b_x + b_h)
        proj, batch, steps = _project(op, x, self.d_input, w_x, bias)
        h = _initial(op, None if states is None else states[0], x, batch, self.d_hidden, "hidden state")
        outputs = []
        for t in _steps(steps, reverse):
            h = act(proj[t] + h.matmul(w_h))
            outputs.append(h)
        return _collect(outputs, reverse), (h,)
