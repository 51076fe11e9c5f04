"""Recurrent ops: the LSTM and GRU cells, the LSTM sequence (both directions) and their backward
helpers against float64 references, with saturated gates, a NaN confined to its own element,
one-unit and many-row shapes (enough rows that a backend may split them between threads).

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


# -- LSTM sequence ------------------------------------------------------------------------------
# (steps, batch, hidden): one step of one unit, a few, and the benchmark model's batch-8 layer
# shortened to 12 steps.
SEQUENCE_SHAPES = [(1, 1, 1), (5, 3, 4), (12, 8, 256)]


def _sequence_inputs(rng: Any, shape: tuple[int, int, int], dtype: DType) -> tuple[Any, ...]:
    steps, batch, hidden = shape
    proj = rand_float(rng, (steps, batch, 4 * hidden), dtype, -2, 2)
    # a recurrent weight scaled so the gates stay in the activations' bends at any width
    scale = 1.0 / float(np.sqrt(hidden))
    weight = rand_float(rng, (hidden, 4 * hidden), dtype, -scale, scale)
    return (
        proj,
        weight,
        rand_float(rng, (batch, hidden), dtype, -1, 1),
        rand_float(rng, (batch, hidden), dtype, -1, 1),
    )


def _sequence_forward(
    proj: np.ndarray, weight: np.ndarray, cell: np.ndarray, hidden: np.ndarray, reverse: bool
) -> tuple[np.ndarray, list[np.ndarray]]:
    """``[T, B, 6H]`` (hidden, cell, gates per step) and the states each step started from."""
    steps = proj.shape[0]
    out, starts = np.empty((steps, proj.shape[1], 6 * cell.shape[1])), [np.empty(0)] * steps
    h, c = hidden, cell
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        starts[t] = np.concatenate([h, c], axis=1)
        gates = proj[t] + h @ weight
        hc = _forward(gates, c)
        out[t] = np.concatenate([hc, gates], axis=1)
        h, c = np.split(hc, 2, axis=1)
    return out, starts


def _sequence_backward(
    proj: np.ndarray,
    weight: np.ndarray,
    cell: np.ndarray,
    hidden: np.ndarray,
    grad: np.ndarray,
    reverse: bool,
) -> tuple[np.ndarray, ...]:
    """Back-propagation through time in float64, step by step with the cell's `_backward`."""
    steps, width = proj.shape[0], cell.shape[1]
    out, starts = _sequence_forward(proj, weight, cell, hidden, reverse)
    d_proj, d_weight = np.empty_like(proj), np.zeros_like(weight)
    dh, dc = np.zeros_like(hidden), np.zeros_like(cell)
    for t in range(steps) if reverse else range(steps - 1, -1, -1):
        step_grad = grad[t, :, : 2 * width] + np.concatenate([dh, dc], axis=1)
        d_gates, dc = _backward(out[t, :, 2 * width :], starts[t][:, width:], step_grad)
        d_gates = d_gates + grad[t, :, 2 * width :]
        d_proj[t] = d_gates
        d_weight += starts[t][:, :width].T @ d_gates
        dh = d_gates @ weight.T
    return d_proj, d_weight, dc, dh


def _lstm_sequence(proj: Any, weight: Any, cell: Any, hidden: Any, reverse: bool) -> Any:
    from burn.tensor import module

    return module.lstm_sequence(proj, weight, cell, hidden, reverse)


@covers("lstm_sequence")
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("shape", SEQUENCE_SHAPES, ids=str)
def test_lstm_sequence(backend: Any, float_dtype: DType, shape: Any, reverse: bool, rng: Any) -> None:
    proj, weight, cell, hidden = _sequence_inputs(rng, shape, float_dtype)
    tp, tw, tc, th = (make(backend, a, float_dtype) for a in (proj, weight, cell, hidden))
    out = _lstm_sequence(tp, tw, tc, th, reverse)
    want, _ = _sequence_forward(f64(proj), f64(weight), f64(cell), f64(hidden), reverse)
    # the error grows with the steps a state went through: terms counts one cell and one
    # recurrent product per step
    terms = 4 + shape[0] * (shape[2] + 4)
    check_float(out, want, float_dtype, terms=terms, what=f"lstm_sequence {shape} reverse={reverse}")


@covers("lstm_sequence")
def test_lstm_sequence_refuses_mismatched_shapes(backend: Any, rng: Any) -> None:
    from burn.errors import ShapeError

    dtype = backend.float_dtype
    proj, weight, cell, hidden = (make(backend, a, dtype) for a in _sequence_inputs(rng, (3, 2, 4), dtype))
    with pytest.raises(ShapeError, match=r"lstm_sequence: the projection must be \[T, B, 4H\]"):
        _lstm_sequence(proj, make(backend, np.zeros((4, 12)), dtype), cell, hidden, False)
    with pytest.raises(
        ShapeError, match=r"lstm_sequence: .* got \(3, 2, 16\), \(4, 16\), \(2, 4\) and \(3, 4\)"
    ):
        _lstm_sequence(proj, weight, cell, make(backend, np.zeros((3, 4)), dtype), False)


@covers("lstm_sequence_backward")
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("shape", SEQUENCE_SHAPES, ids=str)
def test_lstm_sequence_backward_helper(
    backend: Any, float_dtype: DType, shape: Any, reverse: bool, rng: Any
) -> None:
    steps, batch, hidden = shape
    proj, weight, cell, state = _sequence_inputs(rng, shape, float_dtype)
    grad = rand_float(rng, (steps, batch, 6 * hidden), float_dtype, -1, 1)
    tp, tw, tc, th, tgrad = (make(backend, a, float_dtype) for a in (proj, weight, cell, state, grad))
    out = _lstm_sequence(tp, tw, tc, th, reverse)
    got = backend.lstm_sequence_backward(tp._p, tw._p, tc._p, th._p, out._p, tgrad._p, reverse)
    want = _sequence_backward(f64(proj), f64(weight), f64(cell), f64(state), f64(grad), reverse)
    terms = 6 + steps * (4 * hidden + 6)
    for name, g, w in zip(("proj", "weight", "cell", "hidden"), got, want, strict=True):
        what = f"lstm_sequence_backward {shape} reverse={reverse} {name}"
        check_float(
            wrap_float(backend, g),
            w,
            float_dtype,
            terms=terms * (batch if name == "weight" else 1),
            what=what,
        )


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
