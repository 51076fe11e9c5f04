"""Recurrent-cell ops: the LSTM and GRU cells and their backward helpers against float64
references, with saturated gates, a NaN confined to its own element, one-unit and many-row shapes
(enough rows that a backend may split them between threads).

The forward ops go through `burn.tensor.module.lstm_cell` / `gru_cell`; the backward helpers have
no Tensor method and are called on the backend's primitives directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, f64, make, rand_float, wrap_float

# (rows, hidden): one unit, a few, the LSTM benchmark's step, and 64 x 1024 (262,144 gate values).
SHAPES = [(1, 1), (3, 5), (32, 256), (64, 1024)]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # stable at both ends


def _acts(gates: np.ndarray) -> tuple[np.ndarray, ...]:
    h = gates.shape[1] // 4
    return (*(_sigmoid(gates[:, k * h : (k + 1) * h]) for k in range(3)), np.tanh(gates[:, 3 * h :]))


def _forward(gates: np.ndarray, cell: np.ndarray) -> np.ndarray:
    i, f, o, g = _acts(gates)
    new_cell = f * cell + i * g
    return np.concatenate([o * np.tanh(new_cell), new_cell], axis=1)


def _backward(gates: np.ndarray, cell: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = cell.shape[1]
    i, f, o, g = _acts(gates)
    t = np.tanh(f * cell + i * g)
    dh, dc = grad[:, :h], grad[:, h:] + grad[:, :h] * o * (1 - t * t)
    d_gates = np.concatenate(
        [dc * g * i * (1 - i), dc * cell * f * (1 - f), dh * t * o * (1 - o), dc * i * (1 - g * g)], axis=1
    )
    return d_gates, dc * f


def _lstm_cell(gates: Any, cell: Any) -> Any:
    from burn.tensor import module

    return module.lstm_cell(gates, cell)


def _inputs(rng: Any, shape: tuple[int, int], dtype: DType, spread: float = 4.0) -> tuple[Any, Any]:
    rows, hidden = shape
    gates = rand_float(rng, (rows, 4 * hidden), dtype, -spread, spread)
    return gates, rand_float(rng, (rows, hidden), dtype, -2, 2)


@covers("lstm_cell")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lstm_cell(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    gates, cell = _inputs(rng, shape, float_dtype)
    out = _lstm_cell(make(backend, gates, float_dtype), make(backend, cell, float_dtype))
    check_float(out, _forward(f64(gates), f64(cell)), float_dtype, terms=4, what=f"lstm_cell {shape}")


@covers("lstm_cell")
def test_lstm_cell_saturated_gates_and_nan(backend: Any, float_dtype: DType, rng: Any) -> None:
    # Gates far beyond the activations' bends give exact 0s and 1s, never NaN; a NaN gate or cell
    # value makes only its own unit NaN.
    gates, cell = _inputs(rng, (4, 6), float_dtype, spread=60.0)
    gates[1, 2] = np.nan  # row 1, unit 2's input gate
    cell[2, 5] = np.nan  # row 2, unit 5's cell
    out = _lstm_cell(make(backend, gates, float_dtype), make(backend, cell, float_dtype))
    want = _forward(f64(gates), f64(cell))
    assert np.isnan(want).sum() == 4  # hidden and cell of the two units
    check_float(out, want, float_dtype, terms=4, what="lstm_cell with saturated gates and NaN")


@covers("lstm_cell_backward")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lstm_cell_backward_helper(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    rows, hidden = shape
    gates, cell = _inputs(rng, shape, float_dtype)
    grad = rand_float(rng, (rows, 2 * hidden), float_dtype, -1, 1)
    tg, tc, tgrad = (make(backend, a, float_dtype) for a in (gates, cell, grad))
    out = _lstm_cell(tg, tc)
    d_gates, d_cell = backend.lstm_cell_backward(tg._p, tc._p, out._p, tgrad._p)
    want_gates, want_cell = _backward(f64(gates), f64(cell), f64(grad))
    what = f"lstm_cell_backward {shape}"
    check_float(wrap_float(backend, d_gates), want_gates, float_dtype, terms=6, what=what + " gates")
    check_float(wrap_float(backend, d_cell), want_cell, float_dtype, terms=6, what=what + " cell")


# -- GRU (reset gate after the hidden projection) ----------------------------------------------
def _gru_forward(gx: np.ndarray, gh: np.ndarray, hidden: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(h', z, r, n)`` in float64."""
    h = hidden.shape[1]
    z, r = _sigmoid(gx[:, :h] + gh[:, :h]), _sigmoid(gx[:, h : 2 * h] + gh[:, h : 2 * h])
    n = np.tanh(gx[:, 2 * h :] + r * gh[:, 2 * h :])
    return n + z * (hidden - n), z, r, n


def _gru_backward(
    gx: np.ndarray, gh: np.ndarray, hidden: np.ndarray, grad: np.ndarray
) -> tuple[np.ndarray, ...]:
    h = hidden.shape[1]
    _, z, r, n = _gru_forward(gx, gh, hidden)
    dn = grad * (1 - z) * (1 - n * n)
    dz = grad * (hidden - n) * z * (1 - z)
    dr = dn * gh[:, 2 * h :] * r * (1 - r)
    return np.concatenate([dz, dr, dn], axis=1), np.concatenate([dz, dr, dn * r], axis=1), grad * z


def _gru_inputs(rng: Any, shape: tuple[int, int], dtype: DType, spread: float = 4.0) -> tuple[Any, Any, Any]:
    rows, hidden = shape
    gx = rand_float(rng, (rows, 3 * hidden), dtype, -spread, spread)
    gh = rand_float(rng, (rows, 3 * hidden), dtype, -spread, spread)
    return gx, gh, rand_float(rng, (rows, hidden), dtype, -2, 2)


def _gru_cell(gx: Any, gh: Any, hidden: Any) -> Any:
    from burn.tensor import module

    return module.gru_cell(gx, gh, hidden)


@covers("gru_cell")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gru_cell(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    gx, gh, hidden = _gru_inputs(rng, shape, float_dtype)
    out = _gru_cell(*(make(backend, a, float_dtype) for a in (gx, gh, hidden)))
    want = _gru_forward(f64(gx), f64(gh), f64(hidden))[0]
    check_float(out, want, float_dtype, terms=4, what=f"gru_cell {shape}")


@covers("gru_cell")
def test_gru_cell_saturated_gates_and_nan(backend: Any, float_dtype: DType, rng: Any) -> None:
    # Saturated gates give exact 0s and 1s, never NaN; a NaN reaches only its own unit.
    gx, gh, hidden = _gru_inputs(rng, (4, 6), float_dtype, spread=60.0)
    gx[1, 2] = np.nan  # row 1, unit 2's update gate
    gh[2, 6 + 4] = np.nan  # row 2, unit 4's reset gate
    hidden[3, 5] = np.nan  # row 3, unit 5's state
    out = _gru_cell(*(make(backend, a, float_dtype) for a in (gx, gh, hidden)))
    want = _gru_forward(f64(gx), f64(gh), f64(hidden))[0]
    assert np.isnan(want).sum() == 3
    check_float(out, want, float_dtype, terms=4, what="gru_cell with saturated gates and NaN")


@covers("gru_cell")
def test_gru_cell_refuses_mismatched_shapes(backend: Any, rng: Any) -> None:
    from burn.errors import ShapeError

    dtype = backend.float_dtype
    gx, gh, hidden = (make(backend, a, dtype) for a in _gru_inputs(rng, (2, 3), dtype))
    with pytest.raises(ShapeError, match=r"gru_cell: gates_x and gates_h must be \[B, 3H\]"):
        _gru_cell(gx, gh, make(backend, np.zeros((2, 4)), dtype))


@covers("gru_cell_backward")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gru_cell_backward_helper(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    rows, hidden_size = shape
    gx, gh, hidden = _gru_inputs(rng, shape, float_dtype)
    grad = rand_float(rng, (rows, hidden_size), float_dtype, -1, 1)
    tx, th, thid, tgrad = (make(backend, a, float_dtype) for a in (gx, gh, hidden, grad))
    got = backend.gru_cell_backward(tx._p, th._p, thid._p, tgrad._p)
    want = _gru_backward(f64(gx), f64(gh), f64(hidden), f64(grad))
    for name, g, w in zip(("gates_x", "gates_h", "hidden"), got, want, strict=True):
        check_float(wrap_float(backend, g), w, float_dtype, terms=6, what=f"gru_cell_backward {shape} {name}")
