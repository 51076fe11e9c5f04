"""Recurrent ops of the backend contract: one LSTM or GRU step's element-wise part, a whole LSTM
sequence, and their backward helpers.

An LSTM step is a GEMM (the hidden state times the stacked gate weights) and a dozen element-wise
ops on the gates; over a sequence those small ops, each with its own autodiff node, cost more
than the GEMM. `lstm_cell` takes the element-wise part as one op, with a default composed of
the float and activation ops, so every backend runs it; a backend overrides it with one pass.

Gate layout (`burn.nn.Lstm`'s stacking): the pre-activation ``gates [B, 4H]`` hold the input,
forget and output gates and the cell candidate, ``H`` columns each, in that order. A GRU step
(`burn.nn.Gru` with ``reset_after``, PyTorch's and Burn's default) takes the input's projection
``gates_x [B, 3H]`` and the hidden state's ``gates_h [B, 3H]`` separately, each with its bias, as
the update, reset and new gates in that order: the reset gate scales only the hidden part of the
new gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.contract import default, family
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


def lstm_sequence_widths(
    op: str,
    proj_shape: tuple[int, ...],
    weight_shape: tuple[int, ...],
    cell_shape: tuple[int, ...],
    hidden_shape: tuple[int, ...],
) -> tuple[int, int, int]:
    """``(T, B, H)`` of an input projection ``[T, B, 4H]``, a recurrent weight ``[H, 4H]`` and
    initial states ``[B, H]``; a ShapeError naming `op` otherwise."""
    ok = len(proj_shape) == 3 and proj_shape[0] > 0 and proj_shape[2] % 4 == 0
    if ok:
        steps, batch, hidden = proj_shape[0], proj_shape[1], proj_shape[2] // 4
        ok = weight_shape == (hidden, 4 * hidden) and cell_shape == hidden_shape == (batch, hidden)
    if not ok:
        raise ShapeError(
            f"{op}: the projection must be [T, B, 4H] (T > 0), the recurrent weight [H, 4H] and the "
            f"cell and hidden states [B, H], got {proj_shape}, {weight_shape}, {cell_shape} and "
            f"{hidden_shape}"
        )
    return steps, batch, hidden


def lstm_step_order(steps: int, reverse: bool) -> range:
    """The order `lstm_sequence` visits the steps in."""
    return range(steps - 1, -1, -1) if reverse else range(steps)


def gru_widths(
    op: str, gates_x_shape: tuple[int, ...], gates_h_shape: tuple[int, ...], hidden_shape: tuple[int, ...]
) -> tuple[int, int]:
    """``(B, H)`` of projections ``[B, 3H]`` (both) and a hidden state ``[B, H]``; a ShapeError
    naming `op` otherwise."""
    if (
        len(gates_x_shape) != 2
        or gates_x_shape[1] % 3
        or gates_h_shape != gates_x_shape
        or hidden_shape != (gates_x_shape[0], gates_x_shape[1] // 3)
    ):
        raise ShapeError(
            f"{op}: gates_x and gates_h must be [B, 3H] and the hidden state [B, H], got "
            f"{gates_x_shape}, {gates_h_shape} and {hidden_shape}"
        )
    return gates_x_shape[0], gates_x_shape[1] // 3


def _block(b: Backend, x: P, rows: int, start: int, width: int) -> P:
    return b.float_slice(x, (slice(0, rows), slice(start, start + width)))


def _step(b: Backend, x: P, t: int, rows: int, width: int) -> P:
    """Step `t` of a time-major ``[T, rows, width]`` tensor, as ``[rows, width]``."""
    return b.float_reshape(
        b.float_slice(x, (slice(t, t + 1), slice(0, rows), slice(0, width))), (rows, width)
    )


def _stacked_steps(b: Backend, steps: list[P], rows: int, width: int) -> P:
    """``[rows, width]`` tensors -> ``[len(steps), rows, width]``."""
    return b.float_cat([b.float_reshape(s, (1, rows, width)) for s in steps], 0)


def _gru_gates(b: Backend, op: str, gates_x: P, gates_h: P, hidden: P) -> tuple[P, P, P, P]:
    """``(z, r, h_n, n)`` of a GRU step: the update and reset gates, the hidden projection's new
    block and the new gate ``tanh(x_n + r * h_n)`` (shapes checked, naming `op`)."""
    shapes = (b.float_shape(gates_x), b.float_shape(gates_h), b.float_shape(hidden))
    rows, width = gru_widths(op, *shapes)
    summed = b.float_add(_block(b, gates_x, rows, 0, 2 * width), _block(b, gates_h, rows, 0, 2 * width))
    zr = b.sigmoid(summed)
    z, r = _block(b, zr, rows, 0, width), _block(b, zr, rows, width, width)
    h_n = _block(b, gates_h, rows, 2 * width, width)
    n = b.float_tanh(b.float_add(_block(b, gates_x, rows, 2 * width, width), b.float_mul(r, h_n)))
    return z, r, h_n, n


@family("rnn")
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

    @default(backward_of="lstm_cell")
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

    @default
    def lstm_sequence(self, proj: P, weight: P, cell: P, hidden: P, reverse: bool) -> P:
        """One direction of an LSTM layer over a sequence, from every step's input projection.

        Args:
            proj: ``[T, B, 4H]``, each step's ``x_t W_x + b`` in `lstm_cell`'s gate order
                (input, forget, output, cell candidate).
            weight: the recurrent weight ``[H, 4H]`` (``gates_t = proj[t] + h_{t-1} @ weight``).
            cell: the initial cell state ``[B, H]``.
            hidden: the initial hidden state ``[B, H]``.
            reverse: visit the steps from the last to the first (a bidirectional layer's
                reverse direction); ``h_{t-1}`` is then the state after step ``t + 1``.

        Returns:
            ``[T, B, 6H]``: row ``t`` holds the hidden state after step ``t`` (columns ``0:H``),
            the cell state (``H:2H``) and the step's pre-activation gates (``2H:6H``), which the
            backward reuses instead of recomputing them with another GEMM. The final states are
            the row of the step visited last: ``T - 1``, or ``0`` when `reverse`.
        """
        b: Backend = self  # type: ignore[assignment]
        shapes = (b.float_shape(proj), b.float_shape(weight), b.float_shape(cell), b.float_shape(hidden))
        steps, rows, width = lstm_sequence_widths("lstm_sequence", *shapes)
        out: list[P] = [None] * steps
        h, c = hidden, cell
        for t in lstm_step_order(steps, reverse):
            gates = b.float_add(_step(b, proj, t, rows, 4 * width), b.float_matmul(h, weight))
            hc = b.lstm_cell(gates, c)
            h, c = _block(b, hc, rows, 0, width), _block(b, hc, rows, width, width)
            out[t] = b.float_cat([hc, gates], 1)
        return _stacked_steps(b, out, rows, 6 * width)

    @default(backward_of="lstm_sequence")
    def lstm_sequence_backward(
        self, proj: P, weight: P, cell: P, hidden: P, output: P, output_grad: P, reverse: bool
    ) -> tuple[P, P, P, P]:
        """Gradients of `lstm_sequence` with respect to `proj`, `weight`, `cell` and `hidden`,
        given its `output` ``[T, B, 6H]`` and the gradient of that output.

        Back-propagation through time: from the step visited last back to the first, the step's
        `lstm_cell_backward` (on the gates kept in `output`) takes the output's gradient plus what
        the later step sent back (``d_gates @ weight^T`` for the hidden state, ``dc * f`` for the
        cell); each step's ``d_gates`` (plus the gradient of the gates' own columns of the output)
        is the projection's gradient, and the weight's is ``H_prev^T @ d_gates`` with ``H_prev``
        the hidden states the steps started from (one GEMM over all the steps).
        """
        b: Backend = self  # type: ignore[assignment]
        shapes = (b.float_shape(proj), b.float_shape(weight), b.float_shape(cell), b.float_shape(hidden))
        steps, rows, width = lstm_sequence_widths("lstm_sequence_backward", *shapes)
        order = list(lstm_step_order(steps, reverse))
        # The state every step started from: the initial one for the first step visited, else the
        # output of the step visited before it.
        initial = b.float_cat([hidden, cell], 1)
        prev: list[P] = [None] * steps
        for k, t in enumerate(order):
            prev[t] = (
                initial
                if k == 0
                else _block(b, _step(b, output, order[k - 1], rows, 6 * width), rows, 0, 2 * width)
            )
        weight_t = b.float_swap_dims(weight, 0, 1)
        d_gates: list[P] = [None] * steps
        dh = dc = None
        for t in reversed(order):
            row, grad_row = _step(b, output, t, rows, 6 * width), _step(b, output_grad, t, rows, 6 * width)
            grad = _block(b, grad_row, rows, 0, 2 * width)
            if dh is not None:
                grad = b.float_add(grad, b.float_cat([dh, dc], 1))
            gates, hc = _block(b, row, rows, 2 * width, 4 * width), _block(b, row, rows, 0, 2 * width)
            d_step, dc = b.lstm_cell_backward(gates, _block(b, prev[t], rows, width, width), hc, grad)
            d_gates[t] = b.float_add(d_step, _block(b, grad_row, rows, 2 * width, 4 * width))
            dh = b.float_matmul(d_gates[t], weight_t)
        d_proj = _stacked_steps(b, d_gates, rows, 4 * width)
        h_prev = _block(b, b.float_cat(prev, 0), steps * rows, 0, width)
        d_weight = b.float_matmul(
            b.float_swap_dims(h_prev, 0, 1), b.float_reshape(d_proj, (steps * rows, 4 * width))
        )
        return d_proj, d_weight, dc, dh

    @default
    def gru_cell(self, gates_x: P, gates_h: P, hidden: P) -> P:
        """One GRU step (the reset gate applied after the hidden projection) from the input's
        projection `gates_x` ``[B, 3H]``, the hidden state's `gates_h` ``[B, 3H]`` (each with its
        bias; update, reset and new gate blocks) and the previous `hidden` ``[B, H]`` -> the new
        hidden state ``[B, H]``. With ``z, r = sigmoid(x + h)`` of the first two blocks and
        ``n = tanh(x_n + r * h_n)``: ``h' = n + z * (hidden - n)``.
        """
        b: Backend = self  # type: ignore[assignment]
        z, _r, _h_n, n = _gru_gates(b, "gru_cell", gates_x, gates_h, hidden)
        return b.float_add(n, b.float_mul(z, b.float_sub(hidden, n)))

    @default(backward_of="gru_cell")
    def gru_cell_backward(self, gates_x: P, gates_h: P, hidden: P, output_grad: P) -> tuple[P, P, P]:
        """Gradients of `gru_cell` with respect to `gates_x`, `gates_h` and `hidden`, given the
        gradient `output_grad` ``[B, H]`` of its output.

        With ``dn = g (1 - z) (1 - n^2)``: the update and reset blocks of both projections get
        ``g (hidden - n) z(1 - z)`` and ``dn h_n r(1 - r)``; the new blocks get ``dn`` (input)
        and ``dn r`` (hidden); the hidden state gets ``g z``.
        """
        b: Backend = self  # type: ignore[assignment]
        z, r, h_n, n = _gru_gates(b, "gru_cell_backward", gates_x, gates_h, hidden)
        one_minus = lambda v: b.float_add_scalar(b.float_neg(v), 1.0)  # noqa: E731 - 1 - v
        g = output_grad
        dn = b.float_mul(b.float_mul(g, one_minus(z)), one_minus(b.float_mul(n, n)))
        dz = b.float_mul(b.float_mul(g, b.float_sub(hidden, n)), b.float_mul(z, one_minus(z)))
        dr = b.float_mul(b.float_mul(dn, h_n), b.float_mul(r, one_minus(r)))
        d_gates_x = b.float_cat([dz, dr, dn], 1)
        d_gates_h = b.float_cat([dz, dr, b.float_mul(dn, r)], 1)
        return d_gates_x, d_gates_h, b.float_mul(g, z)
