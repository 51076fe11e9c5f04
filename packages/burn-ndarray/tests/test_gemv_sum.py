"""Small sums along the first or last dim as a GEMV with ones (burn_ndarray._gemv_sum)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import burn_ndarray
from burn_ndarray import NdArray, _gemv_sum
from burn_ndarray._gemv_sum import MAX_SIZE, gemv_sum

SHAPES = [(4, 4), (1, 7), (7, 1), (128, 63), (1000, 8), (5,), (3, 5, 7), (2, 3, 4, 5), (1, 8191)]


@pytest.fixture
def threads() -> Iterator[Any]:
    before = burn_ndarray.get_num_threads()
    yield burn_ndarray.set_num_threads
    burn_ndarray.set_num_threads(before)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_and_last_dim_sums_close_to_float64(
    B: NdArray, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any
) -> None:
    x = rng.standard_normal(shape).astype(dtype)
    rtol = 1e-6 if dtype is np.float32 else 1e-14
    for dim in {0, len(shape) - 1}:
        ref = x.astype(np.float64).sum(dim, keepdims=True)
        got = gemv_sum(x, dim, x.dtype)
        assert got is not None and got.dtype == dtype and got.shape == ref.shape, dim
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * np.sqrt(shape[dim]))
        assert np.array_equal(B.float_sum_dim(x, dim), got)  # the backend takes this path
        mean = B.float_mean_dim(x, dim)
        assert mean.dtype == dtype and np.array_equal(mean, got / shape[dim])


def test_layouts(B: NdArray, rng: np.random.Generator) -> None:
    base = rng.standard_normal((12, 10)).astype(np.float32)
    for x in (base.T, base[::2, ::-1], base[:, ::3].T):  # 2-D: any layout
        for dim in (0, 1):
            ref = x.astype(np.float64).sum(dim, keepdims=True)
            np.testing.assert_allclose(gemv_sum(x, dim, x.dtype), ref, rtol=1e-6)
    cube = rng.standard_normal((4, 5, 6)).astype(np.float32)
    assert gemv_sum(cube, 1, cube.dtype) is None  # a middle dim: the caller's reduce
    assert gemv_sum(cube.transpose(2, 1, 0), 0, cube.dtype) is None  # N-D, not C-contiguous
    for x, dim in ((cube, 1), (cube.transpose(2, 1, 0), 0), (cube.transpose(2, 1, 0), 2)):
        np.testing.assert_allclose(B.float_sum_dim(x, dim), x.sum(dim, keepdims=True), rtol=1e-6)


def test_empty_and_special_values(B: NdArray) -> None:
    for shape, dim in (((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((2, 0, 3), 0)):
        x = np.zeros(shape, np.float32)
        assert gemv_sum(x, dim, x.dtype) is None
        assert np.array_equal(B.float_sum_dim(x, dim), x.sum(dim, keepdims=True))
    x = np.array([[np.inf, 1.0], [np.nan, 1.0], [np.inf, -np.inf], [-0.0, -0.0]], np.float32)
    with np.errstate(invalid="ignore"):
        got = B.float_sum_dim(x, 1)
    assert got[0, 0] == np.inf and np.isnan(got[1, 0]) and np.isnan(got[2, 0]) and got[3, 0] == 0.0


@pytest.mark.parametrize("shape", [(90, 90), (8191, 1), (2, 4000)])
def test_same_bits_at_every_thread_count(
    rng: np.random.Generator, threads: Any, shape: tuple[int, int]
) -> None:
    """burn's count does not reach this path, and OpenBLAS keeps one thread below MAX_SIZE (its
    threaded GEMV splits the outputs anyway: the same bits at 1 and 2 BLAS threads measured up to
    [4096, 64]); varied through threadpoolctl where it is installed."""
    assert shape[0] * shape[1] < MAX_SIZE
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    x = rng.standard_normal(shape).astype(np.float32)
    results = []
    for count in (1, 2, 3, 1):
        threads(count)
        if threadpool_limits is None:
            results.append([gemv_sum(x, dim, x.dtype) for dim in (0, 1)])
            continue
        with threadpool_limits(count, user_api="blas"):
            results.append([gemv_sum(x, dim, x.dtype) for dim in (0, 1)])
    for later in results[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(results[0], later, strict=True))


def test_the_ones_cache_stays_small() -> None:
    x = np.ones((2, 3), np.float32)
    for length in range(1, 200):
        assert gemv_sum(np.ones((2, length), np.float32), 1, x.dtype).tolist() == [[length]] * 2
    assert 0 < len(_gemv_sum._ONES_F32) <= _gemv_sum._ONES_KEPT
    column, row = _gemv_sum._ones(5, x.dtype)
    assert not column.flags.writeable and column.shape == (5, 1) and row.shape == (1, 5)
