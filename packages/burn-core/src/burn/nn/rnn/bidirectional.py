"""Bidirectional layers: `BiLstm`, `BiGru` and `BiRnn`, a ``forward`` and a ``reverse`` layer of
one kind, and their configs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from burn.module.config import config
from burn.nn.init import Initializer, XavierNormal
from burn.nn.rnn._scan import States, _check_input, _Recurrent, _Scan, _split_states
from burn.nn.rnn.elman import Rnn, RnnConfig, _check_nonlinearity
from burn.nn.rnn.gru import Gru, GruConfig
from burn.nn.rnn.lstm import Lstm, LstmConfig, LstmState
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


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
