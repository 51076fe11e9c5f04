"""Recurrent layers with Burn's gate layout: `Lstm`, `Gru`, `Rnn`, their bidirectional forms
`BiLstm`, `BiGru`, `BiRnn`, and PyTorch-style stacks `StackedLstm`, `StackedGru`, `StackedRnn`
(``num_layers``, ``bidirectional``, dropout between layers).

Layout: every layer takes ``[B, T, D]`` (``batch_first=True``, Burn's default); with
``batch_first=False`` it takes and returns ``[T, B, D]`` (PyTorch's default). States are never
time-major: a unidirectional layer's state is ``[B, H]``, a bidirectional layer's ``[2, B, H]``
(forward, then reverse) and a stack's ``[num_layers * num_directions, B, H]`` (PyTorch's ``h_0``
order: layer 0 forward, layer 0 reverse, layer 1 forward...).

Each gate is a `GateController` holding two `Linear` layers (``input_transform`` on ``x``,
``hidden_transform`` on the hidden state), so params have Burn's paths, e.g.
``forget_gate.hidden_transform.weight`` (``[d_hidden, d_hidden]``, Burn's ``[in, out]`` layout).
A bidirectional layer holds two layers, ``forward`` and ``reverse`` (Burn's field names); a stack
holds ``layers.<k>`` (one layer, or a bidirectional one, per level). To load PyTorch's packed
``weight_ih_l<k>[_reverse]`` tensors see `burn.record.load_pytorch_safetensors`.

The forward concatenates the gates' weights once per call, projects every time step of the input
with one matmul, then runs one matmul per step for the hidden state: the same arithmetic as gate
by gate, with far fewer ops. Gate equations (as Burn and PyTorch):

- LSTM: ``i, f, o = sigmoid(...)``, ``g = tanh(...)``, ``c' = f * c + i * g``, ``h' = o * tanh(c')``.
- GRU: ``z, r = sigmoid(...)``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` (``reset_after``;
  otherwise ``W_hn (r * h) + b_hn``), ``h' = (1 - z) * n + z * h``.
- RNN: ``h' = act(W_ih x + b_ih + W_hh h + b_hh)`` with ``act`` tanh or relu.

Defaults that differ from PyTorch: weights start as ``XavierNormal(gain=1)`` (Burn's; PyTorch
draws ``U(-1/sqrt(H), 1/sqrt(H))``) and ``batch_first`` is True.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.init import Initializer, XavierNormal
from burn.nn.linear import Linear, LinearConfig
from burn.tensor import activation as A
from burn.tensor.module.rnn import gru_cell, lstm_cell
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = [
    "BiGru",
    "BiGruConfig",
    "BiLstm",
    "BiLstmConfig",
    "BiRnn",
    "BiRnnConfig",
    "GateController",
    "Gru",
    "GruConfig",
    "Lstm",
    "LstmConfig",
    "LstmState",
    "Rnn",
    "RnnConfig",
    "StackedGru",
    "StackedGruConfig",
    "StackedLstm",
    "StackedLstmConfig",
    "StackedRnn",
    "StackedRnnConfig",
]

States = tuple[Tensor, ...]
"""A layer's state tensors: ``(cell, hidden)`` for an LSTM, ``(hidden,)`` for a GRU or an RNN."""


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


def _check_input(op: str, x: Tensor, d_input: int) -> tuple[int, int]:
    """``(batch, steps)`` of a batch-first input, which must be ``[B, T, d_input]`` with ``T > 0``."""
    shape = x.shape
    if len(shape) != 3 or shape[2] != d_input:
        raise ShapeError(f"{op}: expected a batch-first input [B, T, {d_input}], got shape {shape}")
    if shape[1] == 0:
        raise ShapeError(f"{op}: the input {shape} has no time steps")
    return shape[0], shape[1]


def _project(op: str, x: Tensor, d_input: int, w_x: Tensor, b: Tensor | None) -> tuple[Tensor, int, int]:
    """Every time step of ``x [B, T, D]`` through `w_x` -> ``[T, B, G*H]``."""
    batch, steps = _check_input(op, x, d_input)
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


def _steps(steps: int, reverse: bool) -> range:
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _collect(outputs: list[Tensor], reverse: bool) -> Tensor:
    """The per-step hidden states, in time order, as ``[B, T, H]``."""
    return Tensor.stack(outputs[::-1] if reverse else outputs, 1)


def _time_major(x: Tensor, batch_first: bool) -> Tensor:
    """``[T, B, ...] <-> [B, T, ...]`` when the layer is not batch-first (the swap is its own inverse)."""
    return x if batch_first else x.swap_dims(0, 1)


class _Scan(Protocol):
    """What the bidirectional layers and the stacks need of a one-direction layer."""

    d_input: int
    d_hidden: int

    def _scan(self, x: Tensor, states: States | None, reverse: bool) -> tuple[Tensor, States]: ...


class _Recurrent(Module):
    """What every recurrent layer shares: it computes batch-first (`_batch_major`) and swaps the time
    axis in and out around that when it is not `batch_first`."""

    if TYPE_CHECKING:  # declared by the subclasses, as dataclass fields

        @property
        def batch_first(self) -> bool: ...

        def _batch_major(self, x: Tensor, states: States | None) -> tuple[Tensor, States]: ...

    def _run(self, x: Tensor, states: States | None) -> tuple[Tensor, States]:
        out, final = self._batch_major(_time_major(x, self.batch_first), states)
        return _time_major(out, self.batch_first), final


class _OneDirection(_Recurrent):
    """`Lstm`, `Gru` and `Rnn`: one scan forward in time."""

    if TYPE_CHECKING:

        def _scan(self, x: Tensor, states: States | None, reverse: bool) -> tuple[Tensor, States]: ...

    def _batch_major(self, x: Tensor, states: States | None) -> tuple[Tensor, States]:
        return self._scan(x, states, False)


# -- LSTM -----------------------------------------------------------------------------------------
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
        outputs = []
        for t in _steps(steps, reverse):
            # The gates' element-wise part is one op each way (`burn.tensor.module.lstm_cell`).
            hc = lstm_cell(proj[t] + h.matmul(w_h), c)
            h, c = hc.narrow(1, 0, hidden), hc.narrow(1, hidden, hidden)
            outputs.append(h)
        return _collect(outputs, reverse), (c, h)


# -- GRU ------------------------------------------------------------------------------------------
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


# -- plain RNN ------------------------------------------------------------------------------------
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


# -- bidirectional --------------------------------------------------------------------------------
def _split_states(op: str, states: States | None, count: int, batch: int, hidden: int) -> list[States | None]:
    """``[count, B, H]`` state tensors -> one ``[B, H]`` tuple per direction / layer."""
    if states is None:
        return [None] * count
    for s in states:
        if s.shape != (count, batch, hidden):
            raise ShapeError(
                f"{op}: the initial state must have shape ({count}, {batch}, {hidden}), got {s.shape}"
            )
    return [tuple(s[k] for s in states) for k in range(count)]


class _Bidirectional(_Recurrent):
    """`BiLstm`, `BiGru` and `BiRnn`: a ``forward`` and a ``reverse`` layer of one kind."""

    if TYPE_CHECKING:

        @property
        def reverse(self) -> _Scan: ...

    def _batch_major(self, x: Tensor, states: States | None) -> tuple[Tensor, States]:
        """Both directions over batch-first `x`: outputs concatenated on the features (forward
        first), final states stacked ``[2, B, H]``."""
        op = type(self).__name__
        fwd: _Scan = getattr(self, "forward")  # noqa: B009  (a field here, not a method)
        batch, _ = _check_input(op, x, fwd.d_input)
        init_f, init_r = _split_states(op, states, 2, batch, fwd.d_hidden)
        out_f, st_f = fwd._scan(x, init_f, False)
        out_r, st_r = self.reverse._scan(x, init_r, True)
        final = tuple(Tensor.stack([a, b], 0) for a, b in zip(st_f, st_r, strict=True))
        return Tensor.cat([out_f, out_r], 2), final


_Bi = TypeVar("_Bi", bound=_Bidirectional)


def _init_bi(
    cls: Callable[..., _Bi], one: Any, d_hidden: int, batch_first: bool, device: Device | None
) -> _Bi:
    """A bidirectional layer of `cls` from the config `one` of its direction layers."""
    return cls(forward=one.init(device), reverse=one.init(device), d_hidden=d_hidden, batch_first=batch_first)


@config
class BiLstmConfig:
    """Builds a `BiLstm`: two `Lstm` layers, ``forward`` and ``reverse`` (Burn's names).

    Example:
        >>> from burn import nn
        >>> bi = nn.BiLstmConfig(8, 16).init(device)  # doctest: +SKIP
        >>> out, state = bi(x)  # x: [B, T, 8] -> out [B, T, 32], state.hidden [2, B, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    bias: bool = True
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

    def init(self, device: Device | None = None) -> BiLstm:
        one = LstmConfig(self.d_input, self.d_hidden, self.bias, self.initializer)
        return _init_bi(BiLstm, one, self.d_hidden, self.batch_first, device)


class BiLstm(_Bidirectional):
    """Bidirectional LSTM: the output concatenates the forward and the reverse hidden states,
    ``[B, T, 2 * d_hidden]``; states are ``[2, B, d_hidden]`` (forward, reverse)."""

    forward: Lstm  # Burn's field name: call the layer (or `run`), not ``.forward(...)``
    reverse: Lstm
    d_hidden: int
    batch_first: bool = True

    def __call__(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        """See `BiLstm.run` (the ``forward`` field holds the forward-direction `Lstm`)."""
        return self.run(x, state)

    def run(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        """``x [B, T, D]`` (and an optional initial state, each ``[2, B, H]``) -> (``[B, T, 2H]``,
        the final `LstmState`, each ``[2, B, H]``)."""
        out, (c, h) = self._run(x, None if state is None else tuple(state))
        return out, LstmState(c, h)


@config
class BiGruConfig:
    """Builds a `BiGru`: two `Gru` layers, ``forward`` and ``reverse`` (Burn's names).

    Example:
        >>> from burn import nn
        >>> bi = nn.BiGruConfig(8, 16).init(device)  # doctest: +SKIP
        >>> bi(x).shape  # x: [B, T, 8] -> [B, T, 32]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    bias: bool = True
    reset_after: bool = True
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

    def init(self, device: Device | None = None) -> BiGru:
        one = GruConfig(self.d_input, self.d_hidden, self.bias, self.reset_after, self.initializer)
        return _init_bi(BiGru, one, self.d_hidden, self.batch_first, device)


class BiGru(_Bidirectional):
    """Bidirectional GRU: ``[B, T, D] -> [B, T, 2 * d_hidden]`` (forward states, then reverse).
    As for `Gru`, the final states are in the output: forward at ``[:, -1, :H]``, reverse at
    ``[:, 0, H:]``."""

    forward: Gru  # Burn's field name: call the layer (or `run`), not ``.forward(...)``
    reverse: Gru
    d_hidden: int
    batch_first: bool = True

    def __call__(self, x: Tensor, state: Tensor | None = None) -> Tensor:
        """See `BiGru.run`."""
        return self.run(x, state)

    def run(self, x: Tensor, state: Tensor | None = None) -> Tensor:
        """``x [B, T, D]`` (and an optional initial hidden state ``[2, B, H]``) -> ``[B, T, 2H]``."""
        out, _ = self._run(x, None if state is None else (state,))
        return out


@config
class BiRnnConfig:
    """Builds a `BiRnn`: two `Rnn` layers, ``forward`` and ``reverse`` (Burn's names).

    Example:
        >>> from burn import nn
        >>> bi = nn.BiRnnConfig(8, 16).init(device)  # doctest: +SKIP
        >>> out, h_n = bi(x)  # out [B, T, 32], h_n [2, B, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    bias: bool = True
    nonlinearity: str = "tanh"
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

    def __post_init__(self) -> None:
        _check_nonlinearity("BiRnnConfig", self.nonlinearity)

    def init(self, device: Device | None = None) -> BiRnn:
        one = RnnConfig(self.d_input, self.d_hidden, self.bias, self.nonlinearity, self.initializer)
        return _init_bi(BiRnn, one, self.d_hidden, self.batch_first, device)


class BiRnn(_Bidirectional):
    """Bidirectional Elman RNN: ``[B, T, D] -> ([B, T, 2 * d_hidden], h_n [2, B, d_hidden])``."""

    forward: Rnn  # Burn's field name: call the layer (or `run`), not ``.forward(...)``
    reverse: Rnn
    d_hidden: int
    batch_first: bool = True

    def __call__(self, x: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """See `BiRnn.run`."""
        return self.run(x, state)

    def run(self, x: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """``x [B, T, D]`` (and an optional initial hidden state ``[2, B, H]``) -> (``[B, T, 2H]``,
        the final hidden states ``[2, B, H]``)."""
        out, (h,) = self._run(x, None if state is None else (state,))
        return out, h


# -- stacks (PyTorch's num_layers / bidirectional) ------------------------------------------------
class _Stack(_Recurrent):
    """`StackedLstm`, `StackedGru` and `StackedRnn`: levels of one-direction or bidirectional layers."""

    if TYPE_CHECKING:

        @property
        def layers(self) -> Sequence[_Recurrent]: ...
        @property
        def dropout(self) -> Dropout: ...
        @property
        def bidirectional(self) -> bool: ...

    def _batch_major(self, x: Tensor, states: States | None) -> tuple[Tensor, States]:
        """Run the levels over batch-first `x`, with dropout on every level's output but the last
        (as PyTorch); the final states are ``[num_layers * num_directions, B, H]``."""
        op, layers, bidirectional = type(self).__name__, self.layers, self.bidirectional
        if not layers:
            raise ShapeError(f"{op}: the stack has no layers")
        first: _Scan = getattr(layers[0], "forward") if bidirectional else layers[0]  # type: ignore[assignment]  # noqa: B009
        batch, _ = _check_input(op, x, first.d_input)
        dirs = 2 if bidirectional else 1
        if states is not None:
            _split_states(op, states, len(layers) * dirs, batch, first.d_hidden)  # checks the shapes
        finals: list[States] = []
        for k, layer in enumerate(layers):
            if k > 0:
                x = self.dropout(x)
            if bidirectional:
                init = None if states is None else tuple(s.narrow(0, 2 * k, 2) for s in states)
                x, final = layer._batch_major(x, init)
            else:
                init = None if states is None else tuple(s[k] for s in states)
                x, final = layer._batch_major(x, init)
                final = tuple(s.unsqueeze_dim(0) for s in final)
            finals.append(final)
        return x, tuple(Tensor.cat(list(parts), 0) for parts in zip(*finals, strict=True))


_S = TypeVar("_S", bound=_Stack)


def _init_stack(
    cfg: Any, cls: Callable[..., _S], one: Any, bi: Any, device: Device | None, **extra: Any
) -> _S:
    """A stack `cls` from its config `cfg`: level ``k`` is built by the config class `bi` when
    bidirectional, else `one`, fed by the previous level's ``dirs * d_hidden`` features."""
    dirs = 2 if cfg.bidirectional else 1
    level = bi if cfg.bidirectional else one
    layers = [
        level(
            cfg.d_input if k == 0 else dirs * cfg.d_hidden,
            cfg.d_hidden,
            bias=cfg.bias,
            initializer=cfg.initializer,
            **extra,
        ).init(device)
        for k in range(cfg.num_layers)
    ]
    return cls(
        layers=layers,
        dropout=DropoutConfig(cfg.dropout).init(),
        bidirectional=cfg.bidirectional,
        batch_first=cfg.batch_first,
    )


def _check_stack(op: str, num_layers: int, dropout: float) -> None:
    if num_layers < 1:
        raise ValueError(f"{op}: num_layers must be at least 1, got {num_layers}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"{op}: dropout must be in [0, 1), got {dropout}")


@config
class StackedLstmConfig:
    """Builds a `StackedLstm`: PyTorch's ``nn.LSTM(d_input, d_hidden, num_layers, bias,
    batch_first, dropout, bidirectional)``, as `num_layers` levels of `Lstm` (or `BiLstm`).

    Example:
        >>> from burn import nn
        >>> lstm = nn.StackedLstmConfig(8, 16, 2, bidirectional=True).init(device)  # doctest: +SKIP
        >>> out, state = lstm(x)  # out [B, T, 32], state.hidden [4, B, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    num_layers: int = 1
    bias: bool = True
    bidirectional: bool = False
    dropout: float = 0.0
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

    def __post_init__(self) -> None:
        _check_stack("StackedLstmConfig", self.num_layers, self.dropout)

    def init(self, device: Device | None = None) -> StackedLstm:
        return _init_stack(self, StackedLstm, LstmConfig, BiLstmConfig, device)


class StackedLstm(_Stack):
    """A multi-layer (optionally bidirectional) LSTM, as PyTorch's ``nn.LSTM``; params at
    ``layers.<k>.…``. Dropout acts on each level's output but the last, while training."""

    layers: list[Lstm | BiLstm]
    dropout: Dropout
    bidirectional: bool = False
    batch_first: bool = True

    def forward(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        """``x [B, T, D]`` (and an optional initial state, each ``[L * dirs, B, H]``) ->
        (``[B, T, dirs * H]``, the final `LstmState`, each ``[L * dirs, B, H]``)."""
        out, (c, h) = self._run(x, None if state is None else tuple(state))
        return out, LstmState(c, h)


@config
class StackedGruConfig:
    """Builds a `StackedGru`: PyTorch's ``nn.GRU(d_input, d_hidden, num_layers, bias,
    batch_first, dropout, bidirectional)``, as `num_layers` levels of `Gru` (or `BiGru`).

    Example:
        >>> from burn import nn
        >>> gru = nn.StackedGruConfig(8, 16, num_layers=2).init(device)  # doctest: +SKIP
        >>> out, h_n = gru(x)  # out [B, T, 16], h_n [2, B, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    num_layers: int = 1
    bias: bool = True
    bidirectional: bool = False
    dropout: float = 0.0
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

    def __post_init__(self) -> None:
        _check_stack("StackedGruConfig", self.num_layers, self.dropout)

    def init(self, device: Device | None = None) -> StackedGru:
        return _init_stack(self, StackedGru, GruConfig, BiGruConfig, device)


class StackedGru(_Stack):
    """A multi-layer (optionally bidirectional) GRU, as PyTorch's ``nn.GRU``; params at
    ``layers.<k>.…``. Dropout acts on each level's output but the last, while training."""

    layers: list[Gru | BiGru]
    dropout: Dropout
    bidirectional: bool = False
    batch_first: bool = True

    def forward(self, x: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """``x [B, T, D]`` (and an optional ``h_0 [L * dirs, B, H]``) -> (``[B, T, dirs * H]``,
        ``h_n [L * dirs, B, H]``)."""
        out, (h,) = self._run(x, None if state is None else (state,))
        return out, h


@config
class StackedRnnConfig:
    """Builds a `StackedRnn`: PyTorch's ``nn.RNN(d_input, d_hidden, num_layers, nonlinearity,
    bias, batch_first, dropout, bidirectional)``, as `num_layers` levels of `Rnn` (or `BiRnn`).

    Example:
        >>> from burn import nn
        >>> rnn = nn.StackedRnnConfig(8, 16, num_layers=3, nonlinearity="relu").init(device)  # doctest: +SKIP
        >>> out, h_n = rnn(x)  # out [B, T, 16], h_n [3, B, 16]  # doctest: +SKIP
    """

    d_input: int
    d_hidden: int
    num_layers: int = 1
    nonlinearity: str = "tanh"
    bias: bool = True
    bidirectional: bool = False
    dropout: float = 0.0
    initializer: Initializer = XavierNormal(gain=1.0)
    batch_first: bool = True

    def __post_init__(self) -> None:
        _check_stack("StackedRnnConfig", self.num_layers, self.dropout)
        _check_nonlinearity("StackedRnnConfig", self.nonlinearity)

    def init(self, device: Device | None = None) -> StackedRnn:
        return _init_stack(self, StackedRnn, RnnConfig, BiRnnConfig, device, nonlinearity=self.nonlinearity)


class StackedRnn(_Stack):
    """A multi-layer (optionally bidirectional) Elman RNN, as PyTorch's ``nn.RNN``; params at
    ``layers.<k>.…``. Dropout acts on each level's output but the last, while training."""

    layers: list[Rnn | BiRnn]
    dropout: Dropout
    bidirectional: bool = False
    batch_first: bool = True

    def forward(self, x: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """``x [B, T, D]`` (and an optional ``h_0 [L * dirs, B, H]``) -> (``[B, T, dirs * H]``,
        ``h_n [L * dirs, B, H]``)."""
        out, (h,) = self._run(x, None if state is None else (state,))
        return out, h
