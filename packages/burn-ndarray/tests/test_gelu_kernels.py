"""The compiled float32 GELU (`_gelu`, `_gelu_kernels`) against float64 references and the NumPy
path: within two float32 ulps, the NumPy path's bits below erf's tail piece, its NaN and infinity
results, the same bits at any thread count, layouts kept, half floats computed in float32."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from conftest import without_compiled

import burn_ndarray
from burn_ndarray import NdArray, _gelu, _gelu_kernels, _parallel, _tbb

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-42, 3e38, -3e38, 2.0 * math.sqrt(2.0)]


def _gelu64(v: float) -> float:
    return v * (1.0 + math.erf(v / math.sqrt(2.0))) / 2.0


def _gelu_grad64(v: float) -> float:
    return (1.0 + math.erf(v / math.sqrt(2.0))) / 2.0 + v * math.exp(-v * v / 2.0) / math.sqrt(2.0 * math.pi)


def _numpy_path(fn: str, *args: Any) -> Any:
    with np.errstate(invalid="ignore", over="ignore"):
        return without_compiled(_parallel, "GELU_COMPILED_MIN_SIZE", getattr(NdArray(), fn), *args)


@pytest.fixture(params=[1, 2, 3], ids=["1-thread", "2-threads", "3-threads"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Split from 1024 elements per thread, at 1, 2 and 3 threads."""
    monkeypatch.setattr(_gelu, "PER_THREAD", 1 << 10)
    monkeypatch.setattr(_gelu, "NATIVE_PER_THREAD", 1 << 10)
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(request.param)
    yield request.param
    burn_ndarray.set_num_threads(before)


@pytest.fixture
def grid() -> np.ndarray:
    """Every region of both erf pieces and the float32 limits, an odd length."""
    return np.concatenate([np.linspace(-14, 14, 60_001), SPECIALS]).astype(np.float32)


def test_forward_within_two_ulps_of_float64(grid: np.ndarray, threads: int) -> None:
    got = NdArray().gelu(grid)
    assert got.dtype == np.float32 and got.shape == grid.shape
    finite = np.isfinite(grid)
    ref = np.array([_gelu64(float(v)) for v in grid[finite]])
    ulp = np.spacing(np.maximum(np.abs(grid[finite]), np.float32(1e-30))).astype(np.float64)
    assert np.max(np.abs(got[finite] - ref) / ulp) <= 2.0


def test_forward_bits_of_the_numpy_path_below_the_tail(grid: np.ndarray, threads: int) -> None:
    """The small erf piece is the NumPy path's float32 steps; past it only exp differs."""
    got, numpy = NdArray().gelu(grid), _numpy_path("gelu", grid)
    below_tail = ~(np.abs(grid) / np.float32(math.sqrt(2.0)) >= 2.0)  # NaN included
    assert np.array_equal(got[below_tail], numpy[below_tail], equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(numpy))  # -inf: -inf * 0 as in the NumPy path
    finite = np.isfinite(grid)
    ulp = np.spacing(np.abs(grid[finite]))
    assert np.all(np.abs(got[finite] - numpy[finite]) <= 2 * ulp)  # an ulp of x: 1 + erf cancels


def test_backward_close_to_float64_and_the_numpy_path(grid: np.ndarray, threads: int) -> None:
    g = np.random.default_rng(0).standard_normal(grid.size).astype(np.float32)
    got, numpy = NdArray().gelu_backward(grid, g), _numpy_path("gelu_backward", grid, g)
    assert got.dtype == np.float32
    assert np.array_equal(np.isnan(got), np.isnan(numpy))  # +-inf: inf * 0 density, NaN
    finite = np.isfinite(grid)
    ref = np.array([_gelu_grad64(float(v)) for v in grid[finite].astype(np.float64)]) * g[finite]
    scale = np.abs(g[finite]) * np.maximum(1.0, np.abs(ref / g[finite]))  # |grad * gelu'| or |grad|
    assert np.max(np.abs(got[finite] - ref) / scale) < 3e-7
    assert np.max(np.abs(got[finite] - numpy[finite]) / scale) < 3e-7


def test_same_bits_at_every_thread_count_and_pool(grid: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_gelu, "PER_THREAD", 1 << 10)
    monkeypatch.setattr(_gelu, "NATIVE_PER_THREAD", 1 << 10)
    B, g = NdArray(), grid[::-1].copy()
    before = burn_ndarray.get_num_threads()
    try:
        burn_ndarray.set_num_threads(1)
        expected = (B.gelu(grid), B.gelu_backward(grid, g))
        for count, native in ((2, True), (3, True), (2, False)):  # False: the Python pool
            burn_ndarray.set_num_threads(count)
            monkeypatch.setattr(_tbb, "ready", lambda native=native: native)
            got = (B.gelu(grid), B.gelu_backward(grid, g))
            for e, o in zip(expected, got, strict=True):
                assert np.array_equal(e, o, equal_nan=True), (count, native)
    finally:
        burn_ndarray.set_num_threads(before)


def test_dense_permuted_layout_kept_views_copied(threads: int) -> None:
    rng = np.random.default_rng(1)
    channels_last = rng.standard_normal((4, 9, 11, 16)).astype(np.float32).transpose(0, 3, 1, 2)
    g = np.ascontiguousarray(channels_last.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2) * 2
    B = NdArray()
    out = B.gelu(channels_last)
    assert out.strides == channels_last.strides
    assert np.array_equal(out, B.gelu(np.ascontiguousarray(channels_last)))
    dense = [np.ascontiguousarray(a) for a in (channels_last, g)]
    assert np.array_equal(B.gelu_backward(channels_last, g), B.gelu_backward(*dense))
    strided = channels_last[:, ::2]  # gaps between elements: the NumPy path
    assert np.all(np.abs(B.gelu(strided) - _numpy_path("gelu", strided)) <= 2 * np.spacing(np.abs(strided)))
    assert _gelu.compiled_gelu(strided) is None


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_floats_in_float32(dtype: Any) -> None:
    """float16/bfloat16: the float32 kernel's results rounded once, like the NumPy path."""
    x = np.random.default_rng(2).standard_normal((64, 129)).astype(dtype) * 4
    g = x[::-1].copy()
    x32, g32 = x.astype(np.float32), g.astype(np.float32)
    B = NdArray()
    for got, wide in ((B.gelu(x), B.gelu(x32)), (B.gelu_backward(x, g), B.gelu_backward(x32, g32))):
        assert got.dtype == dtype and got.shape == x.shape
        assert np.array_equal(got, wide.astype(dtype), equal_nan=True)


def test_float64_and_mixed_dtypes_keep_the_numpy_path() -> None:
    x = np.linspace(-5, 5, 5000)
    assert _gelu.compiled_gelu(x) is None
    assert _gelu.compiled_gelu(x.astype(np.float32), x) is None
    got = NdArray().gelu(x)
    assert got.dtype == np.float64
    assert np.max(np.abs(got - [_gelu64(v) for v in x]) / np.abs(x)) < 2e-15  # float64's ulps of x


def test_exp_neg_over_its_range() -> None:
    """The in-kernel ``exp(-a)`` on [0, 87] within an ulp or so of float64's (through the density
    of the backward pass at ``grad = 1``: ``gelu'(x) - cdf(x) = x exp(-x**2/2) / sqrt(2 pi)``)."""
    x = np.sqrt(2.0 * np.linspace(0.0, 86.9, 100_001)).astype(np.float32)
    out = np.empty_like(x)
    _gelu_kernels.gelu_backward_range(0, x.size, x, np.ones_like(x), out)
    density = np.exp(-(x.astype(np.float64) ** 2) / 2.0) * x / math.sqrt(2.0 * math.pi)
    cdf = np.array([(1.0 + math.erf(v / math.sqrt(2.0))) / 2.0 for v in x.astype(np.float64)])
    np.testing.assert_allclose(out, density + cdf, rtol=4e-7, atol=0)
