"""The compiled max pooling (`kernels.pool`) against the NumPy paths of `ops.pool`: the same values
and indices (first maximum in kernel order, NaN, ties, windows in the padding) and the same
gradients, on channels-last inputs; other layouts keep the NumPy path."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest
from conftest import without_compiled

import burn_ndarray
from burn_ndarray.kernels import pool as pool_kernels
from burn_ndarray.ops import pool
from burn_ndarray.runtime import split

Hyper = tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]
CASES: list[tuple[tuple[int, int, int, int], Hyper]] = [
    ((4, 26, 26, 32), ((2, 2), (2, 2), (0, 0), (1, 1))),  # the CNN's pooling
    ((3, 15, 17, 16), ((3, 3), (3, 3), (1, 1), (1, 1))),  # padding, uneven edges
    ((2, 21, 19, 8), ((2, 2), (3, 3), (1, 1), (2, 2))),  # dilation, gaps between windows
    ((2, 20, 20, 8), ((3, 2), (2, 2), (1, 0), (1, 1))),  # overlapping rows: NumPy's scatter backward
]


_numpy = partial(without_compiled, pool, "COMPILED_MIN_SIZE")


@pytest.fixture(autouse=True, params=[1, 2], ids=["1-thread", "2-threads"])
def compiled_from_small_sizes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The compiled kernels from 256 elements, split from 256 elements per thread, at 1 and 2
    threads (the split runs on the TBB pool, or the Python pool without it)."""
    monkeypatch.setattr(pool, "COMPILED_MIN_SIZE", 1 << 8)
    for name in ("UFUNC_PER_THREAD", "NATIVE_UFUNC_PER_THREAD"):
        monkeypatch.setattr(split, name, 1 << 8)
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(request.param)
    yield
    burn_ndarray.set_num_threads(before)


def _channels_last(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype).transpose(0, 3, 1, 2)


@pytest.mark.parametrize(("shape", "hyper"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_same_values_indices_and_gradient_as_numpy(
    rng: Any, monkeypatch: pytest.MonkeyPatch, shape: Any, hyper: Hyper, dtype: Any, index_dtype: Any
) -> None:
    x = _channels_last(rng, shape, dtype)
    x[0, 0, 2:4, 2:4] = 1.5  # a tie inside windows
    x[1, 1, 4:6, 4:7] = -np.inf  # windows of -inf (the padding's taps come first)
    launched: list[str] = []
    kernel = pool_kernels.max_pool2d
    monkeypatch.setattr(pool_kernels, "max_pool2d", lambda *a: launched.append("fwd") or kernel(*a))
    values, indices = pool.max_pool2d_with_indices(x, *hyper, np.dtype(index_dtype))
    expected = _numpy(pool.max_pool2d_with_indices, x, *hyper, np.dtype(index_dtype))
    assert launched == ["fwd"]
    assert values.dtype == dtype and indices.dtype == index_dtype
    assert np.array_equal(values, expected[0]) and np.array_equal(indices, expected[1])
    grad = rng.standard_normal(values.shape).astype(dtype)
    expected_grad = _numpy(pool.max_pool2d_backward, x, grad, indices, *hyper)
    with monkeypatch.context() as patch:  # fresh buffers full of NaN: every element must be written
        empty = np.empty
        patch.setattr(np, "empty", lambda *a, **k: np.full_like(empty(*a, **k), np.nan))
        got = pool.max_pool2d_backward(x, grad, indices, *hyper)
    assert got.shape == x.shape and np.array_equal(got, expected_grad)


def test_nan_windows_report_their_first_nan(rng: Any) -> None:
    hyper: Hyper = ((2, 2), (2, 2), (0, 0), (1, 1))
    x = _channels_last(rng, (2, 8, 8, 4), np.float32)
    x[0, 1, 1, 0] = np.nan
    x[0, 1, 0, 1] = np.nan  # the first in kernel order of the window at (0, 0)
    values, indices = pool.max_pool2d_with_indices(x, *hyper, np.dtype(np.int64))
    expected = pool.max_pool2d_with_indices_argmax(x, *hyper, np.dtype(np.int64))
    assert np.isnan(values[0, 1, 0, 0]) and indices[0, 1, 0, 0] == 1
    assert np.array_equal(values, expected[0], equal_nan=True) and np.array_equal(indices, expected[1])


def test_other_layouts_keep_numpy(rng: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_kernels, "max_pool2d", None)  # would fail if called
    x = rng.standard_normal((2, 8, 12, 12)).astype(np.float32)  # NCHW, C-contiguous
    values, _ = pool.max_pool2d_with_indices(x, (2, 2), (2, 2), (0, 0), (1, 1), np.dtype(np.int64))
    assert np.array_equal(values, x.reshape(2, 8, 6, 2, 6, 2).max(axis=(3, 5)))
