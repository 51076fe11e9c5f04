"""Reductions of float tensors: along a dim (kept, size 1), over several dims and full (shape
``(1,)``), arg extrema (the first on ties), cumulative ops (NaN propagated), variance and
covariance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, check_indices, f64, make, rand_float
from burn.testing.suite._reductions import MULTI, DimReduce, defined, first_arg

FLOAT_DIM = [
    DimReduce("float_sum_dim", lambda t, d: t.sum_dim(d), first_arg(np.sum)),
    DimReduce("float_mean_dim", lambda t, d: t.mean_dim(d), first_arg(np.mean), empty_ok=False),
    DimReduce("float_prod_dim", lambda t, d: t.prod_dim(d), first_arg(np.prod)),
    DimReduce("float_max_dim", lambda t, d: t.max_dim(d), first_arg(np.max), empty_ok=False),
    DimReduce("float_min_dim", lambda t, d: t.min_dim(d), first_arg(np.min), empty_ok=False),
    DimReduce("float_cumsum", lambda t, d: t.cumsum(d), lambda x, d: np.cumsum(x, axis=d)),
]


DIM_CASES = [
    ((7,), 0),
    ((3, 4), 0),
    ((3, 4), 1),
    ((2, 3, 4), 1),
    ((2, 3, 4), 2),
    ((2, 1, 3, 2, 2), 3),
    ((0, 3), 0),
    ((3, 0), 0),
]


def _float_inputs(op: str, rng: Any, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    # prod: factors near 1 so low-precision products neither overflow nor underflow.
    if "prod" in op:
        return rand_float(rng, shape, dtype, 0.6, 1.6)
    return rand_float(rng, shape, dtype, -2, 2)


@covers(*(c.op for c in FLOAT_DIM))
@pytest.mark.parametrize(("case", "shape", "dim"), defined(FLOAT_DIM, DIM_CASES))
def test_float_reduce_dim(
    backend: Any, float_dtype: DType, case: DimReduce, shape: Any, dim: int, rng: Any
) -> None:
    x = _float_inputs(case.op, rng, shape, float_dtype)
    out = case.call(make(backend, x, float_dtype), dim)
    check_float(out, case.ref(f64(x), dim), float_dtype, terms=shape[dim] if shape else 1, what=case.op)


FLOAT_FULL = [
    ("float_sum", lambda t: t.sum(), np.sum),
    ("float_mean", lambda t: t.mean(), np.mean),
    ("float_prod", lambda t: t.prod(), np.prod),
    ("float_max", lambda t: t.max(), np.max),
    ("float_min", lambda t: t.min(), np.min),
]


@covers(*(op for op, _, _ in FLOAT_FULL))
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 4), (2, 3, 2)], ids=str)
@pytest.mark.parametrize(("op", "call", "ref"), FLOAT_FULL, ids=[f[0] for f in FLOAT_FULL])
def test_float_reduce_full(
    backend: Any, float_dtype: DType, op: str, call: Any, ref: Any, shape: Any, rng: Any
) -> None:
    x = _float_inputs(op, rng, shape, float_dtype)
    out = call(make(backend, x, float_dtype))
    n = int(np.prod(shape))
    check_float(out, np.reshape(ref(f64(x)), (1,)), float_dtype, terms=n, what=f"{op} gives shape (1,)")


@covers("float_sum", "float_prod", "float_sum_dim", "float_prod_dim")
def test_float_sum_prod_of_empty(backend: Any, float_dtype: DType) -> None:
    t = make(backend, np.zeros((0, 3)), float_dtype)
    check_float(t.sum(), [0.0], float_dtype, what="sum of empty")
    check_float(t.prod(), [1.0], float_dtype, what="prod of empty")
    check_float(t.sum_dim(0), np.zeros((1, 3)), float_dtype, what="sum_dim over size 0")
    check_float(t.prod_dim(0), np.ones((1, 3)), float_dtype, what="prod_dim over size 0")


@covers("float_argmax", "float_argmin", "float_max_dim_with_indices", "float_min_dim_with_indices")
@pytest.mark.parametrize(("shape", "dim"), [c for c in DIM_CASES if 0 not in c[0]], ids=str)
def test_float_arg_extrema(backend: Any, float_dtype: DType, shape: Any, dim: int, rng: Any) -> None:
    x = rand_float(rng, shape, float_dtype)
    t = make(backend, x, float_dtype)
    ref = f64(x)
    check_indices(t.argmax(dim), np.argmax(ref, axis=dim, keepdims=True), backend, what="argmax")
    check_indices(t.argmin(dim), np.argmin(ref, axis=dim, keepdims=True), backend, what="argmin")
    values, idx = t.max_dim_with_indices(dim)
    check_float(values, np.max(ref, axis=dim, keepdims=True), float_dtype, what="max_dim_with_indices values")
    check_indices(idx, np.argmax(ref, axis=dim, keepdims=True), backend, what="max_dim_with_indices indices")
    values, idx = t.min_dim_with_indices(dim)
    check_float(values, np.min(ref, axis=dim, keepdims=True), float_dtype, what="min_dim_with_indices values")
    check_indices(idx, np.argmin(ref, axis=dim, keepdims=True), backend, what="min_dim_with_indices indices")


@covers("float_argmax", "float_argmin", "float_max_dim_with_indices", "float_min_dim_with_indices")
def test_float_arg_extrema_pick_the_first(backend: Any, float_dtype: DType) -> None:
    x = np.array([[1.0, 3.0, 3.0, -2.0, -2.0], [0.5, 0.5, 0.5, 0.5, 0.5]])
    t = make(backend, x, float_dtype)
    check_indices(t.argmax(1), [[1], [0]], backend, what="argmax ties")
    check_indices(t.argmin(1), [[3], [0]], backend, what="argmin ties")
    check_indices(t.max_dim_with_indices(1)[1], [[1], [0]], backend, what="max_dim_with_indices ties")
    check_indices(t.min_dim_with_indices(1)[1], [[3], [0]], backend, what="min_dim_with_indices ties")


MULTI_DIM_CASES = [
    ((2, 3, 4), [0, 2]),
    ((2, 3, 4), [-1]),
    ((2, 3, 4), [2, 0, 1]),
    ((3, 4), []),
    ((0, 3), [1]),
]


def _ref(fn: Any, x: np.ndarray, dims: list[int]) -> np.ndarray:
    return fn(x, axis=tuple(dims), keepdims=True) if dims else x


@pytest.mark.parametrize("case", MULTI_DIM_CASES, ids=str)
@pytest.mark.parametrize("op", MULTI, ids=lambda c: c[0])
def test_float_reductions_over_dims(backend: Any, float_dtype: DType, op: Any, case: Any, rng: Any) -> None:
    name, fn = op
    shape, dims = case
    if 0 in shape and name in ("mean_dims", "max_dims", "min_dims"):
        pytest.skip(f"{name} of an empty dim is not defined")
    x = rand_float(rng, shape, float_dtype, 0.5, 1.5)
    out = getattr(make(backend, x, float_dtype), name)(dims)
    check_float(out, _ref(fn, f64(x), dims), float_dtype, terms=24, what=name)


def test_reduction_over_dims_errors(backend: Any) -> None:
    from burn.errors import ShapeError

    t = make(backend, np.ones((2, 3)), backend.float_dtype)
    with pytest.raises(ShapeError, match="sum_dims: repeated dims"):
        t.sum_dims([1, -1])
    with pytest.raises(ShapeError, match="max_dims: dim 2 is out of range"):
        t.max_dims([2])


# -- cumulative ops ----------------------------------------------------------------------------
CUM_CASES = [((7,), 0), ((3, 4), 0), ((2, 3, 4), 2), ((0, 3), 0), ((1, 5), 1)]


FLOAT_CUM = [
    ("float_cumprod", lambda t, d: t.cumprod(d), lambda x, d: np.cumprod(x, axis=d)),
    ("float_cummax", lambda t, d: t.cummax(d), lambda x, d: np.maximum.accumulate(x, axis=d)),
    ("float_cummin", lambda t, d: t.cummin(d), lambda x, d: np.minimum.accumulate(x, axis=d)),
]


@covers(*(c[0] for c in FLOAT_CUM))
@pytest.mark.parametrize("case", CUM_CASES, ids=str)
@pytest.mark.parametrize("op", FLOAT_CUM, ids=lambda c: c[0])
def test_float_cumulative(backend: Any, float_dtype: DType, op: Any, case: Any, rng: Any) -> None:
    name, call, ref = op
    shape, dim = case
    # factors near 1 keep products in range; the sign flips exercise cumprod
    x = (rand_float(rng, shape, float_dtype, 0.6, 1.5) * np.where(rng.random(shape) < 0.3, -1, 1)).astype(
        float_dtype.numpy
    )
    out = call(make(backend, x, float_dtype), dim)
    check_float(out, ref(f64(x), dim), float_dtype, terms=max(1, shape[dim]), what=name)


@covers("float_cummax", "float_cummin")
def test_cummax_cummin_propagate_nan(backend: Any, float_dtype: DType) -> None:
    x = np.array([[3.0, 1.0, np.nan, 5.0, 0.5], [1.0, 2.0, 0.0, 3.0, -1.0]]).astype(float_dtype.numpy)
    t = make(backend, x, float_dtype)
    check_float(t.cummax(1), np.maximum.accumulate(f64(x), axis=1), float_dtype, what="cummax")
    check_float(t.cummin(1), np.minimum.accumulate(f64(x), axis=1), float_dtype, what="cummin")
    check_float(t.cummax(-2), np.maximum.accumulate(f64(x), axis=0), float_dtype, what="cummax dim -2")


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

    with pytest.raises(ShapeError, match="cov: dim 0 must be one of the last two dims"):
        make(backend, np.ones((2, 3, 4)), backend.float_dtype).cov(0)
    with pytest.raises(ShapeError, match="cov: expects variables x observations"):
        make(backend, np.ones((4,)), backend.float_dtype).cov(0)
    with pytest.raises(KindError, match="var_mean"):
        make(backend, np.ones((2, 3), dtype=np.int64), backend.int_dtype).var_mean(1)
