"""Indexing ops of every kind: gather and gather_nd, scatter and scatter_nd (every mode),
select, select_add and select_assign, mask_where, mask_fill, mask_select, one_hot.
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
    each_kind,
    f64,
    kinds,
    make,
    make_indices,
    rand_any,
    rand_bool,
    rand_int,
)


def _check(out: Any, expected: np.ndarray, dtype: DType, what: str, terms: int = 1) -> None:
    if dtype.is_float:
        check_float(out, f64(expected), dtype, terms=terms, what=what)
    else:
        check_exact(out, expected, dtype, what=what)


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
    out = make(backend, x, any_dtype).gather(dim, make_indices(backend, idx))
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
    out = t.scatter(dim, make_indices(backend, idx), make(backend, values, numeric_dtype))
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
    out = make(backend, x, any_dtype).select(dim, make_indices(backend, idx))
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
    out = t.select_add(dim, make_indices(backend, idx), make(backend, values, numeric_dtype))
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


@covers("int_gather", "bool_gather")
def test_gather_with_int_values(backend: Any, int_dtype: DType, rng: Any) -> None:
    x = rand_int(rng, (3, 5), int_dtype)
    idx = np.array([[4, 0], [1, 1], [3, 2]])
    out = make(backend, x, int_dtype).gather(1, make_indices(backend, idx))
    check_exact(out, np.take_along_axis(x, idx, axis=1), int_dtype, what="gather")
    check_bool(
        make(backend, x > 2, DType.BOOL).gather(1, make_indices(backend, idx)),
        np.take_along_axis(x > 2, idx, axis=1),
        what="bool gather",
    )


# -- gather_nd / scatter_nd -------------------------------------------------------------------
ND_CASES = [((2, 3), [[1, 0], [0, 2], [1, 0]]), ((3, 2), [[2], [0]]), ((2, 2, 2), [[[1, 1]], [[0, 1]]])]


@covers(*each_kind("gather_nd"))
@pytest.mark.parametrize(("shape", "indices"), ND_CASES, ids=str)
def test_gather_nd(backend: Any, rng: Any, shape: tuple[int, ...], indices: list[Any]) -> None:
    idx = np.asarray(indices)
    for dtype in kinds(backend):
        x = rand_any(rng, shape, dtype)
        out = make(backend, x, dtype).gather_nd(make_indices(backend, idx))
        check_exact(out, x[tuple(np.moveaxis(idx, -1, 0))], dtype, what=f"gather_nd {dtype.value}")


def _np_scatter_nd(x: np.ndarray, idx: np.ndarray, values: np.ndarray, mode: str) -> np.ndarray:
    out = x.astype(np.float64).copy()
    k = idx.shape[-1]
    for pos, v in zip(idx.reshape(-1, k), values.reshape(-1, *x.shape[k:]), strict=True):
        key = tuple(pos)
        if mode == "add":
            out[key] = out[key] + v
        elif mode == "mul":
            out[key] = out[key] * v
        elif mode == "max":
            out[key] = np.maximum(out[key], v)
        elif mode == "min":
            out[key] = np.minimum(out[key], v)
        else:
            out[key] = v
    return out


@covers("float_scatter_nd", "int_scatter_nd")
@pytest.mark.parametrize("mode", ["add", "mul", "max", "min", "assign"])
@pytest.mark.parametrize(("shape", "indices"), ND_CASES[:2], ids=str)
def test_scatter_nd(backend: Any, rng: Any, mode: str, shape: tuple[int, ...], indices: list[Any]) -> None:
    idx = np.asarray(indices)
    for dtype in (backend.float_dtype, backend.int_dtype):
        x = rand_any(rng, shape, dtype)
        values = rand_any(rng, (*idx.shape[:-1], *shape[idx.shape[-1] :]), dtype)
        out = make(backend, x, dtype).scatter_nd(
            make_indices(backend, idx), make(backend, values, dtype), mode
        )
        expected = _np_scatter_nd(x, idx, values, mode)
        if dtype.is_float:
            check_float(out, expected, dtype, what=f"scatter_nd {mode}")
        else:
            check_exact(out, expected.astype(dtype.numpy), dtype, what=f"scatter_nd {mode}")


def test_scatter_nd_empty_and_errors(backend: Any) -> None:
    t = make(backend, np.ones((2, 3)), backend.float_dtype)
    none = make(backend, np.zeros((0, 3)), backend.float_dtype)
    check_exact(t.scatter_nd(make_indices(backend, np.zeros((0, 1))), none, "max"), np.ones((2, 3)), t.dtype)
    with pytest.raises(ValueError, match="unknown mode 'sum'"):
        t.scatter_nd([[0]], make(backend, np.ones((1, 3)), backend.float_dtype), "sum")
    with pytest.raises(Exception, match="values should have shape"):
        t.scatter_nd([[0]], make(backend, np.ones((3,)), backend.float_dtype))
    with pytest.raises(Exception, match="K <= rank"):
        t.gather_nd([[0, 0, 0]])


# -- assign modes of scatter / select --------------------------------------------------------------
@covers(*each_kind("scatter_assign"))
def test_scatter_assign(backend: Any, rng: Any) -> None:
    idx = np.array([[2, 0], [1, 1]])  # row 1 writes column 1 twice: the last write wins
    for dtype in kinds(backend):
        x = rand_any(rng, (2, 3), dtype)
        v = rand_any(rng, (2, 2), dtype)
        expected = x.copy()
        for i in range(2):
            for j in range(2):
                expected[i, idx[i, j]] = v[i, j]
        out = make(backend, x, dtype).scatter(
            1, make_indices(backend, idx), make(backend, v, dtype), mode="assign"
        )
        check_exact(out, expected, dtype, what=f"scatter assign {dtype.value}")
        w = rand_any(rng, (1, 3), dtype)  # indices smaller than the tensor outside `dim`
        out0 = make(backend, x, dtype).scatter(
            0, make_indices(backend, [[1, 0, 1]]), make(backend, w, dtype), mode="assign"
        )
        expected0 = x.copy()
        expected0[[1, 0, 1], [0, 1, 2]] = w[0]
        check_exact(out0, expected0, dtype, what=f"scatter assign dim 0 {dtype.value}")


@covers(*each_kind("select_assign"))
def test_select_assign(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, (2, 4), dtype)
        v = rand_any(rng, (2, 3), dtype)
        expected = x.copy()
        for j, col in enumerate([3, 0, 3]):
            expected[:, col] = v[:, j]
        out = make(backend, x, dtype).select_assign(1, [3, 0, 3], make(backend, v, dtype), mode="assign")
        check_exact(out, expected, dtype, what=f"select_assign {dtype.value}")
        none = make(backend, v[:, :0], dtype)
        check_exact(make(backend, x, dtype).select_assign(1, [], none, mode="assign"), x, dtype)


def test_scatter_mode_errors(backend: Any) -> None:
    t = make(backend, np.zeros((2, 3)), backend.float_dtype)
    v = make(backend, np.ones((2, 3)), backend.float_dtype)
    with pytest.raises(ValueError, match="scatter: unknown mode 'mul'"):
        t.scatter(0, make_indices(backend, np.zeros((2, 3))), v, mode="mul")
    with pytest.raises(Exception, match="values should have shape"):
        t.select_assign(0, [0], v, mode="assign")


@covers("bool_argwhere", "float_gather_nd", "int_gather_nd", "bool_gather_nd")
@pytest.mark.parametrize(
    ("shape", "mask_shape"), [((2, 3), (2, 3)), ((2, 3), (3,)), ((), ()), ((0, 2), (0, 2))], ids=str
)
def test_mask_select(backend: Any, rng: Any, shape: Any, mask_shape: Any) -> None:
    mask = rng.random(mask_shape) < 0.5
    for dtype in kinds(backend):
        x = rand_any(rng, shape, dtype)
        out = make(backend, x, dtype).mask_select(make(backend, mask, DType.BOOL))
        full = np.broadcast_to(mask, np.broadcast_shapes(x.shape, mask.shape))
        check_exact(out, np.broadcast_to(x, full.shape)[full], dtype, what=f"mask_select {dtype.value}")


@covers("int_equal", "float_mask_fill", "int_mask_fill")
def test_one_hot(backend: Any) -> None:
    classes = np.array([[0, 2], [1, 2]])
    expected = np.eye(3, dtype=np.int64)[classes]
    check_exact(make(backend, classes, backend.int_dtype).one_hot(3), expected, backend.int_dtype)
    fdt = backend.float_dtype
    check_exact(make(backend, classes.astype(np.float64), fdt).one_hot(3), expected.astype(np.float64), fdt)
    out = make(backend, np.array([-1, 0]), backend.int_dtype).one_hot_fill(3, 5, -1, axis=0)
    check_exact(out, np.array([[-1, 5], [-1, -1], [5, -1]]), backend.int_dtype, what="one_hot_fill axis 0")
    out = make(backend, np.array([2.0, -3.0]), fdt).one_hot_fill(3, 0.5, 0.25)
    check_exact(out, np.array([[0.25, 0.25, 0.5], [0.5, 0.25, 0.25]]), fdt, what="one_hot_fill float")
    check_exact(
        make(backend, np.zeros((0,), np.int64), backend.int_dtype).one_hot(2),
        np.zeros((0, 2)),
        backend.int_dtype,
    )
    with pytest.raises(ValueError, match=r"classes must lie in \[0, 3\)"):
        make(backend, np.array([3]), backend.int_dtype).one_hot(3)
    with pytest.raises(ValueError, match="cannot hold the fill value 0.5"):
        make(backend, np.array([0]), backend.int_dtype).one_hot_fill(2, 0.5)
