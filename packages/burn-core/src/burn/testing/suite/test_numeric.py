"""Ops of float and int tensors alike, checked on both kinds: cross and dot products, squares,
finiteness, absolute maxima, element-wise extrema of two tensors and medians (Tensor methods
composed of the contract's ops), against NumPy (float64 references).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    check_bool,
    check_exact,
    check_float,
    check_indices,
    f64,
    make,
    rand_any,
    rand_float,
    rand_grid,
    rand_int,
)


# -- cross, dot -------------------------------------------------------------------------------
@covers("float_cross", "int_cross")
@pytest.mark.parametrize(
    ("a", "b", "dim"), [((2, 3), (2, 3), -1), ((3, 2), (3, 1), 0), ((1, 3), (2, 3), 1)], ids=str
)
def test_cross(backend: Any, rng: Any, a: tuple[int, ...], b: tuple[int, ...], dim: int) -> None:
    for dtype in (backend.float_dtype, backend.int_dtype):
        x, y = rand_any(rng, a, dtype), rand_any(rng, b, dtype)
        xb, yb = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
        expected = np.cross(xb, yb, axis=dim)
        out = make(backend, x, dtype).cross(make(backend, y, dtype), dim)
        if dtype.is_float:
            check_float(out, expected, dtype, terms=2)
        else:
            check_exact(out, expected.astype(dtype.numpy), dtype)
    t = make(backend, np.zeros((2, 2)), backend.float_dtype)
    with pytest.raises(Exception, match="must have size 3"):
        t.cross(t)


@covers("float_mul", "float_sum", "int_mul", "int_sum")
def test_dot(backend: Any, rng: Any) -> None:
    for dtype in (backend.float_dtype, backend.int_dtype):
        x, y = rand_any(rng, (4,), dtype), rand_any(rng, (4,), dtype)
        out = make(backend, x, dtype).dot(make(backend, y, dtype))
        expected = [np.dot(x.astype(np.float64), y.astype(np.float64))]
        if dtype.is_float:
            check_float(out, expected, dtype, terms=4)
        else:
            check_exact(out, np.asarray(expected).astype(dtype.numpy), dtype)
    with pytest.raises(Exception, match="dot: needs two 1-D tensors"):
        make(backend, np.zeros((2, 2)), backend.float_dtype).dot(
            make(backend, np.zeros(4), backend.float_dtype)
        )


def test_square(backend: Any, float_dtype: DType, int_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (2, 3), float_dtype, -3, 3)
    check_float(make(backend, x, float_dtype).square(), f64(x) ** 2, float_dtype, what="square")
    i = rand_int(rng, (2, 3), int_dtype, -9, 9)
    check_exact(make(backend, i, int_dtype).square(), i.astype(np.int64) ** 2, int_dtype, what="int square")


def test_is_finite(backend: Any, float_dtype: DType, int_dtype: DType) -> None:
    x = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3.0]).astype(float_dtype.numpy)
    check_bool(make(backend, x, float_dtype).is_finite(), np.isfinite(f64(x)), what="is_finite")
    check_bool(make(backend, np.array([1, 0, 2]), int_dtype).is_finite(), [True, True, True], what="int")


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
