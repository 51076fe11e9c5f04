"""The compiled float32 activations (`burn_ndarray.ops.activation`,
`burn_ndarray.kernels.activation`) against float64 references and the NumPy paths: GELU within two
float32 ulps, and of the NumPy path (the same steps, multiply-adds fused); sigmoid within two ulps (subnormal
results included) and its gradient the NumPy path's bits; SiLU; hard swish the NumPy path's bits;
their NaN and infinity results, the same bits at any thread count, layouts kept, half floats
computed in float32."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from conftest import without_compiled

import burn_ndarray
from burn_ndarray import NdArray
from burn_ndarray.kernels import activation as activation_kernels
from burn_ndarray.ops import activation
from burn_ndarray.runtime import tbb

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-42, 3e38, -3e38, 2.0 * math.sqrt(2.0)]


def _gelu64(v: float) -> float:
    return v * (1.0 + math.erf(v / math.sqrt(2.0))) / 2.0


def _gelu_grad64(v: float) -> float:
    return (1.0 + math.erf(v / math.sqrt(2.0))) / 2.0 + v * math.exp(-v * v / 2.0) / math.sqrt(2.0 * math.pi)


def _numpy_path(fn: str, *args: Any) -> Any:
    threshold = "GELU_COMPILED_MIN_SIZE" if fn.startswith("gelu") else "SIGMOID_COMPILED_MIN_SIZE"
    with np.errstate(invalid="ignore", over="ignore"):
        return without_compiled(activation, threshold, getattr(NdArray(), fn), *args)


@pytest.fixture(params=[1, 2, 3], ids=["1-thread", "2-threads", "3-threads"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Split from 1024 elements per thread, at 1, 2 and 3 threads."""
    for name in ("PER_THREAD", "NATIVE_PER_THREAD", "SIGMOID_NATIVE_PER_THREAD"):
        monkeypatch.setattr(activation, name, 1 << 10)
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


def test_forward_within_two_ulps_of_the_numpy_path(grid: np.ndarray, threads: int) -> None:
    """The NumPy path's float32 steps with the multiply-adds fused: an ulp or two of x apart (not
    the bits: one rounding instead of two), NaN where it is NaN."""
    got, numpy = NdArray().gelu(grid), _numpy_path("gelu", grid)
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


def _gelu_tanh64(v: np.ndarray) -> np.ndarray:
    return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3)))


def test_tanh_gelu_within_two_ulps_and_nan_where_the_numpy_path(grid: np.ndarray, threads: int) -> None:
    B = NdArray()
    with np.errstate(invalid="ignore", over="ignore"):
        got, numpy = B.gelu_approximate(grid), activation.ActivationOps.gelu_approximate(B, grid)
        ref = _gelu_tanh64(grid.astype(np.float64))
    assert got.dtype == np.float32 and np.array_equal(np.isnan(got), np.isnan(numpy))
    finite = np.isfinite(ref) & np.isfinite(grid)
    ulp = np.spacing(np.maximum(np.abs(grid[finite]), np.float32(1e-30))).astype(np.float64)
    assert np.max(np.abs(got[finite] - ref[finite]) / ulp) <= 2.0  # the tails: sigmoid's precision
    assert got[grid == np.inf][0] == np.inf and got[grid == 3e38][0] == np.float32(3e38)


def test_tanh_gelu_backward_is_the_contract_default_within_rounding(grid: np.ndarray, threads: int) -> None:
    from burn.backend.ops.activation import ActivationOps as Default

    B = NdArray()
    g = np.random.default_rng(0).standard_normal(grid.size).astype(np.float32)
    small = np.abs(grid) < 50  # where x^3 stays finite in float32 (beyond: 0 * inf, NaN in both)
    x, g = grid[small], g[small]
    got = B.gelu_approximate_backward(x, g)
    wide = Default.gelu_approximate_backward(B, x.astype(np.float64), g.astype(np.float64))
    narrow = Default.gelu_approximate_backward(B, x, g)  # the composition in float32
    assert got.dtype == np.float32 and np.array_equal(np.isnan(got), np.isnan(narrow))
    finite = np.isfinite(wide)
    err, err32 = np.abs(got - wide)[finite], np.abs(narrow - wide)[finite]
    bound = np.abs(g[finite]) * 4 * np.float32(2.0**-23) * np.maximum(1.0, np.abs(x[finite]) ** 2)
    assert np.all(err <= np.maximum(bound, 2 * err32))  # no worse than the float32 composition


def test_same_bits_at_every_thread_count_and_pool(grid: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PER_THREAD", "NATIVE_PER_THREAD", "SIGMOID_NATIVE_PER_THREAD"):
        monkeypatch.setattr(activation, name, 1 << 10)
    B, g = NdArray(), grid[::-1].copy()
    before = burn_ndarray.get_num_threads()
    try:
        burn_ndarray.set_num_threads(1)
        ops = (B.gelu, lambda x: B.gelu_backward(x, g), B.sigmoid, B.silu, lambda x: B.sigmoid_backward(x, g),
               B.gelu_approximate, lambda x: B.gelu_approximate_backward(x, g))
        expected = [op(grid) for op in ops]
        for count, native in ((2, True), (3, True), (2, False)):  # False: the Python pool
            burn_ndarray.set_num_threads(count)
            monkeypatch.setattr(tbb, "ready", lambda native=native: native)
            got = [op(grid) for op in ops]
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
    strided = channels_last[:, ::2]  # gaps between elements: compiled on a C-ordered copy
    got = B.gelu(strided)
    assert got.flags.c_contiguous and np.array_equal(got, B.gelu(np.ascontiguousarray(strided)))
    assert np.all(np.abs(got - _numpy_path("gelu", strided)) <= 2 * np.spacing(np.abs(strided)))
    mixed = B.gelu_backward(channels_last, np.ascontiguousarray(g))  # layouts differ: copies too
    assert np.array_equal(mixed, B.gelu_backward(*dense))


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
    assert activation.compiled_gelu(x) is None
    assert activation.compiled_gelu(x.astype(np.float32), x) is None
    got = NdArray().gelu(x)
    assert got.dtype == np.float64
    assert np.max(np.abs(got - [_gelu64(v) for v in x]) / np.abs(x)) < 2e-15  # float64's ulps of x


def test_exp_neg_over_its_range() -> None:
    """The in-kernel ``exp(-a)`` on [0, 87] within an ulp or so of float64's (through the density
    of the backward pass at ``grad = 1``: ``gelu'(x) - cdf(x) = x exp(-x**2/2) / sqrt(2 pi)``)."""
    x = np.sqrt(2.0 * np.linspace(0.0, 86.9, 100_001)).astype(np.float32)
    out = np.empty_like(x)
    activation_kernels.gelu_backward_range(0, x.size, x, np.ones_like(x), out)
    density = np.exp(-(x.astype(np.float64) ** 2) / 2.0) * x / math.sqrt(2.0 * math.pi)
    cdf = np.array([(1.0 + math.erf(v / math.sqrt(2.0))) / 2.0 for v in x.astype(np.float64)])
    np.testing.assert_allclose(out, density + cdf, rtol=4e-7, atol=0)


# -- sigmoid, its gradient, SiLU ---------------------------------------------------------------
@pytest.fixture
def wide_grid() -> np.ndarray:
    """Both tails down to where float32's exp underflows (subnormal sigmoids from -87 to -103.9)."""
    return np.concatenate([np.linspace(-110, 110, 80_001), SPECIALS, [-87.5, -95.0, -103.9, -104.5]]).astype(
        np.float32
    )


def _sigmoid64(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v)) if v >= 0 else math.exp(v) / (1.0 + math.exp(v))


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in float32 ulps of ref, the subnormal spacing below the normal range."""
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / ulp


def test_sigmoid_within_two_ulps_of_float64(wide_grid: np.ndarray, threads: int) -> None:
    got = NdArray().sigmoid(wide_grid)
    assert got.dtype == np.float32 and got.shape == wide_grid.shape
    finite = np.isfinite(wide_grid)
    ref = np.array([_sigmoid64(float(v)) for v in wide_grid[finite]])
    assert np.max(_ulps(got[finite], ref)) <= 2.0
    assert got[wide_grid == -95.0][0] > 0  # a subnormal, as NumPy's exp gives, not flushed to 0
    numpy = _numpy_path("sigmoid", wide_grid)
    assert np.array_equal(np.isnan(got), np.isnan(numpy))
    special = ~finite
    assert np.array_equal(got[special], numpy[special], equal_nan=True)  # NaN, 1 at inf, 0 at -inf


def test_sigmoid_backward_is_the_numpy_paths_bits(wide_grid: np.ndarray, threads: int) -> None:
    s = _numpy_path("sigmoid", wide_grid)
    g = np.random.default_rng(3).standard_normal(s.size).astype(np.float32)
    g[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    got = NdArray().sigmoid_backward(s, g)
    assert got.dtype == np.float32
    assert np.array_equal(got, _numpy_path("sigmoid_backward", s, g), equal_nan=True)


def test_silu_close_to_float64(wide_grid: np.ndarray, threads: int) -> None:
    got = NdArray().silu(wide_grid)
    finite = np.isfinite(wide_grid)
    x = wide_grid[finite].astype(np.float64)
    s = np.array([_sigmoid64(v) for v in x])
    ref = x * s
    normal = s >= np.finfo(np.float32).tiny
    assert np.max(_ulps(got[finite][normal], ref[normal])) <= 3.0  # the sigmoid's two ulps, one rounding
    # below, x times a subnormal sigmoid: its absolute error (two subnormal steps) times |x|
    tail = np.abs(got[finite][~normal] - ref[~normal]) / np.abs(wide_grid[finite][~normal])
    assert np.max(tail) <= 3 * float(np.finfo(np.float32).smallest_subnormal)
    numpy = _numpy_path("silu", wide_grid)
    assert np.array_equal(got[~finite], numpy[~finite], equal_nan=True)  # NaN, inf, -inf * 0 = NaN


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_sigmoid_half_floats_in_float32(dtype: Any) -> None:
    x = np.random.default_rng(4).standard_normal((64, 129)).astype(dtype) * 6
    B = NdArray()
    for op in (B.sigmoid, B.silu):
        got = op(x)
        assert got.dtype == dtype and np.array_equal(got, op(x.astype(np.float32)).astype(dtype))
    s, g = B.sigmoid(x), x[::-1].copy()  # the gradient stays the NumPy path's, in the half float
    assert activation.compiled_sigmoid_backward(s, g) is None
    assert np.array_equal(B.sigmoid_backward(s, g), g * (s * (1 - s)))


def test_sigmoid_layouts(threads: int) -> None:
    rng = np.random.default_rng(5)
    channels_last = rng.standard_normal((4, 9, 11, 16)).astype(np.float32).transpose(0, 3, 1, 2)
    B = NdArray()
    for op in (B.sigmoid, B.silu):
        out = op(channels_last)
        assert out.strides == channels_last.strides
        assert np.array_equal(out, op(np.ascontiguousarray(channels_last)))
    gates = rng.standard_normal((32, 1024)).astype(np.float32)[:, :768]  # rows with gaps
    got = B.sigmoid(gates)
    assert got.flags.c_contiguous and np.array_equal(got, B.sigmoid(np.ascontiguousarray(gates)))
    np.testing.assert_allclose(got, _numpy_path("sigmoid", gates), rtol=3e-7)
    s = B.sigmoid(channels_last)
    g = np.ascontiguousarray(s)[::-1]  # another layout: both copied, the NumPy path's bits
    assert np.array_equal(B.sigmoid_backward(s, g), g * (s * (1 - s)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_hard_swish_is_the_numpy_paths_bits(wide_grid: np.ndarray, threads: int, dtype: Any) -> None:
    """One compiled pass, NumPy's four passes' bits: at the kinks (-3, 3), NaN, the infinities,
    in a channels-last layout (kept) and in the half floats (computed in float32)."""
    x = np.concatenate([wide_grid, [-3.0, 3.0, -2.9999998, 2.9999998]]).astype(dtype)
    B = NdArray()
    with np.errstate(invalid="ignore"):
        numpy = without_compiled(activation, "HARD_SWISH_COMPILED_MIN_SIZE", B.hard_swish, x)
        got = B.hard_swish(x)
    assert got.dtype == x.dtype and np.array_equal(got, numpy, equal_nan=True)
    channels_last = (
        np.random.default_rng(6).standard_normal((2, 7, 9, 16)).astype(np.float32).transpose(0, 3, 1, 2)
    )
    out = B.hard_swish(channels_last)
    assert out.strides == channels_last.strides
    assert np.array_equal(
        out, without_compiled(activation, "HARD_SWISH_COMPILED_MIN_SIZE", B.hard_swish, channels_last)
    )
