"""Recurrent-cell ops of the backend contract: one LSTM step's element-wise part and its backward
helper.

An LSTM step is a GEMM (the hidden state times the stacked gate weights) and a dozen element-wise
ops on the gates; over a sequence those small ops, each with its own autodiff node, cost more
than the GEMM. `lstm_cell` takes the element-wise part as one op, with a default composed of
the float and activation ops, so every backend runs it; a backend overrides it with one pass.

Gate layout (`burn.nn.Lstm`'s stacking): the pre-activation ``gates [B, 4H]`` hold the input,
forget and output gates and the cell candidate, ``H`` columns each, in that order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.contract import default
from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any


def lstm_widths(op: str, gates_shape: tuple[int, ...], cell_shape: tuple[int, ...]) -> tuple[int, int]:
    """``(B, H)`` of gates ``[B, 4H]`` and a cell ``[B, H]``; a ShapeError naming `op` otherwise."""
    if len(gates_shape) != 2 or gates_shape[1] % 4 or cell_shape != (gates_shape[0], gates_shape[1] // 4):
        raise ShapeError(
            f"{op}: gates must be [B, 4H] and the cell [B, H], got {gates_shape} and {cell_shape}"
        )
    return gates_shape[0], gates_shape[1] // 4


def _block(b: Backend, x: P, rows: int, start: int, width: int) -> P:
    return b.float_slice(x, (slice(0, rows), slice(start, start + width)))


class RnnOps:
    """Recurrent-cell ops; every one has a default."""

    @default
    def lstm_cell(self, gates: P, cell: P) -> P:
        """One LSTM step from its pre-activation `gates` ``[B, 4H]`` and the previous `cell`
        ``[B, H]`` -> ``[B, 2H]``: the new hidden state in the first ``H`` columns, the new cell
        in the last ``H``. With ``i, f, o = sigmoid`` of the first three blocks and
        ``g = tanh`` of the last: ``c' = f * c + i * g``, ``h = o * tanh(c')``.
        """
        b: Backend = self  # type: ignore[assignment]
        rows, hidden = lstm_widths("lstm_cell", b.float_shape(gates), b.float_shape(cell))
        sig = b.sigmoid(_block(b, gates, rows, 0, 3 * hidden))
        i, f, o = (_block(b, sig, rows, k * hidden, hidden) for k in range(3))
        g = b.float_tanh(_block(b, gates, rows, 3 * hidden, hidden))
        new_cell = b.float_add(b.float_mul(f, cell), b.float_mul(i, g))
        return b.float_cat([b.float_mul(o, b.float_tanh(new_cell)), new_cell], 1)

    @default
    def lstm_cell_backward(self, gates: P, cell: P, output: P, output_grad: P) -> tuple[P, P]:
        """Gradients of `lstm_cell` with respect to `gates` and `cell`, given its `output`
        ``[B, 2H]`` and the gradient of that output (hidden then cell columns).

        With ``t = tanh(c')``: ``dc = dc' + dh * o * (1 - t^2)``; the gates' gradients are
        ``dc * g * i(1 - i)``, ``dc * c * f(1 - f)``, ``dh * t * o(1 - o)``, ``dc * i * (1 - g^2)``;
        the cell's is ``dc * f``.
        """
        b: Backend = self  # type: ignore[assignment]
        rows, hidden = lstm_widths("lstm_cell_backward", b.float_shape(gates), b.float_shape(cell))
        sig = b.sigmoid(_block(b, gates, rows, 0, 3 * hidden))
        i, f, o = (_block(b, sig, rows, k * hidden, hidden) for k in range(3))
        g = b.float_tanh(_block(b, gates, rows, 3 * hidden, hidden))
        t = b.float_tanh(_block(b, output, rows, hidden, hidden))
        dh = _block(b, output_grad, rows, 0, hidden)
        one_minus = lambda v: b.float_add_scalar(b.float_neg(v), 1.0)  # noqa: E731 - 1 - v
        dc = b.float_add(
            _block(b, output_grad, rows, hidden, hidden),
            b.float_mul(b.float_mul(dh, o), one_minus(b.float_mul(t, t))),
        )
        d_i = b.float_mul(b.float_mul(dc, g), b.float_mul(i, one_minus(i)))
        d_f = b.float_mul(b.float_mul(dc, cell), b.float_mul(f, one_minus(f)))
        d_o = b.float_mul(b.float_mul(dh, t), b.float_mul(o, one_minus(o)))
        d_g = b.float_mul(b.float_mul(dc, i), one_minus(b.float_mul(g, g)))
        return b.float_cat([d_i, d_f, d_o, d_g], 1), b.float_mul(dc, f)
