"""The LSTM cell for NumPy arrays: float32 by the compiled kernels of `_rnn_kernels` (one pass
each way, rows split between threads when large), other dtypes by the contract's composition.

On the LSTM benchmark (32 steps of ``[32, 1024]`` gates) the composition was 13 forward ops and
about 20 backward ones per step, each a NumPy call plus an autodiff node; the kernels make that
one call each way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.rnn_ops import RnnOps as DefaultRnnOps
from burn.backend.rnn_ops import lstm_widths
from burn_ndarray._dtypes import F32
from burn_ndarray._parallel import TRANSCENDENTAL_PER_THREAD, compiled_parts

Array = Any
# Gate elements per thread before a cell is split (each takes five exponentials, as a sigmoid
# takes one: the sigmoid's 32K per thread on the TBB pool, divided by four gates).
NATIVE_PER_THREAD = 1 << 13


def _float32(*arrays: Array) -> bool:
    return all(a.__class__ is np.ndarray and a.dtype is F32 for a in arrays)


def _parts(gates: Array, rows: int) -> int:
    return min(rows, compiled_parts(gates.size, TRANSCENDENTAL_PER_THREAD, NATIVE_PER_THREAD))


class RnnOps:
    """`burn.backend.rnn_ops.RnnOps` for NumPy arrays."""

    def lstm_cell(self, gates: Array, cell: Array) -> Array:
        rows, hidden = lstm_widths("lstm_cell", gates.shape, cell.shape)
        if not _float32(gates, cell):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultRnnOps.lstm_cell(backend, gates, cell)
        from burn_ndarray import _rnn_kernels as k

        g, c = np.ascontiguousarray(gates), np.ascontiguousarray(cell)  # a narrowed cell is a view
        out = np.empty((rows, 2 * hidden), F32)
        parts = _parts(g, rows)
        if parts < 2:
            k.lstm_cell_range(0, rows, g, c, out)
        else:
            k.lstm_cell(parts, g, c, out)
        return out

    def lstm_cell_backward(
        self, gates: Array, cell: Array, output: Array, output_grad: Array
    ) -> tuple[Array, Array]:
        rows, hidden = lstm_widths("lstm_cell_backward", gates.shape, cell.shape)
        if not _float32(gates, cell, output, output_grad):
            backend: Any = self
            return DefaultRnnOps.lstm_cell_backward(backend, gates, cell, output, output_grad)
        from burn_ndarray import _rnn_kernels as k

        g, c = np.ascontiguousarray(gates), np.ascontiguousarray(cell)
        out, grad = np.ascontiguousarray(output), np.ascontiguousarray(output_grad)
        d_gates, d_cell = np.empty(g.shape, F32), np.empty(c.shape, F32)
        parts = _parts(g, rows)
        if parts < 2:
            k.lstm_cell_backward_range(0, rows, g, c, out, grad, d_gates, d_cell)
        else:
            k.lstm_cell_backward(parts, g, c, out, grad, d_gates, d_cell)
        return d_gates, d_cell
