"""Sorting is stable on large inputs with many ties, in both directions.

Small inputs cannot show an unstable sort: NumPy's and most libraries' unstable sorts switch to
insertion sort (stable) below a few dozen elements. These inputs have hundreds of elements along
the sorted dim and a handful of distinct values, so ties are everywhere and an unstable
algorithm (NumPy's default quicksort, a GPU bitonic sort) permutes the indices of equal values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, check_indices, f64, make, rand_grid, rand_int

# (shape, dim): a long 1-D tensor, and the long dim last and first of a 2-D one
CASES = [((700,), 0), ((3, 300), 1), ((300, 2), 0)]


def stable_order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable argsort; descending keeps equal values in their original order."""
    key = -f64(x) if descending else x
    return np.argsort(key, axis=dim, kind="stable")


def _check(backend: Any, x: np.ndarray, dtype: DType, dim: int, descending: bool) -> None:
    t = make(backend, x, dtype)
    order = stable_order(x, dim, descending)
    expected = np.take_along_axis(x, order, axis=dim)
    how = f"{'descending' if descending else 'ascending'}, shape {x.shape}, dim {dim}"
    values, indices = t.sort_with_indices(dim, descending=descending)
    check_exact(values, expected, dtype, what=f"sort_with_indices values ({how})")
    check_indices(indices, order, backend, what=f"sort_with_indices indices, stable ({how})")
    check_indices(t.argsort(dim, descending=descending), order, backend, what=f"argsort, stable ({how})")
    check_exact(t.sort(dim, descending=descending), expected, dtype, what=f"sort ({how})")


@covers("float_sort_with_indices", "float_argsort", "float_sort")
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_float_sort_is_stable_on_large_inputs(
    backend: Any, float_dtype: DType, descending: bool, rng: Any
) -> None:
    for shape, dim in CASES:
        _check(backend, rand_grid(rng, shape, float_dtype), float_dtype, dim, descending)


@covers("int_sort_with_indices", "int_argsort", "int_sort")
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_int_sort_is_stable_on_large_inputs(
    backend: Any, int_dtype: DType, descending: bool, rng: Any
) -> None:
    for shape, dim in CASES:
        _check(backend, rand_int(rng, shape, int_dtype, -4, 4), int_dtype, dim, descending)
