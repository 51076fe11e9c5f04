"""The rnn family (`burn.backend.ops.rnn`) on NumPy arrays: the LSTM and GRU cells, float32 gates
of at least `COMPILED_MIN_SIZE` elements by the compiled kernels of `burn_ndarray.kernels.rnn` (one
pass each way; rows split between threads when large, on the TBB pool or else the Python pool, as
`burn_ndarray.runtime.split.run_ranges` does); smaller gates, other dtypes (or no numba) by the
contract's composition.

On the LSTM benchmark (32 steps of ``[32, 1024]`` gates) the composition was 13 forward ops and
about 20 backward ones per step, each a NumPy call plus an autodiff node; the kernels make that
one call each way.

`lstm_sequence` runs the whole sequence in one op: per step one BLAS GEMM (``np.dot`` into a
reused buffer, the previous hidden state read in place from the output) and one `lstm_step`
kernel writing the step's row of the preallocated ``[T, B, 6H]`` output (hidden, cell, gates);
its backward takes a copy of the gates, then per step one `lstm_step_backward` kernel (turning
them into their gradients in place) and one GEMM for the hidden state's gradient, and the
weight's gradient with one GEMM over all the steps. Float32 only, at any size (no sequence is
small enough for the composition's per-step ops to win); other dtypes take the composition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ops.rnn import RnnOps as DefaultRnnOps
from burn.backend.ops.rnn import gru_widths, lstm_sequence_widths, lstm_step_order, lstm_widths
from burn_ndarray import kernels
from burn_ndarray.runtime import split
from burn_ndarray.runtime.dtypes import F32

Array = Any
# Gates from this many elements take the compiled cell ([2, 256] and up); below, the composition,
# and small models never load numba.
COMPILED_MIN_SIZE = 1 << 9
# Gate elements per thread before a cell is split (each takes five exponentials, as a sigmoid
# takes one: the sigmoid's 32K per thread on the TBB pool, divided by four gates).
NATIVE_PER_THREAD = 1 << 13


def _compiled(gates: Array, *others: Array) -> Any:
    """`burn_ndarray.kernels.rnn` for float32 arrays with `COMPILED_MIN_SIZE` gates or more, else
    None (and None without numba)."""
    if gates.size < COMPILED_MIN_SIZE:
        return None
    if not all(a.__class__ is np.ndarray and a.dtype is F32 for a in (gates, *others)):
        return None
    return kernels.load("rnn")


def _sequence_kernels(*arrays: Array) -> Any:
    """`burn_ndarray.kernels.rnn` when every array is a float32 ndarray, else None (and None
    without numba)."""
    if not all(a.__class__ is np.ndarray and a.dtype is F32 for a in arrays):
        return None
    return kernels.load("rnn")


def _parts(gates: Array) -> int:
    """Chunks of rows for a cell over `gates` (`run_ranges` caps them at the number of rows)."""
    return split.compiled_parts(gates.size, split.TRANSCENDENTAL_PER_THREAD, NATIVE_PER_THREAD)


class RnnOps:
    """The rnn ops of `burn_ndarray.NdArray`."""

    def lstm_cell(self, gates: Array, cell: Array) -> Array:
        rows, hidden = lstm_widths("lstm_cell", gates.shape, cell.shape)
        k = _compiled(gates, cell)
        if k is None:
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultRnnOps.lstm_cell(backend, gates, cell)
        g, c = np.ascontiguousarray(gates), np.ascontiguousarray(cell)  # a narrowed cell is a view
        out = np.empty((rows, 2 * hidden), F32)
        split.run_ranges(k.lstm_cell_range, k.lstm_cell, rows, _parts(g), g, c, out)
        return out

    def lstm_cell_backward(
        self, gates: Array, cell: Array, output: Array, output_grad: Array
    ) -> tuple[Array, Array]:
        rows, hidden = lstm_widths("lstm_cell_backward", gates.shape, cell.shape)
        k = _compiled(gates, cell, output, output_grad)
        if k is None:
            backend: Any = self
            return DefaultRnnOps.lstm_cell_backward(backend, gates, cell, output, output_grad)
        g, c = np.ascontiguousarray(gates), np.ascontiguousarray(cell)
        out, grad = np.ascontiguousarray(output), np.ascontiguousarray(output_grad)
        d_gates, d_cell = np.empty(g.shape, F32), np.empty(c.shape, F32)
        serial, parallel = k.lstm_cell_backward_range, k.lstm_cell_backward
        split.run_ranges(serial, parallel, rows, _parts(g), g, c, out, grad, d_gates, d_cell)
        return d_gates, d_cell

    def lstm_sequence(self, proj: Array, weight: Array, cell: Array, hidden: Array, reverse: bool) -> Array:
        shapes = (proj.shape, weight.shape, cell.shape, hidden.shape)
        steps, rows, width = lstm_sequence_widths("lstm_sequence", *shapes)
        k = _sequence_kernels(proj, weight, cell, hidden)
        if k is None:
            backend: Any = self
            return DefaultRnnOps.lstm_sequence(backend, proj, weight, cell, hidden, reverse)
        p = np.ascontiguousarray(proj)
        out = np.empty((steps, rows, 6 * width), F32)  # hidden, cell, gates
        rec = np.empty((rows, 4 * width), F32)
        prev = np.concatenate([hidden, cell], 1)
        parts = _parts(rec)
        serial, parallel = k.lstm_step_range, k.lstm_step
        for t in lstm_step_order(steps, reverse):
            # The previous hidden state is read in place (a [B, H] view with row stride 2H, which
            # BLAS takes as is); the product lands in the reused buffer.
            np.dot(prev[:, :width], weight, out=rec)
            step_out = out[t]
            split.run_ranges(serial, parallel, rows, parts, p[t], rec, prev, step_out)
            prev = step_out
        return out

    def lstm_sequence_backward(
        self, proj: Array, weight: Array, cell: Array, hidden: Array, output: Array, output_grad: Array,
        reverse: bool,
    ) -> tuple[Array, Array, Array, Array]:  # fmt: skip
        shapes = (proj.shape, weight.shape, cell.shape, hidden.shape)
        steps, rows, width = lstm_sequence_widths("lstm_sequence_backward", *shapes)
        k = _sequence_kernels(proj, weight, cell, hidden, output, output_grad)
        if k is None or output.shape != output_grad.shape or output.shape != (steps, rows, 6 * width):
            backend: Any = self
            args = (proj, weight, cell, hidden, output, output_grad, reverse)
            return DefaultRnnOps.lstm_sequence_backward(backend, *args)
        out, grad = np.ascontiguousarray(output), np.ascontiguousarray(output_grad)
        # The state each step started from, in step order: the initial one for the step visited
        # first, else the output of the step visited before it.
        prev = np.empty((steps, rows, 2 * width), F32)
        first, rest, before = (
            (steps - 1, slice(0, -1), slice(1, None)) if reverse else (0, slice(1, None), slice(0, -1))
        )
        prev[first, :, :width], prev[first, :, width:] = hidden, cell
        prev[rest] = out[before, :, : 2 * width]
        # The forward's gates, overwritten step by step with their gradients by the kernel.
        d_proj = out[:, :, 2 * width :].copy()
        dh, dc = np.zeros((rows, width), F32), np.zeros((rows, width), F32)
        weight_t = weight.T
        parts = _parts(d_proj[0])
        serial, parallel = k.lstm_step_backward_range, k.lstm_step_backward
        # The gradient of the gates' own columns of the output: zero when only the states are used
        # (the layers), so looked at once rather than added at every step.
        gates_columns = grad[:, :, 2 * width :]
        gates_grad = gates_columns if gates_columns.any() else None
        for t in reversed(lstm_step_order(steps, reverse)):
            d_step = d_proj[t]
            split.run_ranges(serial, parallel, rows, parts, grad[t], prev[t], out[t], dh, dc, d_step)
            if gates_grad is not None:
                d_step += gates_grad[t]
            np.dot(d_step, weight_t, out=dh)  # the gradient of the hidden state the step started from
        h_prev = prev[:, :, :width].reshape(steps * rows, width)  # a view: row stride 2H
        d_weight = h_prev.T.dot(d_proj.reshape(steps * rows, 4 * width))
        return d_proj, d_weight, dc, dh

    def gru_cell(self, gates_x: Array, gates_h: Array, hidden: Array) -> Array:
        rows, width = gru_widths("gru_cell", gates_x.shape, gates_h.shape, hidden.shape)
        k = _compiled(gates_x, gates_h, hidden)
        if k is None:
            backend: Any = self
            return DefaultRnnOps.gru_cell(backend, gates_x, gates_h, hidden)
        gx, gh, h = (np.ascontiguousarray(a) for a in (gates_x, gates_h, hidden))
        out = np.empty((rows, width), F32)
        split.run_ranges(k.gru_cell_range, k.gru_cell, rows, _parts(gx), gx, gh, h, out)
        return out

    def gru_cell_backward(
        self, gates_x: Array, gates_h: Array, hidden: Array, output_grad: Array
    ) -> tuple[Array, Array, Array]:
        gru_widths("gru_cell_backward", gates_x.shape, gates_h.shape, hidden.shape)
        k = _compiled(gates_x, gates_h, hidden, output_grad)
        if k is None or output_grad.shape != hidden.shape:
            backend: Any = self
            return DefaultRnnOps.gru_cell_backward(backend, gates_x, gates_h, hidden, output_grad)
        gx, gh, h, grad = (np.ascontiguousarray(a) for a in (gates_x, gates_h, hidden, output_grad))
        d_gx, d_gh, d_h = np.empty(gx.shape, F32), np.empty(gh.shape, F32), np.empty(h.shape, F32)
        serial, parallel = k.gru_cell_backward_range, k.gru_cell_backward
        split.run_ranges(serial, parallel, h.shape[0], _parts(gx), gx, gh, h, grad, d_gx, d_gh, d_h)
        return d_gx, d_gh, d_h
