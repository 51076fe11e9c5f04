"""Float ops at the primitive level, against plain NumPy in float64."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.distribution import Bernoulli, Normal, Uniform
from burn.foundations.dtype import DType
from burn_ndarray import NdArray
from burn_ndarray.ops import float as float_ops

FLOATS = [DType.F64, DType.F32, DType.F16, DType.BF16]
TOL = {DType.F64: 1e-12, DType.F32: 1e-5, DType.F16: 2e-3, DType.BF16: 2e-2}


def arr(values: object, dtype: DType = DType.F32) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).astype(dtype.numpy)


def test_from_and_into_data_round_trip(B: NdArray) -> None:
    data = TensorData([[1.0, 2.0], [3.0, 4.0]], dtype="float32")
    p = B.float_from_data(data, B.default_device())
    out = B.float_into_data(p)
    assert out == data
    with pytest.raises(ValueError, match="read-only"):
        out.array[0, 0] = 9.0  # handed out read-only: the tensor cannot change under its owner
    with pytest.raises(TypeError, match="float_from_data"):
        B.float_from_data(TensorData([1, 2]), B.default_device())


def test_into_data_of_non_contiguous_views(B: NdArray) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for view in (a.T, a[:, ::2], a[::-1], np.broadcast_to(a[:1], (3, 4))):
        data = B.float_into_data(view)
        assert data.array.flags.c_contiguous and np.array_equal(data.array, view)


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_and_scalar_ops_keep_dtype(B: NdArray, dtype: DType) -> None:
    a, b = arr([[1.5, -2.0, 3.25]], dtype), arr([[0.5], [2.0]], dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cases = [
        (B.float_add(a, b), a64 + b64),
        (B.float_sub(a, b), a64 - b64),
        (B.float_mul(a, b), a64 * b64),
        (B.float_div(a, b), a64 / b64),
        (B.float_remainder(a, b), np.remainder(a64, b64)),
        (B.float_powf(np.abs(a), b), np.abs(a64) ** b64),
        (B.float_add_scalar(a, 2.5), a64 + 2.5),
        (B.float_sub_scalar(a, 2.5), a64 - 2.5),
        (B.float_mul_scalar(a, -3.0), a64 * -3.0),
        (B.float_div_scalar(a, 4.0), a64 / 4.0),
        (B.float_remainder_scalar(a, 1.5), np.remainder(a64, 1.5)),
        (B.float_powf_scalar(a, 2.0), a64**2),
        (B.float_clamp(a, -1.0, 2.0), np.clip(a64, -1, 2)),
        (B.float_clamp_min(a, 0.0), np.maximum(a64, 0)),
        (B.float_clamp_max(a, 0.0), np.minimum(a64, 0)),
        (B.float_mask_fill(a, a > 0, 7.0), np.where(a64 > 0, 7.0, a64)),
    ]
    for got, want in cases:
        assert got.dtype == dtype.numpy
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_mixed_dtypes_promote_to_the_wider(B: NdArray) -> None:
    assert B.float_add(arr([1.0]), arr([1.0], DType.F64)).dtype == np.float64
    assert B.float_mul(arr([1.0], DType.F16), arr([1.0])).dtype == np.float32


def test_remainder_takes_the_sign_of_the_divisor(B: NdArray) -> None:
    got = B.float_remainder(arr([-7.0, 7.0, -7.0]), arr([3.0, -3.0, -3.0]))
    assert got.tolist() == [2.0, -2.0, -1.0]


@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_math(B: NdArray, dtype: DType) -> None:
    x = arr(np.linspace(0.1, 3.0, 7), dtype)
    x64 = x.astype(np.float64)
    ops: list[tuple[Any, Any]] = [
        (B.float_exp, np.exp),
        (B.float_log, np.log),
        (B.float_log1p, np.log1p),
        (B.float_sqrt, np.sqrt),
        (B.float_sin, np.sin),
        (B.float_cos, np.cos),
        (B.float_tanh, np.tanh),
        (B.float_recip, np.reciprocal),
        (B.float_erf, np.vectorize(math.erf)),
    ]
    for op, ref in ops:
        got = op(x)
        assert got.dtype == dtype.numpy, op
        np.testing.assert_allclose(got.astype(np.float64), ref(x64), rtol=TOL[dtype], atol=TOL[dtype])


def test_rounding_sign_abs_neg(B: NdArray) -> None:
    x = arr([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, 3.7])
    assert B.float_round(x).tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, -0.0, 4.0]  # half to even
    assert B.float_floor(x).tolist() == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, -0.0, 3.0]
    assert B.float_ceil(x).tolist() == [-2.0, -1.0, -0.0, 1.0, 2.0, 3.0, -0.0, 4.0]
    assert B.float_sign(arr([-3.0, 0.0, 2.0])).tolist() == [-1.0, 0.0, 1.0]
    assert B.float_abs(arr([-3.0, 2.0])).tolist() == [3.0, 2.0]
    assert B.float_neg(arr([-3.0, 2.0])).tolist() == [3.0, -2.0]


def test_comparisons_and_special_values(B: NdArray) -> None:
    a, b = arr([1.0, 2.0, np.nan]), arr([2.0, 2.0, 1.0])
    assert B.float_equal(a, b).tolist() == [False, True, False]
    assert B.float_not_equal(a, b).tolist() == [True, False, True]
    assert B.float_greater(a, b).tolist() == [False, False, False]
    assert B.float_greater_equal(a, b).tolist() == [False, True, False]
    assert B.float_lower(a, b).tolist() == [True, False, False]
    assert B.float_lower_equal(a, b).tolist() == [True, True, False]
    assert B.float_greater_elem(a, 1.5).tolist() == [False, True, False]
    assert B.float_lower_equal_elem(a, 1.0).tolist() == [True, False, False]
    assert B.float_equal_elem(a, 2.0).tolist() == [False, True, False]
    assert B.float_not_equal_elem(a, 2.0).tolist() == [True, False, True]
    assert B.float_greater_equal_elem(a, 2.0).tolist() == [False, True, False]
    assert B.float_lower_elem(a, 2.0).tolist() == [True, False, False]
    assert B.float_is_nan(a).tolist() == [False, False, True]
    assert B.float_is_inf(arr([np.inf, -np.inf, 1.0])).tolist() == [True, True, False]
    # bfloat16 compared with a Python float: exact, through float32
    assert B.float_greater_elem(arr([1.0, 2.0], DType.BF16), 1.5).tolist() == [False, True]


def test_matmul_batches_and_broadcasts(B: NdArray, rng: np.random.Generator) -> None:
    a = rng.standard_normal((2, 1, 3, 4))
    b = rng.standard_normal((5, 4, 2))
    for dtype in FLOATS:
        got = B.float_matmul(a.astype(dtype.numpy), b.astype(dtype.numpy))
        assert got.dtype == dtype.numpy and got.shape == (2, 5, 3, 2)
        np.testing.assert_allclose(got.astype(np.float64), a @ b, rtol=5 * TOL[dtype], atol=5 * TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_reductions(B: NdArray, rng: np.random.Generator, dtype: DType) -> None:
    x = rng.uniform(0.5, 1.5, (3, 4, 5)).astype(dtype.numpy)
    x64 = x.astype(np.float64)
    tol = TOL[dtype] * 5
    for dim in range(3):
        for got, want in [
            (B.float_sum_dim(x, dim), x64.sum(dim, keepdims=True)),
            (B.float_mean_dim(x, dim), x64.mean(dim, keepdims=True)),
            (B.float_prod_dim(x, dim), x64.prod(dim, keepdims=True)),
            (B.float_max_dim(x, dim), x64.max(dim, keepdims=True)),
            (B.float_min_dim(x, dim), x64.min(dim, keepdims=True)),
            (B.float_cumsum(x, dim), np.cumsum(x64, dim)),
        ]:
            assert got.dtype == dtype.numpy and got.shape == want.shape
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)
        assert B.float_argmax(x, dim).tolist() == x64.argmax(dim, keepdims=True).tolist()
        assert B.float_argmin(x, dim).tolist() == x64.argmin(dim, keepdims=True).tolist()
        values, indices = B.float_max_dim_with_indices(x, dim)
        assert indices.dtype == np.int64 and np.array_equal(np.take_along_axis(x, indices, dim), values)
        values, indices = B.float_min_dim_with_indices(x, dim)
        assert np.array_equal(values.astype(np.float64), x64.min(dim, keepdims=True))
    for got, want in [
        (B.float_sum(x), x64.sum()),
        (B.float_mean(x), x64.mean()),
        (B.float_prod(x), x64.prod()),
        (B.float_max(x), x64.max()),
        (B.float_min(x), x64.min()),
    ]:
        assert got.shape == (1,) and got.dtype == dtype.numpy
        np.testing.assert_allclose(got.astype(np.float64), [want], rtol=tol * 10)


def test_low_precision_sums_accumulate_in_float32(B: NdArray) -> None:
    x = np.full(4096, 0.1, dtype=np.float16)
    assert abs(float(B.float_sum(x)[0]) - 409.6) < 0.5  # float16 accumulation would stall at 256
    y = np.full(4096, 0.1, dtype=ml_dtypes.bfloat16)
    assert abs(float(B.float_sum(y)[0]) - 409.6) < 2.0


def test_argmax_first_occurrence_and_backend_int_dtype(B64: NdArray) -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    got = B64.float_argmax(x, 1)
    assert got.tolist() == [[1], [0]] and got.dtype == np.int32
    assert B64.float_argmin(x, 1).tolist() == [[0], [2]]


def test_shape_ops(B: NdArray) -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert B.float_reshape(x, (4, -1)).shape == (4, 6)
    assert np.array_equal(B.float_permute(x, (2, 0, 1)), x.transpose(2, 0, 1))
    assert np.array_equal(B.float_flip(x, (0, 2)), x[::-1, :, ::-1])
    assert np.array_equal(B.float_flip(x, ()), x)
    assert np.array_equal(B.float_expand(x[:, :1], (5, 2, 3, 4)), np.broadcast_to(x[:, :1], (5, 2, 3, 4)))
    assert np.array_equal(B.float_slice(x, (slice(0, 1), slice(1, 3), slice(0, 4, 2))), x[0:1, 1:3, 0:4:2])
    assert np.array_equal(B.float_swap_dims(x, 0, 2), x.swapaxes(0, 2))
    assert np.array_equal(B.float_cat([x, x[:1]], 0), np.concatenate([x, x[:1]]))
    for dim in range(3):
        for times in (0, 1, 3):
            assert np.array_equal(
                B.float_repeat_dim(x, dim, times),
                np.concatenate([x] * times, dim)
                if times
                else np.zeros(x.shape[:dim] + (0,) + x.shape[dim + 1 :]),
            )


def test_slice_assign_leaves_the_input_alone(B: NdArray) -> None:
    x = np.zeros((3, 4), np.float32)
    x.flags.writeable = False  # would raise if the backend wrote into its input
    got = B.float_slice_assign(x, (slice(1, 3), slice(0, 4, 2)), np.ones((2, 2), np.float32))
    assert got.tolist() == [[0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0]]
    assert not x.any()


def test_gather_scatter_select(B: NdArray, rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4)).astype(np.float32)
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    assert np.array_equal(B.float_gather(1, x, idx), np.take_along_axis(x, idx, 1))
    # PyTorch-style gather with an index smaller than the tensor in the other dims
    small = np.array([[2, 0, 1, 1]])
    assert np.array_equal(B.float_gather(0, x, small), np.take_along_axis(x[:, :4], small, 0))
    values = np.ones((3, 2), np.float32)
    want = x.astype(np.float64).copy()
    for i in range(3):
        for j in range(2):
            want[i, idx[i, j]] += 1.0
    np.testing.assert_allclose(B.float_scatter_add(1, x, idx, values), want, rtol=1e-6)
    sel = np.array([2, 0, 2])
    assert np.array_equal(B.float_select(x, 0, sel), x[sel])
    added = B.float_select_add(x, 0, sel, np.ones((3, 4), np.float32))
    np.testing.assert_allclose(added, x + np.array([[1.0], [0.0], [2.0]]), rtol=1e-6)
    with pytest.raises(IndexError, match="scatter_add"):
        B.float_scatter_add(1, x, idx + 2, values)
    with pytest.raises(IndexError, match="select_add"):
        B.float_select_add(x, 0, np.array([3]), np.ones((1, 4), np.float32))


def test_scatter_add_in_every_dim_against_a_loop(B: NdArray, rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4, 5))
    for dim in range(3):
        idx = rng.integers(0, x.shape[dim], (2, 3, 4))
        idx_shape = list(idx.shape)
        vals = rng.standard_normal(idx_shape)
        want = x.copy()
        for pos in np.ndindex(*idx_shape):
            target = list(pos)
            target[dim] = idx[pos]
            want[tuple(target)] += vals[pos]
        np.testing.assert_allclose(B.float_scatter_add(dim, x, idx, vals), want, rtol=1e-12)
        ints = (x * 10).astype(np.int64)
        want_int = ints.copy()
        for pos in np.ndindex(*idx_shape):
            target = list(pos)
            target[dim] = idx[pos]
            want_int[tuple(target)] += 2
        assert np.array_equal(B.int_scatter_add(dim, ints, idx, np.full(idx_shape, 2)), want_int)


def test_mask_where_broadcasts(B: NdArray) -> None:
    x = np.zeros((2, 3), np.float32)
    mask = np.array([True, False, True])
    got = B.float_mask_where(x, mask, np.float32(5.0) * np.ones((2, 1), np.float32))
    assert got.tolist() == [[5, 0, 5], [5, 0, 5]]


def test_sort_is_stable_both_ways_and_nan_last_ascending(B: NdArray) -> None:
    x = np.array([[3.0, 1.0, np.nan, 1.0, 3.0, 2.0]], np.float32)
    values, indices = B.float_sort_with_indices(x, 1, False)
    assert indices.tolist() == [[1, 3, 5, 0, 4, 2]] and np.isnan(values[0, -1])
    values, indices = B.float_sort_with_indices(x, 1, True)
    assert indices.tolist() == [[2, 0, 4, 5, 1, 3]]  # ties in original order; NaN (largest) first
    assert np.array_equal(B.float_sort(x, 1, True), values, equal_nan=True)
    assert B.float_argsort(x, 1, False).tolist() == [[1, 3, 5, 0, 4, 2]]
    assert B.float_argsort(x, 1, True).tolist() == [[2, 0, 4, 5, 1, 3]]
    y = np.array([[2.0, 1.0], [0.0, 5.0], [1.0, 1.0]])
    assert B.float_sort_with_indices(y, 0, True)[1].tolist() == [[0, 1], [2, 0], [1, 2]]


def test_cast_and_into_int(B: NdArray) -> None:
    x = arr([-1.7, -0.2, 0.5, 2.9])
    assert B.float_into_int(x, DType.I32).tolist() == [-1, 0, 0, 2]  # truncated toward zero
    assert B.float_into_int(x, DType.I32).dtype == np.int32
    assert B.float_cast(x, DType.F64).dtype == np.float64
    assert B.float_cast(x, DType.BF16).dtype == ml_dtypes.bfloat16
    assert B.float_cast(x, DType.F32) is x  # no copy when nothing changes
    assert B.float_get_dtype(B.float_cast(x, DType.BF16)) is DType.BF16


def test_creation(B: NdArray) -> None:
    d = B.default_device()
    assert B.float_full((2, 3), 1.5, d, DType.F16).tolist() == [[1.5] * 3] * 2
    assert B.float_zeros((2,), d, DType.BF16).dtype == ml_dtypes.bfloat16
    assert B.float_ones((0, 2), d, DType.F64).shape == (0, 2)
    assert B.float_empty((4,), d, DType.F32).shape == (4,)


@pytest.mark.parametrize("dtype", FLOATS)
def test_random_is_seeded_and_in_range(dtype: DType) -> None:
    B = NdArray()
    d = B.default_device()
    B.seed(3)
    u = B.float_random((2000,), Uniform(-2.0, 3.0), d, dtype)
    n = B.float_random((2000,), Normal(1.0, 2.0), d, dtype)
    b = B.float_random((2000,), Bernoulli(0.25), d, dtype)
    B.seed(3)
    assert np.array_equal(B.float_random((2000,), Uniform(-2.0, 3.0), d, dtype), u)
    assert u.dtype == dtype.numpy and n.dtype == dtype.numpy and b.dtype == dtype.numpy
    u64 = u.astype(np.float64)
    assert u64.min() >= -2.0 and u64.max() < 3.0 and abs(u64.mean() - 0.5) < 0.15
    assert abs(n.astype(np.float64).mean() - 1.0) < 0.2 and abs(n.astype(np.float64).std() - 2.0) < 0.2
    assert (
        set(np.unique(b.astype(np.float64))) <= {0.0, 1.0} and abs(b.astype(np.float64).mean() - 0.25) < 0.05
    )


def test_uniform_never_reaches_high_after_rounding() -> None:
    B = NdArray()
    B.seed(0)
    # bfloat16 has 8 bits of mantissa: many float32 draws near `high` round up to it before the clamp.
    u = B.float_random((100_000,), Uniform(0.0, 1.0), B.default_device(), DType.BF16).astype(np.float64)
    assert u.max() < 1.0


def test_non_contiguous_inputs(B: NdArray, rng: np.random.Generator) -> None:
    base = rng.standard_normal((6, 8)).astype(np.float32)
    x = base[::2, ::-1].T  # strided, reversed, transposed
    # small sums are a GEMV with ones (burn_ndarray.ops.reductions): float32 rounding, not NumPy's bits
    np.testing.assert_allclose(B.float_sum_dim(x, 0), x.astype(np.float64).sum(0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(B.float_matmul(x, x.T), x @ x.T, rtol=1e-5)
    assert np.array_equal(B.float_sort(x, 1, False), np.sort(x, 1))
    idx = np.array([[2, 0, 1]] * 8)[::-1]  # a reversed (negative-stride) index
    assert np.array_equal(B.float_gather(1, x, idx), np.take_along_axis(x, idx, 1))
    want = x.astype(np.float64).copy()
    np.add.at(want, (np.arange(8)[:, None], idx), 1.0)
    np.testing.assert_allclose(
        B.float_scatter_add(1, x, idx, np.ones((8, 3), np.float32)[:, ::-1]), want, rtol=1e-6
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape", [(32, 1024, 256), (8, 128, 512), (32, 128, 128), (8, 128, 128), (64, 512, 512)], ids=str
)
def test_matmul_of_a_transposed_rhs_with_few_rows(
    B: NdArray, rng: np.random.Generator, shape: Any, dtype: Any, threads: Any
) -> None:
    """``g @ W^T`` (an input gradient) with at most 32 rows is taken as ``(W @ g^T)^T`` and copied
    to C order: the same bits at every thread count, the product's values. (Not always NumPy's
    ``g @ W^T`` bits: which of the two products OpenBLAS rounds how depends on the CPU's kernels.)
    More rows at 2 threads: the blocked GEMM (`runtime.gemm`), whose blocks may round otherwise
    than one call, the same bits call after call."""
    m, k, n = shape
    g, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype)
    outs = []
    for count in (1, 2, 2):
        threads(count)
        out = B.float_matmul(g, w.T)
        assert out.shape == (m, n) and out.dtype == dtype and out.flags.c_contiguous
        np.testing.assert_allclose(out, g.astype(np.float64) @ w.T.astype(np.float64), rtol=1e-4, atol=1e-4)
        outs.append(out)
    np.testing.assert_array_equal(outs[1], outs[2])
    if m <= float_ops.TRANSPOSED_RHS_MAX_ROWS:
        np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("shape", [(32, 256, 1024), (64, 128, 96), (32, 1024, 256)], ids=str)
def test_matmul_of_a_transposed_lhs_with_fewer_rows(B: NdArray, rng: np.random.Generator, shape: Any) -> None:
    """``x^T @ g`` (a weight gradient): with fewer rows than columns it is taken as ``(g^T @ x)^T``
    (an F-order result), else as is; the values are the product's either way."""
    k, m, n = shape
    x, g = rng.standard_normal((k, m)), rng.standard_normal((k, n))
    out = B.float_matmul(x.T, g)
    np.testing.assert_allclose(out, x.T @ g, rtol=1e-12, atol=1e-12)
    assert out.shape == (m, n) and out.flags.f_contiguous == (m < n)
    assert B.float_matmul(np.ascontiguousarray(x.T), g).flags.c_contiguous  # a plain lhs: as is
