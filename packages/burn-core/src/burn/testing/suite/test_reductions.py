"""Reductions of float and int tensors: along a dim (kept, size 1) and full (shape ``(1,)``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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
    rand_float,
    rand_int,
)

Ref = Callable[[np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class DimReduce:
    op: str
    call: Callable[[Any, int], Any]
    ref: Ref
    empty_ok: bool = True  # defined on a size-0 dim


def _first_arg(fn: Callable[..., np.ndarray]) -> Ref:
    return lambda x, d: fn(x, axis=d, keepdims=True)


FLOAT_DIM = [
    DimReduce("float_sum_dim", lambda t, d: t.sum_dim(d), _first_arg(np.sum)),
    DimReduce("float_mean_dim", lambda t, d: t.mean_dim(d), _first_arg(np.mean), empty_ok=False),
    DimReduce("float_prod_dim", lambda t, d: t.prod_dim(d), _first_arg(np.prod)),
    DimReduce("float_max_dim", lambda t, d: t.max_dim(d), _first_arg(np.max), empty_ok=False),
    DimReduce("float_min_dim", lambda t, d: t.min_dim(d), _first_arg(np.min), empty_ok=False),
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


def _defined(cases: list[DimReduce], shapes: list[Any]) -> list[Any]:
    """(case, shape, dim) triples, leaving out reductions undefined over a size-0 dim."""
    return [
        pytest.param(c, shape, dim, id=f"{c.op}-{shape}-{dim}")
        for c in cases
        for shape, dim in shapes
        if c.empty_ok or shape[dim]
    ]


@covers(*(c.op for c in FLOAT_DIM))
@pytest.mark.parametrize(("case", "shape", "dim"), _defined(FLOAT_DIM, DIM_CASES))
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


# -- int -----------------------------------------------------------------------------------------
def _floor_mean(x: np.ndarray, d: int) -> np.ndarray:
    return np.floor_divide(np.sum(x, axis=d, keepdims=True), x.shape[d])


INT_DIM = [
    DimReduce("int_sum_dim", lambda t, d: t.sum_dim(d), _first_arg(np.sum)),
    DimReduce("int_mean_dim", lambda t, d: t.mean_dim(d), _floor_mean, empty_ok=False),
    DimReduce("int_prod_dim", lambda t, d: t.prod_dim(d), _first_arg(np.prod)),
    DimReduce("int_max_dim", lambda t, d: t.max_dim(d), _first_arg(np.max), empty_ok=False),
    DimReduce("int_min_dim", lambda t, d: t.min_dim(d), _first_arg(np.min), empty_ok=False),
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
@pytest.mark.parametrize(("case", "shape", "dim"), _defined(INT_DIM, INT_DIM_CASES))
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


# -- bool ------------------------------------------------------------------------------------------
@covers("bool_any", "bool_all", "bool_any_dim", "bool_all_dim")
@pytest.mark.parametrize(
    ("shape", "dim"), [((5,), 0), ((3, 4), 1), ((2, 3, 4), 0), ((0, 3), 0), ((3, 0), 1)], ids=str
)
def test_bool_any_all(backend: Any, shape: Any, dim: int, rng: Any) -> None:
    # Rows all true and all false occur with a skewed draw.
    x = rng.random(size=shape) < rng.choice([0.1, 0.5, 0.95])
    if x.ndim == 2 and x.shape[0] >= 2 and x.shape[1] > 0:
        x[0, :] = True
        x[1, :] = False
    t = make(backend, x, DType.BOOL)
    check_bool(t.any(), [x.any()], what="any")
    check_bool(t.all(), [x.all()], what="all")
    check_bool(t.any_dim(dim), x.any(axis=dim, keepdims=True), what="any_dim")
    check_bool(t.all_dim(dim), x.all(axis=dim, keepdims=True), what="all_dim")


@covers("bool_any", "bool_all", "bool_any_dim", "bool_all_dim")
def test_float_and_int_any_all_mean_nonzero(backend: Any, float_dtype: DType) -> None:
    x = np.array([[0.0, 0.0], [0.0, -1.5], [2.0, 3.0]])
    t = make(backend, x, float_dtype)
    check_bool(t.any(), [True], what="float any")
    check_bool(t.all(), [False], what="float all")
    check_bool(t.any_dim(1), [[False], [True], [True]], what="float any_dim")
    check_bool(t.all_dim(1), [[False], [False], [True]], what="float all_dim")
    i = make(backend, x.astype(np.int64), backend.int_dtype)
    check_bool(i.any_dim(1), [[False], [True], [True]], what="int any_dim")
    check_bool(i.all_dim(1), [[False], [False], [True]], what="int all_dim")
