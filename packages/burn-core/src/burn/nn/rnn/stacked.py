"""Stacks of recurrent layers, PyTorch's ``num_layers`` / ``bidirectional``: `StackedLstm`,
`StackedGru` and `StackedRnn`, and their configs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from burn.errors import ShapeError
from burn.module.config import config
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.init import Initializer, XavierNormal
from burn.nn.rnn._scan import States, _check_input, _Recurrent, _Scan, _split_states
from burn.nn.rnn.bidirectional import BiGru, BiGruConfig, BiLstm, BiLstmConfig, BiRnn, BiRnnConfig
from burn.nn.rnn.elman import Rnn, RnnConfig, _check_nonlinearity
from burn.nn.rnn.gru import Gru, GruConfig
from burn.nn.rnn.lstm import Lstm, LstmConfig, LstmState
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


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
