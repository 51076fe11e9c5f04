"""Compiled kernels of the rnn family: the LSTM and GRU cells (numba, float32), one step's gates
to the new state in one pass, and the backward pass in another, instead of a dozen NumPy passes
and autodiff nodes (`burn_ndarray.ops.rnn`); and the LSTM sequence's steps (`lstm_step`,
`lstm_step_backward`), the same cell with the input projection's add and the state hand-over
folded in, writing into the sequence's preallocated buffers (the forward keeps every step's
gates in its output for the backward).

The sigmoid is `activation`'s (within 2 ulps of float64's). The tanh is Cephes' ``tanhf``
scheme (S. Moshier, Cephes Math Library): the odd polynomial below for ``|x| < 0.625``, else
``(1 - e) / (1 + e)`` with ``e = exp(-2|x|)`` from the same in-kernel exp, so the loops vectorize
(libm's ``tanhf`` does not); within 3 ulps of float64's tanh (tested).

Rows run in order, each row's columns in one vectorized loop; split, the launchers hand chunks of
rows to the TBB pool, so every element is computed by the same code at any thread count (the
same bits).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from burn_ndarray.kernels.activation import _exp_neg_wide, _inline, _sigmoid
from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any
_f32 = np.float32
# Cephes tanhf.c: tanh(x) = x + x^3 P(x^2) on |x| < 0.625, P's coefficients highest first.
_TANH_P = (_f32(-5.70498872745e-3), _f32(2.06390887954e-2), _f32(-5.37397155531e-2),
           _f32(1.33314422036e-1), _f32(-3.33332819422e-1))  # fmt: skip
_TANH_SMALL = _f32(0.625)
_ZERO, _ONE = _f32(0.0), _f32(1.0)


@_inline
def _tanh(v: Any) -> Any:
    """tanh of a float32, without a branch; NaN for NaN, -0.0 for -0.0."""
    a = abs(v)
    z = v * v
    p = _TANH_P[0]
    for c in _TANH_P[1:]:
        p = p * z + c
    small = p * z * v + v
    e = _exp_neg_wide(a + a)  # 0 from |v| = 52 on: tanh is 1 there
    large = (_ONE - e) / (_ONE + e)
    large = large if v >= _ZERO else -large
    t = small if a < _TANH_SMALL else large
    return t if v == v and v != _ZERO else v  # NaN stays NaN, and -0.0 keeps its sign


@jit
def lstm_cell_range(lo: int, hi: int, gates: Array, cell: Array, out: Array) -> None:
    """Rows `lo` to `hi` of `burn.backend.ops.rnn.RnnOps.lstm_cell` (C-contiguous float32)."""
    hidden = cell.shape[1]
    for r in range(lo, hi):
        row = gates[r]
        gi, gf = row[:hidden], row[hidden : 2 * hidden]
        go, gg = row[2 * hidden : 3 * hidden], row[3 * hidden :]
        c, h_out, c_out = cell[r], out[r, :hidden], out[r, hidden:]
        for j in range(hidden):
            new_cell = _sigmoid(gf[j]) * c[j] + _sigmoid(gi[j]) * _tanh(gg[j])
            c_out[j] = new_cell
            h_out[j] = _sigmoid(go[j]) * _tanh(new_cell)


@jit
def lstm_cell_backward_range(
    lo: int, hi: int, gates: Array, cell: Array, out: Array, grad: Array, d_gates: Array, d_cell: Array
) -> None:
    """Rows `lo` to `hi` of `burn.backend.ops.rnn.RnnOps.lstm_cell_backward`."""
    hidden = cell.shape[1]
    for r in range(lo, hi):
        row, d_row = gates[r], d_gates[r]
        gi, gf = row[:hidden], row[hidden : 2 * hidden]
        go, gg = row[2 * hidden : 3 * hidden], row[3 * hidden :]
        di, df = d_row[:hidden], d_row[hidden : 2 * hidden]
        do, dg = d_row[2 * hidden : 3 * hidden], d_row[3 * hidden :]
        c, new_c, dh, dnew_c, dc_out = cell[r], out[r, hidden:], grad[r, :hidden], grad[r, hidden:], d_cell[r]
        for j in range(hidden):
            i, f, o, g = _sigmoid(gi[j]), _sigmoid(gf[j]), _sigmoid(go[j]), _tanh(gg[j])
            t = _tanh(new_c[j])
            dc = dnew_c[j] + dh[j] * o * (_ONE - t * t)
            di[j] = dc * g * (i * (_ONE - i))
            df[j] = dc * c[j] * (f * (_ONE - f))
            do[j] = dh[j] * t * (o * (_ONE - o))
            dg[j] = dc * i * (_ONE - g * g)
            dc_out[j] = dc * f


@jit_parallel
def lstm_cell(parts: int, gates: Array, cell: Array, out: Array) -> None:
    """`lstm_cell_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(cell.shape[0], c, parts)
        lstm_cell_range(lo, hi, gates, cell, out)


@jit_parallel
def lstm_cell_backward(
    parts: int, gates: Array, cell: Array, out: Array, grad: Array, d_gates: Array, d_cell: Array
) -> None:
    """`lstm_cell_backward_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(cell.shape[0], c, parts)
        lstm_cell_backward_range(lo, hi, gates, cell, out, grad, d_gates, d_cell)


@jit
def lstm_step_range(lo: int, hi: int, proj: Array, rec: Array, prev: Array, out: Array) -> None:
    """Rows `lo` to `hi` of one step of `burn.backend.ops.rnn.RnnOps.lstm_sequence`: the gates
    ``proj + rec`` ``[B, 4H]`` (input projection, recurrent product) and the state the step
    starts from (hidden, cell: the first ``2H`` columns of `prev`) -> `out` ``[B, 6H]`` (hidden,
    cell, gates). The gates are stored first, then read back through per-block views, the shape
    `lstm_cell_range` vectorizes in."""
    hidden = proj.shape[1] // 4
    for r in range(lo, hi):
        p, q, g_out = proj[r], rec[r], out[r, 2 * hidden :]
        for j in range(4 * hidden):
            g_out[j] = p[j] + q[j]
        gi, gf = g_out[:hidden], g_out[hidden : 2 * hidden]
        go, gg = g_out[2 * hidden : 3 * hidden], g_out[3 * hidden :]
        c, h_out, c_out = prev[r, hidden : 2 * hidden], out[r, :hidden], out[r, hidden : 2 * hidden]
        for j in range(hidden):
            new_cell = _sigmoid(gf[j]) * c[j] + _sigmoid(gi[j]) * _tanh(gg[j])
            c_out[j] = new_cell
            h_out[j] = _sigmoid(go[j]) * _tanh(new_cell)


@jit
def lstm_step_backward_range(
    lo: int, hi: int, grad: Array, prev: Array, out: Array, dh_next: Array, dc_next: Array, d_gates: Array
) -> None:
    """Rows `lo` to `hi` of one step of `burn.backend.ops.rnn.RnnOps.lstm_sequence_backward`: the
    step's own output gradient (the first ``2H`` columns of `grad`) is added into what the later
    step sent back (`dh_next`, `dc_next` ``[B, H]``); with the step's start state `prev`
    ``[B, 2H]`` and output `out` (its first ``2H`` columns), the step's gates (pre-activations,
    ``[B, 4H]``, in `d_gates`) are overwritten with their gradients and `dc_next` with the start
    cell's gradient.

    Everything is updated in place, each unit reading its own elements before writing them. The
    four gate blocks are indexed through their own views: indexed as ``d_row[k * hidden + j]``
    the loop did not vectorize (7x slower at ``[32, 1024]`` gates, 400 against 58 us)."""
    hidden = prev.shape[1] // 2
    for r in range(lo, hi):
        dh, dc_io, g_row = dh_next[r], dc_next[r], grad[r]
        for j in range(hidden):
            dh[j] += g_row[j]
            dc_io[j] += g_row[hidden + j]
        d_row, c, new_c = d_gates[r], prev[r, hidden:], out[r, hidden : 2 * hidden]
        di, df = d_row[:hidden], d_row[hidden : 2 * hidden]
        do, dg = d_row[2 * hidden : 3 * hidden], d_row[3 * hidden :]
        for j in range(hidden):
            i, f, o, g = _sigmoid(di[j]), _sigmoid(df[j]), _sigmoid(do[j]), _tanh(dg[j])
            t = _tanh(new_c[j])
            dc = dc_io[j] + dh[j] * o * (_ONE - t * t)
            di[j] = dc * g * (i * (_ONE - i))
            df[j] = dc * c[j] * (f * (_ONE - f))
            do[j] = dh[j] * t * (o * (_ONE - o))
            dg[j] = dc * i * (_ONE - g * g)
            dc_io[j] = dc * f


@jit_parallel
def lstm_step(parts: int, proj: Array, rec: Array, prev: Array, out: Array) -> None:
    """`lstm_step_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(prev.shape[0], c, parts)
        lstm_step_range(lo, hi, proj, rec, prev, out)


@jit_parallel
def lstm_step_backward(
    parts: int, grad: Array, prev: Array, out: Array, dh_next: Array, dc_next: Array, d_gates: Array
) -> None:
    """`lstm_step_backward_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(prev.shape[0], c, parts)
        lstm_step_backward_range(lo, hi, grad, prev, out, dh_next, dc_next, d_gates)


@jit
def gru_cell_range(lo: int, hi: int, gx: Array, gh: Array, hidden: Array, out: Array) -> None:
    """Rows `lo` to `hi` of `burn.backend.ops.rnn.RnnOps.gru_cell` (C-contiguous float32)."""
    width = hidden.shape[1]
    for r in range(lo, hi):
        x, h_proj, h, h_out = gx[r], gh[r], hidden[r], out[r]
        for j in range(width):
            z = _sigmoid(x[j] + h_proj[j])
            reset = _sigmoid(x[width + j] + h_proj[width + j])
            n = _tanh(x[2 * width + j] + reset * h_proj[2 * width + j])
            h_out[j] = n + z * (h[j] - n)


@jit
def gru_cell_backward_range(
    lo: int, hi: int, gx: Array, gh: Array, hidden: Array, grad: Array, d_gx: Array, d_gh: Array, d_h: Array
) -> None:
    """Rows `lo` to `hi` of `burn.backend.ops.rnn.RnnOps.gru_cell_backward`."""
    width = hidden.shape[1]
    for r in range(lo, hi):
        x, h_proj, h, g = gx[r], gh[r], hidden[r], grad[r]
        dx, dhp, dh = d_gx[r], d_gh[r], d_h[r]
        for j in range(width):
            z = _sigmoid(x[j] + h_proj[j])
            reset = _sigmoid(x[width + j] + h_proj[width + j])
            h_n = h_proj[2 * width + j]
            n = _tanh(x[2 * width + j] + reset * h_n)
            dn = g[j] * (_ONE - z) * (_ONE - n * n)
            dz = g[j] * (h[j] - n) * (z * (_ONE - z))
            dr = dn * h_n * (reset * (_ONE - reset))
            dx[j] = dz
            dx[width + j] = dr
            dx[2 * width + j] = dn
            dhp[j] = dz
            dhp[width + j] = dr
            dhp[2 * width + j] = dn * reset
            dh[j] = g[j] * z


@jit_parallel
def gru_cell(parts: int, gx: Array, gh: Array, hidden: Array, out: Array) -> None:
    """`gru_cell_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(hidden.shape[0], c, parts)
        gru_cell_range(lo, hi, gx, gh, hidden, out)


@jit_parallel
def gru_cell_backward(
    parts: int, gx: Array, gh: Array, hidden: Array, grad: Array, d_gx: Array, d_gh: Array, d_h: Array
) -> None:
    """`gru_cell_backward_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(hidden.shape[0], c, parts)
        gru_cell_backward_range(lo, hi, gx, gh, hidden, grad, d_gx, d_gh, d_h)


@jit
def tanh_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = tanh(x[i])`` (1-D float32): the cell's tanh on its own, for its tests."""
    xs, outs = x[lo:hi], out[lo:hi]
    for i in range(outs.size):
        outs[i] = _tanh(xs[i])
