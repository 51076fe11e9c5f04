"""The compiled LSTM and GRU cells: the tanh against float64's, the kernels against the contract's
composition, thread-count invariance, views, and the dtypes left to the composition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend.ops.rnn import RnnOps as Default
from burn.errors import ShapeError
from burn_ndarray import NdArray
from burn_ndarray.kernels import rnn as kernels


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


def test_tanh_within_2_ulps_and_its_special_values() -> None:
    x = np.linspace(-60, 60, 1_200_001, dtype=np.float32)
    x = np.concatenate([x, np.float32([1e-30, -1e-38, 0.6249999, 0.625, 0.6250001, -0.625])])
    out = np.empty_like(x)
    kernels.tanh_range(0, x.size, x, out)
    want = np.tanh(x.astype(np.float64))
    nonzero = want != 0
    assert _ulps(out[nonzero], want[nonzero]).max() <= 2
    special = np.float32([0.0, -0.0, np.nan, np.inf, -np.inf])
    got = np.empty_like(special)
    kernels.tanh_range(0, special.size, special, got)
    np.testing.assert_array_equal(got, np.tanh(special))
    assert np.signbit(got[1]) and not np.signbit(got[0])


def _data(rng: np.random.Generator, rows: int, hidden: int, dtype: Any = np.float32) -> tuple[Any, Any, Any]:
    gates = rng.uniform(-8, 8, (rows, 4 * hidden)).astype(dtype)
    cell = rng.uniform(-3, 3, (rows, hidden)).astype(dtype)
    grad = rng.standard_normal((rows, 2 * hidden)).astype(dtype)
    return gates, cell, grad


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (4, 32), (32, 256), (96, 700)], ids=str)
def test_kernels_match_the_composition(B: NdArray, shape: Any, rng: Any) -> None:
    gates, cell, grad = _data(rng, *shape)
    out = B.lstm_cell(gates, cell)
    want = Default.lstm_cell(B, gates.astype(np.float64), cell.astype(np.float64))
    assert out.dtype == np.float32 and out.shape == (shape[0], 2 * shape[1])
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=2e-7)
    d_gates, d_cell = B.lstm_cell_backward(gates, cell, out, grad)
    want_gates, want_cell = Default.lstm_cell_backward(
        B, gates.astype(np.float64), cell.astype(np.float64), want, grad.astype(np.float64)
    )
    assert d_gates.dtype == d_cell.dtype == np.float32
    np.testing.assert_allclose(d_gates, want_gates, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_cell, want_cell, rtol=1e-5, atol=1e-6)


def test_the_same_bits_at_every_thread_count(B: NdArray, threads: Any, rng: Any) -> None:
    gates, cell, grad = _data(rng, 96, 700)  # 268,800 gate values: split from two threads on
    runs = []
    for count in (1, 2, 3):
        threads(count)
        out = B.lstm_cell(gates, cell)
        runs.append((out, *B.lstm_cell_backward(gates, cell, out, grad)))
    for run in runs[1:]:
        for got, first in zip(run, runs[0], strict=True):
            np.testing.assert_array_equal(got, first)


def test_views_are_taken_as_their_values(B: NdArray, rng: Any) -> None:
    gates, cell, grad = _data(rng, 6, 32)
    state = np.concatenate([rng.standard_normal((6, 32)).astype(np.float32), cell], axis=1)
    view = state[:, 32:]  # the cell as `nn.Lstm` passes it: a narrowed [B, 2H] output
    f_gates = np.asfortranarray(gates)
    np.testing.assert_array_equal(B.lstm_cell(f_gates, view), B.lstm_cell(gates, cell))
    out = B.lstm_cell(gates, cell)
    for got, want in zip(
        B.lstm_cell_backward(f_gates, view, out, np.asfortranarray(grad)),
        B.lstm_cell_backward(gates, cell, out, grad),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)


def test_other_dtypes_take_the_composition(B: NdArray, rng: Any) -> None:
    gates, cell, grad = _data(rng, 3, 2, np.float64)
    np.testing.assert_array_equal(B.lstm_cell(gates, cell), Default.lstm_cell(B, gates, cell))
    out = B.lstm_cell(gates, cell)
    want_both = Default.lstm_cell_backward(B, gates, cell, out, grad)
    for got, want in zip(B.lstm_cell_backward(gates, cell, out, grad), want_both, strict=True):
        np.testing.assert_array_equal(got, want)


def test_shapes_are_checked(B: NdArray) -> None:
    with pytest.raises(ShapeError, match=r"lstm_cell: gates must be \[B, 4H\] and the cell \[B, H\], got"):
        B.lstm_cell(np.zeros((2, 6), np.float32), np.zeros((2, 1), np.float32))
    with pytest.raises(ShapeError, match=r"lstm_cell_backward: .* got \(2, 8\) and \(3, 2\)"):
        B.lstm_cell_backward(
            np.zeros((2, 8), np.float32), np.zeros((3, 2), np.float32),
            np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float32),
        )  # fmt: skip


def test_small_cells_take_the_composition(B: NdArray, rng: Any) -> None:
    """Below 512 gate values the composition runs (small models never load numba): its bits."""
    gates, cell, grad = _data(rng, 3, 42)  # 504 gate values
    np.testing.assert_array_equal(B.lstm_cell(gates, cell), Default.lstm_cell(B, gates, cell))
    gates, cell, grad = _data(rng, 2, 64)  # 512: compiled, its own rounding
    assert not np.array_equal(B.lstm_cell(gates, cell), Default.lstm_cell(B, gates, cell))


# -- GRU ------------------------------------------------------------------------------------------
def _gru_data(rng: np.random.Generator, rows: int, hidden: int, dtype: Any = np.float32) -> tuple[Any, ...]:
    gx = rng.uniform(-6, 6, (rows, 3 * hidden)).astype(dtype)
    gh = rng.uniform(-6, 6, (rows, 3 * hidden)).astype(dtype)
    h = rng.uniform(-2, 2, (rows, hidden)).astype(dtype)
    grad = rng.standard_normal((rows, hidden)).astype(dtype)
    return gx, gh, h, grad


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (4, 48), (32, 256), (96, 700)], ids=str)
def test_gru_kernels_match_the_composition(B: NdArray, shape: Any, rng: Any) -> None:
    gx, gh, h, grad = _gru_data(rng, *shape)
    out = B.gru_cell(gx, gh, h)
    wide = [a.astype(np.float64) for a in (gx, gh, h, grad)]
    assert out.dtype == np.float32 and out.shape == h.shape
    # n + z (h - n) cancels where n is near h: a few float32 ulps of the operands' scale (|h| <= 2).
    np.testing.assert_allclose(out, Default.gru_cell(B, *wide[:3]), rtol=2e-6, atol=1e-6)
    got = B.gru_cell_backward(gx, gh, h, grad)
    for g, want in zip(got, Default.gru_cell_backward(B, *wide), strict=True):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_gru_the_same_bits_at_every_thread_count(B: NdArray, threads: Any, rng: Any) -> None:
    gx, gh, h, grad = _gru_data(rng, 96, 700)  # 201,600 values per projection
    runs = []
    for count in (1, 2, 3):
        threads(count)
        runs.append((B.gru_cell(gx, gh, h), *B.gru_cell_backward(gx, gh, h, grad)))
    for run in runs[1:]:
        for got, first in zip(run, runs[0], strict=True):
            np.testing.assert_array_equal(got, first)


def test_gru_views_small_cells_and_other_dtypes(B: NdArray, rng: Any) -> None:
    gx, gh, h, grad = _gru_data(rng, 6, 32)
    proj = np.concatenate([gx, gx], axis=0)[:6]  # a view of rows, as a sequence's step slice is
    np.testing.assert_array_equal(B.gru_cell(proj, np.asfortranarray(gh), h), B.gru_cell(gx, gh, h))
    small = _gru_data(rng, 3, 56)  # 504 values: the composition, its bits
    np.testing.assert_array_equal(B.gru_cell(*small[:3]), Default.gru_cell(B, *small[:3]))
    wide = _gru_data(rng, 3, 2, np.float64)
    np.testing.assert_array_equal(B.gru_cell(*wide[:3]), Default.gru_cell(B, *wide[:3]))
    with pytest.raises(ShapeError, match=r"gru_cell: gates_x and gates_h must be \[B, 3H\]"):
        B.gru_cell(gx, gh[:, :-3], h)
