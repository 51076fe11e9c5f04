"""Sorting of float and int tensors: stable, ascending and descending, with indices; NaN last
when ascending; the indices of the top k (``argtopk``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, check_indices, f64, make, rand_grid, rand_int


def stable_order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable argsort; descending keeps equal values in their original order."""
    key = -x.astype(np.float64) if descending else x
    return np.argsort(key, axis=dim, kind="stable")


CASES = [((9,), 0), ((4, 6), 1), ((4, 6), 0), ((2, 3, 5), 2), ((2, 3, 5), 1), ((0, 4), 1), ((1,), 0)]


@covers("float_sort_with_indices", "float_sort", "float_argsort")
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize(("shape", "dim"), CASES, ids=str)
def test_float_sort(
    backend: Any, float_dtype: DType, shape: Any, dim: int, descending: bool, rng: Any
) -> None:
    x = rand_grid(rng, shape, float_dtype)  # many ties: stability is visible
    t = make(backend, x, float_dtype)
    order = stable_order(f64(x), dim, descending)
    expected = np.take_along_axis(x, order, axis=dim)
    values, indices = t.sort_with_indices(dim, descending=descending)
    check_exact(values, expected, float_dtype, what="sort_with_indices values")
    check_indices(indices, order, backend, what="sort_with_indices indices (stable)")
    check_exact(t.sort(dim, descending=descending), expected, float_dtype, what="sort")
    check_indices(t.argsort(dim, descending=descending), order, backend, what="argsort (stable)")


@covers("int_sort_with_indices", "int_sort", "int_argsort")
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize(("shape", "dim"), CASES, ids=str)
def test_int_sort(backend: Any, int_dtype: DType, shape: Any, dim: int, descending: bool, rng: Any) -> None:
    x = rand_int(rng, shape, int_dtype, -4, 4)
    t = make(backend, x, int_dtype)
    order = stable_order(x, dim, descending)
    expected = np.take_along_axis(x, order, axis=dim)
    values, indices = t.sort_with_indices(dim, descending=descending)
    check_exact(values, expected, int_dtype, what="sort_with_indices values")
    check_indices(indices, order, backend, what="sort_with_indices indices (stable)")
    check_exact(t.sort(dim, descending=descending), expected, int_dtype, what="sort")
    check_indices(t.argsort(dim, descending=descending), order, backend, what="argsort (stable)")


@covers("float_sort_with_indices", "float_sort", "float_argsort")
def test_sort_puts_nan_last(backend: Any, float_dtype: DType) -> None:
    x = np.array([3.0, np.nan, -1.0, 2.0, np.nan, -5.0])
    t = make(backend, x, float_dtype)
    check_exact(t.sort(0), np.sort(x), float_dtype, what="sort with NaN")
    check_indices(t.argsort(0), np.argsort(x, kind="stable"), backend, what="argsort with NaN")


@covers("float_sort", "float_sort_with_indices")
def test_sort_default_dim_is_last(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_grid(rng, (3, 4), float_dtype)
    t = make(backend, x, float_dtype)
    check_exact(t.sort(), np.sort(x, axis=-1, kind="stable"), float_dtype, what="sort()")
    check_exact(t.sort(-2), np.sort(x, axis=0, kind="stable"), float_dtype, what="sort(-2)")


@covers("float_sort_with_indices", "int_sort_with_indices")
def test_argtopk(backend: Any, rng: Any) -> None:
    for dtype in (backend.float_dtype, backend.int_dtype):
        x = rng.permutation(12).reshape(3, 4).astype(dtype.numpy)
        out = make(backend, x, dtype).argtopk(2, dim=1)
        check_indices(out, np.argsort(-x.astype(np.float64), axis=1, kind="stable")[:, :2], backend)
