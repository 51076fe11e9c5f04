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

from burn.nn.rnn.bidirectional import BiGru, BiGruConfig, BiLstm, BiLstmConfig, BiRnn, BiRnnConfig
from burn.nn.rnn.elman import Rnn, RnnConfig
from burn.nn.rnn.gate import GateController
from burn.nn.rnn.gru import Gru, GruConfig
from burn.nn.rnn.lstm import Lstm, LstmConfig, LstmState
from burn.nn.rnn.stacked import (
    StackedGru,
    StackedGruConfig,
    StackedLstm,
    StackedLstmConfig,
    StackedRnn,
    StackedRnnConfig,
)

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
