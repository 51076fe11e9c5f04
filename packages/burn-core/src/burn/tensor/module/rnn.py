"""Functional LSTM and GRU cells (the rnn family): one step's element-wise part as one backend op
(`burn.backend.ops.rnn.RnnOps.lstm_cell`, `gru_cell`), which `burn.nn.Gru` runs at every step; and
a whole LSTM direction over a sequence as one op (`lstm_sequence`), which `burn.nn.Lstm` and the
ONNX ``LSTM`` import run.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> gates, cell = Tensor.zeros((2, 12)), Tensor.ones((2, 3))  # doctest: +SKIP
    >>> F.lstm_cell(gates, cell).shape  # hidden and cell, side by side  # doctest: +SKIP
    (2, 6)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.backend.ops.rnn import gru_widths, lstm_sequence_widths, lstm_widths
from burn.errors import DTypeError
from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.tensor._errors import expect_same
from burn.tensor.module._args import float_operand

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["gru_cell", "lstm_cell", "lstm_sequence"]


def _check_inputs(op: str, first: tuple[str, Tensor], *others: tuple[str, Tensor]) -> None:
    """Every input a Float tensor of the first's backend, device and dtype (shapes: the caller)."""
    name, t = first
    float_operand(op, t, name)
    for other_name, other in others:
        expect_same(op, t, other, Float, other_name)
        if other.dtype is not t.dtype:
            raise DTypeError(
                f"{op}: {other_name} ({other.dtype.value}) must have the dtype of {name} ({t.dtype.value})"
            )


def lstm_cell(gates: Tensor, cell: Tensor) -> Tensor:
    """One LSTM step from its pre-activation gates and the previous cell state.

    Args:
        gates: Float ``[B, 4H]``: the input, forget and output gates and the cell candidate,
            ``H`` columns each, before their activations (``x W_x + h W_h + b``).
        cell: Float ``[B, H]``, the previous cell state, of the gates' backend and dtype.

    Returns:
        ``[B, 2H]``: the new hidden state ``o * tanh(c')`` in the first ``H`` columns and the
        new cell ``c' = f * c + i * g`` in the last ``H`` (``i, f, o`` the sigmoids of the first
        three blocks, ``g`` the tanh of the last). Differentiable in both inputs.

    Example:
        >>> gates = Tensor.zeros((1, 4))  # every gate 0.5, candidate 0  # doctest: +SKIP
        >>> lstm_cell(gates, Tensor.ones((1, 1))).tolist()  # doctest: +SKIP
        [[0.23105858266353607, 0.5]]
    """
    _check_inputs("lstm_cell", ("gates", gates), ("cell", cell))
    lstm_widths("lstm_cell", gates.shape, cell.shape)
    return wrap(gates._b.lstm_cell(gates._p, cell._p), gates._b, Float)


def lstm_sequence(
    proj: Tensor, weight: Tensor, cell: Tensor, hidden: Tensor, reverse: bool = False
) -> Tensor:
    """One direction of an LSTM layer over a whole sequence, as one op.

    Args:
        proj: Float ``[T, B, 4H]``: every step's input projection with the biases
            (``x_t W_x + b``), gate blocks in `lstm_cell`'s order (input, forget, output, cell
            candidate); one GEMM over all the steps gives it.
        weight: Float ``[H, 4H]``, the recurrent weight: step ``t``'s gates are
            ``proj[t] + h_{t-1} @ weight``.
        cell: Float ``[B, H]``, the initial cell state.
        hidden: Float ``[B, H]``, the initial hidden state.
        reverse: run from the last step to the first (a bidirectional layer's reverse direction).

    Returns:
        ``[T, B, 6H]``: row ``t`` holds the hidden state after step ``t`` (columns ``0:H``), the
        cell state (``H:2H``) and the step's pre-activation gates (``2H:6H``, kept for the
        backward); the final states are row ``T - 1`` (row ``0`` when `reverse`).
        Differentiable in all four inputs (back-propagation through time).

    Example:
        >>> proj = Tensor.zeros((3, 1, 4))  # 3 steps, batch 1, one unit  # doctest: +SKIP
        >>> w, state = Tensor.zeros((1, 4)), Tensor.zeros((1, 1))  # doctest: +SKIP
        >>> lstm_sequence(proj, w, state, state).shape  # doctest: +SKIP
        (3, 1, 6)
    """
    op = "lstm_sequence"
    _check_inputs(op, ("proj", proj), ("weight", weight), ("cell", cell), ("hidden", hidden))
    lstm_sequence_widths(op, proj.shape, weight.shape, cell.shape, hidden.shape)
    return wrap(proj._b.lstm_sequence(proj._p, weight._p, cell._p, hidden._p, bool(reverse)), proj._b, Float)


def gru_cell(gates_x: Tensor, gates_h: Tensor, hidden: Tensor) -> Tensor:
    """One GRU step (reset gate after the hidden projection, as PyTorch's and Burn's default).

    Args:
        gates_x: Float ``[B, 3H]``: the input's projection with its bias (``x W_x + b_x``), as
            the update, reset and new gate blocks, ``H`` columns each.
        gates_h: Float ``[B, 3H]``: the hidden state's projection with its bias
            (``h W_h + b_h``), same blocks.
        hidden: Float ``[B, H]``, the previous hidden state.

    Returns:
        The new hidden state ``[B, H]``: ``n + z * (hidden - n)`` with ``z, r`` the sigmoids of
        the summed update and reset blocks and ``n = tanh(x_n + r * h_n)``. Differentiable in all
        three inputs.

    Example:
        >>> zeros = Tensor.zeros((1, 3))  # z = r = 0.5, n = 0  # doctest: +SKIP
        >>> gru_cell(zeros, zeros, Tensor.ones((1, 1))).tolist()  # doctest: +SKIP
        [[0.5]]
    """
    _check_inputs("gru_cell", ("gates_x", gates_x), ("gates_h", gates_h), ("hidden", hidden))
    gru_widths("gru_cell", gates_x.shape, gates_h.shape, hidden.shape)
    return wrap(gates_x._b.gru_cell(gates_x._p, gates_h._p, hidden._p), gates_x._b, Float)
