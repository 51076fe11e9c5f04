"""Reductions over several dims, absolute maxima, element-wise extrema of two tensors, medians,
var_mean, cov and closeness tests: Tensor methods composed of the contract's ops, checked on
every backend against NumPy (float64 references)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing.helpers import (
    check_bool,
    check_exact,
    check_float,
    check_indices,
    f64,
    make,
    rand_float,
    rand_grid,
    rand_int,
)

DIMS_CASES = [((2, 3, 4), [0, 2]), ((2, 3, 4), [-1]), ((2, 3, 4), [2, 0, 1]), ((3, 4), []), ((0, 3), [1])]

MULTI = [
    ("sum_dims", np.sum),
    ("mean_dims", np.mean),
    ("prod_dims", np.prod),
    ("max_dims", np.max),
    ("min_dims", np.min),
]


def _ref(fn: Any, x: np.ndarray, dims: list[int]) -> np.ndarray:
    return fn(x, axis=tuple(dims), keepdims=True) if dims else x


@pytest.mark.parametrize("case", DIMS_CASES, ids=str)
@pytest.mark.parametrize("op", MULTI, ids=lambda c: c[0])
def test_float_reductions_over_dims(backend: Any, float_dtype: DType, op: Any, case: Any, rng: Any) -> None:
    name, fn = op
    shape, dims = case
    if 0 in shape and name in ("mean_dims", "max_dims", "min_dims"):
        pytest.skip(f"{name} of an empty dim is not defined")
    x = rand_float(rng, shape, float_dtype, 0.5, 1.5)
    out = getattr(make(backend, x, float_dtype), name)(dims)
    check_float(out, _ref(fn, f64(x), dims), float_dtype, terms=24, what=name)


@pytest.mark.parametrize("op", [m for m in MULTI if m[0] != "mean_dims"], ids=lambda c: c[0])
def test_int_reductions_over_dims(backend: Any, int_dtype: DType, op: Any, rng: Any) -> None:
    name, fn = op
    x = rand_int(rng, (2, 3, 2), int_dtype, 0, 2)  # products <= 2^6 and sums <= 24: every dtype holds them
    out = getattr(make(backend, x, int_dtype), name)([0, -1])
    check_exact(out, fn(x.astype(np.int64), axis=(0, 2), keepdims=True), int_dtype, what=name)


def test_reduction_over_dims_errors(backend: Any) -> None:
    from burn.errors import ShapeError

    t = make(backend, np.ones((2, 3)), backend.float_dtype)
    with pytest.raises(ShapeError, match="sum_dims: repeated dims"):
        t.sum_dims([1, -1])
    with pytest.raises(ShapeError, match="max_dims: dim 2 is out of range"):
        t.max_dims([2])


def test_max_abs(backend: Any, numeric_dtype: DType, rng: Any) -> None:
    if numeric_dtype.is_float:
        x = rand_float(rng, (2, 3, 4), numeric_dtype, -3, 3)
        check = lambda t, e, what: check_float(t, e, numeric_dtype, what=what)  # noqa: E731
    else:
        low = 0 if numeric_dtype is DType.U8 else -50
        x = rand_int(rng, (2, 3, 4), numeric_dtype, low, 50)
        check = lambda t, e, what: check_exact(t, e, numeric_dtype, what=what)  # noqa: E731
    t = make(backend, x, numeric_dtype)
    ax = np.abs(x.astype(np.float64))
    check(t.max_abs(), [ax.max()], "max_abs")
    check(t.max_abs_dim(1), ax.max(axis=1, keepdims=True), "max_abs_dim")
    check(t.max_abs_dim(-1), ax.max(axis=2, keepdims=True), "max_abs_dim(-1)")
    check(t.max_abs_dims([0, 2]), ax.max(axis=(0, 2), keepdims=True), "max_abs_dims")


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 4))], ids=str)
def test_max_pair_min_pair(backend: Any, float_dtype: DType, shapes: Any, rng: Any) -> None:
    a = rand_grid(rng, shapes[0], float_dtype)  # ties happen
    b = rand_grid(rng, shapes[1], float_dtype)
    ta, tb = make(backend, a, float_dtype), make(backend, b, float_dtype)
    check_float(ta.max_pair(tb), np.maximum(f64(a), f64(b)), float_dtype, what="max_pair")
    check_float(ta.min_pair(tb), np.minimum(f64(a), f64(b)), float_dtype, what="min_pair")
    check_float(ta.max_pair(0.5), np.maximum(f64(a), 0.5), float_dtype, what="max_pair scalar")
    check_float(ta.min_pair(0.5), np.minimum(f64(a), 0.5), float_dtype, what="min_pair scalar")


def test_max_pair_min_pair_propagate_nan_and_take_ints(
    backend: Any, float_dtype: DType, int_dtype: DType
) -> None:
    a = np.array([np.nan, 1.0, 2.0, np.nan]).astype(float_dtype.numpy)
    b = np.array([0.0, np.nan, 3.0, np.nan]).astype(float_dtype.numpy)
    ta, tb = make(backend, a, float_dtype), make(backend, b, float_dtype)
    with np.errstate(invalid="ignore"):
        check_float(ta.max_pair(tb), np.maximum(f64(a), f64(b)), float_dtype, what="max_pair NaN")
        check_float(ta.min_pair(tb), np.minimum(f64(a), f64(b)), float_dtype, what="min_pair NaN")
    i = np.array([[1, 5], [7, 0]]).astype(int_dtype.numpy)
    j = np.array([3, 4]).astype(int_dtype.numpy)
    ti, tj = make(backend, i, int_dtype), make(backend, j, int_dtype)
    check_exact(ti.max_pair(tj), np.maximum(i, j), int_dtype, what="int max_pair")
    check_exact(ti.min_pair(tj), np.minimum(i, j), int_dtype, what="int min_pair")


# -- medians -----------------------------------------------------------------------------------
def _lower_median(x: np.ndarray, axis: int) -> np.ndarray:
    n = x.shape[axis]
    return np.take(np.sort(x, axis=axis, kind="stable"), [(n - 1) // 2], axis=axis)


@pytest.mark.parametrize("case", [((5,), 0), ((3, 4), 1), ((4, 3), 0), ((2, 3, 2), 2), ((2, 1), 1)], ids=str)
def test_median_along_a_dim(backend: Any, numeric_dtype: DType, case: Any, rng: Any) -> None:
    shape, dim = case
    if numeric_dtype.is_float:
        x = rand_grid(rng, shape, numeric_dtype)  # ties: the median is still well defined
    else:
        x = rand_int(rng, shape, numeric_dtype, 0, 5)
    t = make(backend, x, numeric_dtype)
    expected = _lower_median(x.astype(np.float64), dim)
    values, indices = t.median_with_indices(dim)
    if numeric_dtype.is_float:
        check_float(t.median(dim), expected, numeric_dtype, what="median")
        check_float(values, expected, numeric_dtype, what="median_with_indices")
    else:
        check_exact(t.median(dim), expected, numeric_dtype, what="median")
        check_exact(values, expected, numeric_dtype, what="median_with_indices")
    # the indices point at an element equal to the median (which one, among ties, is not fixed)
    idx = indices.to_numpy()
    assert idx.shape == expected.shape
    picked = np.take_along_axis(x.astype(np.float64), idx.astype(np.int64), dim)
    np.testing.assert_array_equal(picked, expected)
    check_indices(indices, idx, backend, what="median indices dtype")


def test_median_of_all_elements(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (3, 4), float_dtype)
    t = make(backend, x, float_dtype)
    flat = np.sort(f64(x).reshape(-1))
    check_float(t.median(), [flat[(flat.size - 1) // 2]], float_dtype, what="median()")
    check_float(make(backend, np.array(2.5), float_dtype).median(), [2.5], float_dtype, what="rank 0")
    v, i = make(backend, np.array([[4.0, 1.0, 3.0, 2.0]]), float_dtype).median_with_indices(-1)
    check_float(v, [[2.0]], float_dtype, what="even count: the lower median")
    check_indices(i, [[3]], backend)


def test_median_errors(backend: Any) -> None:
    from burn.errors import KindError, ShapeError

    with pytest.raises(ShapeError, match="median: dim 0 of shape \\(0, 3\\) is empty"):
        make(backend, np.zeros((0, 3)), backend.float_dtype).median(0)
    with pytest.raises(KindError, match="median"):
        make(backend, np.ones(3, dtype=bool), DType.BOOL).median()


# -- variance, covariance ----------------------------------------------------------------------
@pytest.mark.parametrize("case", [((4,), 0), ((3, 5), 1), ((3, 5), -2), ((2, 3, 4), 1)], ids=str)
def test_var_mean(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    shape, dim = case
    x = rand_float(rng, shape, float_dtype, -2, 2)
    t = make(backend, x, float_dtype)
    ref = f64(x)
    mean = ref.mean(axis=dim, keepdims=True)
    var, m = t.var_mean(dim)
    check_float(var, ref.var(axis=dim, ddof=1, keepdims=True), float_dtype, terms=8, what="var_mean var")
    check_float(m, mean, float_dtype, terms=8, what="var_mean mean")
    var_b, m_b = t.var_mean_bias(dim)
    check_float(var_b, ref.var(axis=dim, keepdims=True), float_dtype, terms=8, what="var_mean_bias var")
    check_float(m_b, mean, float_dtype, terms=8, what="var_mean_bias mean")


@pytest.mark.parametrize("correction", [1, 0])
def test_cov(backend: Any, float_dtype: DType, correction: int, rng: Any) -> None:
    x = rand_float(rng, (3, 6), float_dtype, -2, 2)  # 3 variables, 6 observations
    t = make(backend, x, float_dtype)
    ref = f64(x)
    check_float(t.cov(1, correction), np.cov(ref, ddof=correction), float_dtype, terms=12, what="cov(1)")
    check_float(
        t.transpose().cov(0, correction), np.cov(ref, ddof=correction), float_dtype, terms=12, what="cov(0)"
    )
    check_float(t.cov(-1, correction), np.cov(ref, ddof=correction), float_dtype, terms=12, what="cov(-1)")


def test_cov_and_var_mean_errors(backend: Any) -> None:
    from burn.errors import KindError, ShapeError

    with pytest.raises(ShapeError, match="cov: expects a 2-D tensor"):
        make(backend, np.ones((2, 3, 4)), backend.float_dtype).cov(1)
    with pytest.raises(KindError, match="var_mean"):
        make(backend, np.ones((2, 3), dtype=np.int64), backend.int_dtype).var_mean(1)


# -- closeness ---------------------------------------------------------------------------------
def test_is_close_and_all_close(backend: Any, float_dtype: DType) -> None:
    a = np.array([1.0, 1.0, 0.0, np.inf, -np.inf, np.nan, np.inf, 100.0])
    b = np.array([1.0, 1.5, 1e-9, np.inf, np.inf, np.nan, 1.0, 100.0 + 1e-4])
    ta, tb = make(backend, a, float_dtype), make(backend, b, float_dtype)
    ra, rb = f64(a.astype(float_dtype.numpy)), f64(b.astype(float_dtype.numpy))
    with np.errstate(invalid="ignore"):
        check_bool(ta.is_close(tb), np.isclose(ra, rb, rtol=1e-5, atol=1e-8), what="is_close")
        check_bool(ta.is_close(tb, rtol=0.6), np.isclose(ra, rb, rtol=0.6, atol=1e-8), what="rtol")
        check_bool(ta.is_close(1.0, atol=0.25), np.isclose(ra, 1.0, rtol=1e-5, atol=0.25), what="scalar")
        check_bool(ta.is_close(np.inf), np.isclose(ra, np.inf), what="scalar inf")
    assert ta[:2].all_close(ta[:2])
    assert not ta.all_close(tb)
    assert ta[:1].all_close(tb[:1] + 1e-6, rtol=1e-3)
    c = make(backend, np.array([[1.0, 2.0]]), float_dtype)
    assert c.all_close(make(backend, np.array([1.0, 2.0]), float_dtype))  # broadcasting


def test_is_close_refuses_int(backend: Any) -> None:
    from burn.errors import KindError

    i = make(backend, np.array([1, 2]), backend.int_dtype)
    with pytest.raises(KindError, match="is_close: expects a Float tensor"):
        i.is_close(i)
