"""The rnn family of `Autodiff`: the LSTM and GRU cells and the LSTM sequence, each followed by
its backward rule.

Each rule calls the inner backend's ``*_cell_backward`` helper, which gives every input's
gradient in one pass (itself differentiable on this backend,
`burn_autodiff.ops.composed.backward_helpers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, make
from burn_autodiff.ops._grad import Grads, Need, P
from burn_autodiff.ops.composed import backward_helpers

if TYPE_CHECKING:
    from burn.backend import Backend


class LstmCellSaved(NamedTuple):
    """lstm_cell: its inputs and its output."""

    gates: P
    cell: P
    out: P


class LstmSequenceSaved(NamedTuple):
    """lstm_sequence: its inputs, its output (every step's hidden and cell states) and its
    direction; the backward recomputes the gates from them (one GEMM) instead of keeping them."""

    proj: P
    weight: P
    cell: P
    hidden: P
    out: P
    reverse: bool


class GruCellSaved(NamedTuple):
    """gru_cell: its inputs."""

    gates_x: P
    gates_h: P
    hidden: P


@backward_helpers("rnn")
class AutodiffRnnOps:
    """The rnn family of `Autodiff` (mixed into it; see `burn.backend.ops.rnn`)."""

    _in: Backend

    def lstm_cell(self, gates: AD, cell: AD) -> AD:
        out = self._in.lstm_cell(gates.p, cell.p)
        parents = (gates.node, cell.node)
        if parents == (None, None):
            return AD(out, None)
        return AD(out, Node(parents, self._lstm_cell_rule, make(LstmCellSaved, (gates.p, cell.p, out))))

    @staticmethod
    def _lstm_cell_rule(B: Any, s: LstmCellSaved, need: Need, g: P) -> Grads:
        # both gradients come from one pass
        d_gates, d_cell = B.lstm_cell_backward(s.gates, s.cell, s.out, g)
        return (d_gates if need[0] else None, d_cell if need[1] else None)

    def lstm_sequence(self, proj: AD, weight: AD, cell: AD, hidden: AD, reverse: bool) -> AD:
        out = self._in.lstm_sequence(proj.p, weight.p, cell.p, hidden.p, reverse)
        parents = (proj.node, weight.node, cell.node, hidden.node)
        if parents == (None, None, None, None):
            return AD(out, None)
        saved = make(LstmSequenceSaved, (proj.p, weight.p, cell.p, hidden.p, out, reverse))
        return AD(out, Node(parents, self._lstm_sequence_rule, saved))

    @staticmethod
    def _lstm_sequence_rule(B: Any, s: LstmSequenceSaved, need: Need, g: P) -> Grads:
        # back-propagation through time: the four gradients come from one pass over the steps
        grads = B.lstm_sequence_backward(s.proj, s.weight, s.cell, s.hidden, s.out, g, s.reverse)
        return tuple(d if wanted else None for d, wanted in zip(grads, need, strict=True))

    def gru_cell(self, gates_x: AD, gates_h: AD, hidden: AD) -> AD:
        out = self._in.gru_cell(gates_x.p, gates_h.p, hidden.p)
        parents = (gates_x.node, gates_h.node, hidden.node)
        if parents == (None, None, None):
            return AD(out, None)
        saved = make(GruCellSaved, (gates_x.p, gates_h.p, hidden.p))
        return AD(out, Node(parents, self._gru_cell_rule, saved))

    @staticmethod
    def _gru_cell_rule(B: Any, s: GruCellSaved, need: Need, g: P) -> Grads:
        # the three gradients come from one pass
        grads = B.gru_cell_backward(s.gates_x, s.gates_h, s.hidden, g)
        return tuple(d if wanted else None for d, wanted in zip(grads, need, strict=True))
