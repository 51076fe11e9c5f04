"""Reductions of int tensors: along a dim (kept, size 1), over several dims and full (shape
``(1,)``), the mean floored, arg extrema (the first on ties) and cumulative ops; exact results.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, check_indices, make, rand_int
from burn.testing.suite._reductions import MULTI, DimReduce, defined, first_arg


def _floor_mean(x: np.ndarray, d: int) -> np.ndarray:
    return np.floor_divide(np.sum(x, axis=d, keepdims=True), x.shape[d])


INT_DIM = [
    DimReduce("int_sum_dim", lambda t, d: t.sum_dim(d), first_arg(np.sum)),
    DimReduce("int_mean_dim", lambda t, d: t.mean_dim(d), _floor_mean, empty_ok=False),
    DimReduce("int_prod_dim", lambda t, d: t.prod_dim(d), first_arg(np.prod)),
    DimReduce("int_max_dim", lambda t, d: t.max_dim(d), first_arg(np.max), empty_ok=False),
    DimReduce("int_min_dim", lambda t, d: t.min_dim(d), first_arg(np.min), empty_ok=False),
    DimReduce("int_cumsum", lambda t, d: t.cumsum(d), lambda x, d: np.cumsum(x, axis=d)),
]


def _int_inputs(op: str, rng: Any, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    # Small magnitudes so that no sum or product leaves int8 / uint8: sums of up to 7 values in
    # [-9, 9]; products of values in [-1, 1] with a 2 at every 5th flat position.
    if "prod" not in op:
        return rand_int(rng, shape, dtype, -9, 9)
    x = rand_int(rng, shape, dtype, -1, 1)
    x.reshape(-1)[::5] = 2
    return x


INT_DIM_CASES = [((7,), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 1, 3, 2, 2), 3), ((0, 3), 0), ((3, 0), 0)]


@covers(*(c.op for c in INT_DIM))
@pytest.mark.parametrize(("case", "shape", "dim"), defined(INT_DIM, INT_DIM_CASES))
def test_int_reduce_dim(
    backend: Any, int_dtype: DType, case: DimReduce, shape: Any, dim: int, rng: Any
) -> None:
    x = _int_inputs(case.op, rng, shape, int_dtype)
    out = case.call(make(backend, x, int_dtype), dim)
    check_exact(out, case.ref(x.astype(np.int64), dim), int_dtype, what=case.op)


INT_FULL = [
    ("int_sum", lambda t: t.sum(), np.sum),
    ("int_mean", lambda t: t.mean(), lambda x: np.floor_divide(np.sum(x), x.size)),
    ("int_prod", lambda t: t.prod(), np.prod),
    ("int_max", lambda t: t.max(), np.max),
    ("int_min", lambda t: t.min(), np.min),
]


@covers(*(op for op, _, _ in INT_FULL))
@pytest.mark.parametrize("shape", [(), (1,), (4,), (2, 2)], ids=str)
@pytest.mark.parametrize(("op", "call", "ref"), INT_FULL, ids=[f[0] for f in INT_FULL])
def test_int_reduce_full(
    backend: Any, int_dtype: DType, op: str, call: Any, ref: Any, shape: Any, rng: Any
) -> None:
    x = _int_inputs(op, rng, shape, int_dtype)
    out = call(make(backend, x, int_dtype))
    check_exact(out, np.reshape(ref(x.astype(np.int64)), (1,)), int_dtype, what=f"{op} gives shape (1,)")


@covers("int_mean", "int_mean_dim")
def test_int_mean_floors(backend: Any, int_dtype: DType) -> None:
    if int_dtype is DType.U8:
        x = np.array([[1, 2], [2, 2], [0, 1]])
        t = make(backend, x, int_dtype)
        check_exact(t.mean_dim(1), [[1], [2], [0]], int_dtype, what="floor mean")
        check_exact(t.mean(), [1], int_dtype, what="floor mean")
        return
    x = np.array([[-1, -2], [3, 4], [-3, 0]])
    t = make(backend, x, int_dtype)
    check_exact(t.mean_dim(1), [[-2], [3], [-2]], int_dtype, what="mean_dim floors (toward -inf)")
    check_exact(t.mean(), [0], int_dtype, what="mean of ints")


@covers("int_argmax", "int_argmin", "int_max_dim_with_indices", "int_min_dim_with_indices")
@pytest.mark.parametrize(("shape", "dim"), [c for c in INT_DIM_CASES if 0 not in c[0]], ids=str)
def test_int_arg_extrema(backend: Any, int_dtype: DType, shape: Any, dim: int, rng: Any) -> None:
    x = rand_int(rng, shape, int_dtype, -50, 50)
    t = make(backend, x, int_dtype)
    ref = x.astype(np.int64)
    check_indices(t.argmax(dim), np.argmax(ref, axis=dim, keepdims=True), backend, what="argmax (first)")
    check_indices(t.argmin(dim), np.argmin(ref, axis=dim, keepdims=True), backend, what="argmin (first)")
    values, idx = t.max_dim_with_indices(dim)
    check_exact(values, np.max(ref, axis=dim, keepdims=True), int_dtype, what="max_dim_with_indices values")
    check_indices(idx, np.argmax(ref, axis=dim, keepdims=True), backend, what="max_dim_with_indices indices")
    values, idx = t.min_dim_with_indices(dim)
    check_exact(values, np.min(ref, axis=dim, keepdims=True), int_dtype, what="min_dim_with_indices values")
    check_indices(idx, np.argmin(ref, axis=dim, keepdims=True), backend, what="min_dim_with_indices indices")


@pytest.mark.parametrize("op", [m for m in MULTI if m[0] != "mean_dims"], ids=lambda c: c[0])
def test_int_reductions_over_dims(backend: Any, int_dtype: DType, op: Any, rng: Any) -> None:
    name, fn = op
    x = rand_int(rng, (2, 3, 2), int_dtype, 0, 2)  # products <= 2^6 and sums <= 24: every dtype holds them
    out = getattr(make(backend, x, int_dtype), name)([0, -1])
    check_exact(out, fn(x.astype(np.int64), axis=(0, 2), keepdims=True), int_dtype, what=name)


INT_CUM = [
    ("int_cumprod", lambda t, d: t.cumprod(d), lambda x, d: np.cumprod(x, axis=d, dtype=x.dtype)),
    ("int_cummax", lambda t, d: t.cummax(d), lambda x, d: np.maximum.accumulate(x, axis=d)),
    ("int_cummin", lambda t, d: t.cummin(d), lambda x, d: np.minimum.accumulate(x, axis=d)),
]


@covers(*(c[0] for c in INT_CUM))
@pytest.mark.parametrize("case", [((6,), 0), ((3, 4), 1), ((2, 3, 2), 0), ((0, 3), 0)], ids=str)
@pytest.mark.parametrize("op", INT_CUM, ids=lambda c: c[0])
def test_int_cumulative(backend: Any, int_dtype: DType, op: Any, case: Any, rng: Any) -> None:
    name, call, ref = op
    shape, dim = case
    low = -2 if name == "int_cumprod" else -50
    x = rand_int(rng, shape, int_dtype, low, -low)  # |products| <= 2^6: in every dtype's range
    check_exact(call(make(backend, x, int_dtype), dim), ref(x, dim), int_dtype, what=name)
