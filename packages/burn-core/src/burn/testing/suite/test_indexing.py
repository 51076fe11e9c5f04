"""Indexing ops: gather, scatter (adds), select, select_add, mask_where, mask_fill, argwhere."""

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
    f64,
    make,
    rand_any,
    rand_bool,
    rand_int,
)


def _check(out: Any, expected: np.ndarray, dtype: DType, what: str, terms: int = 1) -> None:
    if dtype.is_float:
        check_float(out, f64(expected), dtype, terms=terms, what=what)
    else:
        check_exact(out, expected, dtype, what=what)


def _indices(backend: Any, values: Any) -> Any:
    return make(backend, np.asarray(values, dtype=np.int64), backend.int_dtype)


GATHER = [
    ((4, 3), 0, (2, 3)),
    ((4, 3), 1, (4, 5)),
    ((2, 3, 4), 2, (2, 3, 2)),
    ((2, 3, 4), 1, (2, 1, 4)),
    ((5,), 0, (0,)),
]


@covers("float_gather", "int_gather", "bool_gather")
@pytest.mark.parametrize(("shape", "dim", "idx_shape"), GATHER, ids=str)
def test_gather(backend: Any, any_dtype: DType, shape: Any, dim: int, idx_shape: Any, rng: Any) -> None:
    x = rand_any(rng, shape, any_dtype)
    idx = rng.integers(0, shape[dim], size=idx_shape)
    out = make(backend, x, any_dtype).gather(dim, _indices(backend, idx))
    check_exact(out, np.take_along_axis(x, idx, axis=dim), any_dtype, what="gather")


def _scatter_ref(x: np.ndarray, dim: int, idx: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = x.astype(np.float64 if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else np.int64)
    grid: list[Any] = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    np.add.at(out, tuple(grid), values.astype(out.dtype))
    return out


SCATTER = [((4, 3), 0, (6, 3)), ((4, 3), 1, (4, 5)), ((2, 3, 4), 2, (2, 3, 3)), ((2, 3, 4), 0, (1, 3, 4))]


@covers("float_scatter_add", "int_scatter_add")
@pytest.mark.parametrize(("shape", "dim", "idx_shape"), SCATTER, ids=str)
def test_scatter_adds_repeated_indices(
    backend: Any, numeric_dtype: DType, shape: Any, dim: int, idx_shape: Any, rng: Any
) -> None:
    x = rand_any(rng, shape, numeric_dtype)
    idx = rng.integers(0, shape[dim], size=idx_shape)  # more indices than rows: repeats accumulate
    values = rand_any(rng, idx_shape, numeric_dtype)
    t = make(backend, x, numeric_dtype)
    out = t.scatter(dim, _indices(backend, idx), make(backend, values, numeric_dtype))
    _check(out, _scatter_ref(x, dim, idx, values), numeric_dtype, "scatter", terms=4)
    _check(t, x, numeric_dtype, "scatter leaves its input unchanged")


SELECT = [
    ((5, 3), 0, [4, 0, 0, 2]),
    ((5, 3), 1, [2, 1]),
    ((2, 3, 4), 2, [3, 3, 3]),
    ((4,), 0, []),
    ((2, 3, 4), 1, [1]),
]


@covers("float_select", "int_select", "bool_select")
@pytest.mark.parametrize(("shape", "dim", "idx"), SELECT, ids=str)
def test_select(backend: Any, any_dtype: DType, shape: Any, dim: int, idx: list[int], rng: Any) -> None:
    x = rand_any(rng, shape, any_dtype)
    out = make(backend, x, any_dtype).select(dim, _indices(backend, idx))
    check_exact(out, np.take(x, np.asarray(idx, dtype=np.int64), axis=dim), any_dtype, what="select")


@covers("float_select_add", "int_select_add")
@pytest.mark.parametrize(("shape", "dim", "idx"), SELECT[:3], ids=str)
def test_select_add_accumulates(
    backend: Any, numeric_dtype: DType, shape: Any, dim: int, idx: list[int], rng: Any
) -> None:
    x = rand_any(rng, shape, numeric_dtype)
    vshape = list(shape)
    vshape[dim] = len(idx)
    values = rand_any(rng, tuple(vshape), numeric_dtype)
    t = make(backend, x, numeric_dtype)
    out = t.select_add(dim, _indices(backend, idx), make(backend, values, numeric_dtype))
    wide = np.float64 if numeric_dtype.is_float else np.int64
    expected = np.asarray(x).astype(wide)
    index: Any = (slice(None),) * dim + (np.asarray(idx),)
    np.add.at(expected, index, values.astype(wide))
    _check(out, expected, numeric_dtype, "select_add", terms=4)
    _check(t, x, numeric_dtype, "select_add leaves its input unchanged")


MASK = [
    ((3, 4), (3, 4), (3, 4)),
    ((3, 4), (4,), (3, 4)),
    ((3, 4), (3, 4), (1,)),
    ((2, 3, 4), (3, 1), (4,)),
    ((0, 2), (0, 2), (0, 2)),
]


@covers("float_mask_where", "int_mask_where", "bool_mask_where")
@pytest.mark.parametrize(("shape", "mask_shape", "value_shape"), MASK, ids=str)
def test_mask_where(
    backend: Any, any_dtype: DType, shape: Any, mask_shape: Any, value_shape: Any, rng: Any
) -> None:
    x = rand_any(rng, shape, any_dtype)
    mask = rand_bool(rng, mask_shape)
    value = rand_any(rng, value_shape, any_dtype)
    out = make(backend, x, any_dtype).mask_where(
        make(backend, mask, DType.BOOL), make(backend, value, any_dtype)
    )
    check_exact(out, np.where(mask, value, x), any_dtype, what="mask_where")


@covers("float_mask_fill", "int_mask_fill")
@pytest.mark.parametrize(
    ("shape", "mask_shape"), [((3, 4), (3, 4)), ((3, 4), (1, 4)), ((), ()), ((0, 3), (0, 3))], ids=str
)
def test_mask_fill(backend: Any, numeric_dtype: DType, shape: Any, mask_shape: Any, rng: Any) -> None:
    x = rand_any(rng, shape, numeric_dtype)
    mask = rand_bool(rng, mask_shape)
    value = 1.5 if numeric_dtype.is_float else 7
    out = make(backend, x, numeric_dtype).mask_fill(make(backend, mask, DType.BOOL), value)
    check_exact(out, np.where(mask, np.asarray(value).astype(x.dtype), x), numeric_dtype, what="mask_fill")


@covers("bool_argwhere")
@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 3, 2), (0, 3), (), (1, 2, 1, 2, 2)], ids=str)
def test_argwhere_and_nonzero(backend: Any, shape: Any, rng: Any) -> None:
    mask = rand_bool(rng, shape)
    t = make(backend, mask, DType.BOOL)
    expected = np.argwhere(mask) if mask.ndim else np.zeros((int(mask), 0), dtype=np.int64)
    check_exact(t.argwhere(), expected.astype(np.int64), backend.int_dtype, what="argwhere")
    if mask.ndim:
        parts = t.nonzero()
        assert len(parts) == mask.ndim, f"nonzero() gave {len(parts)} tensors for rank {mask.ndim}"
        for part, want in zip(parts, np.nonzero(mask), strict=True):
            check_exact(part, want.astype(np.int64), backend.int_dtype, what="nonzero")


@covers("bool_argwhere")
def test_argwhere_of_float_and_int_means_nonzero(backend: Any, float_dtype: DType) -> None:
    x = np.array([[0.0, 1.5], [-2.0, 0.0]])
    expected = np.array([[0, 1], [1, 0]])
    check_exact(make(backend, x, float_dtype).argwhere(), expected, backend.int_dtype, what="float argwhere")
    ints = make(backend, x.astype(np.int64), backend.int_dtype)
    check_exact(ints.argwhere(), expected, backend.int_dtype, what="int argwhere")


@covers("int_gather", "bool_gather")
def test_gather_with_int_values(backend: Any, int_dtype: DType, rng: Any) -> None:
    x = rand_int(rng, (3, 5), int_dtype)
    idx = np.array([[4, 0], [1, 1], [3, 2]])
    out = make(backend, x, int_dtype).gather(1, _indices(backend, idx))
    check_exact(out, np.take_along_axis(x, idx, axis=1), int_dtype, what="gather")
    check_bool(
        make(backend, x > 2, DType.BOOL).gather(1, _indices(backend, idx)),
        np.take_along_axis(x > 2, idx, axis=1),
        what="bool gather",
    )
