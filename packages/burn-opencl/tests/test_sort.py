"""Stable bitonic sort: ties keep their order, NaNs go last ascending and first descending."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_with_nan(B, up, down, rng, dim, descending):
    x = rng.integers(0, 4, (5, 7, 9)).astype(np.float32)
    x[0, 0, 0] = x[1, 2, 3] = np.nan
    values, idx = B.float_sort_with_indices(up(x), dim, descending)
    key = np.where(np.isnan(x), -np.inf, -x) if descending else x
    expect = np.argsort(key, axis=dim, kind="stable")
    np.testing.assert_array_equal(down(idx), expect)
    np.testing.assert_array_equal(down(values), np.take_along_axis(x, expect, dim))


def test_int_sort_long_line_and_view(B, up, down, rng):
    x = rng.integers(-100, 100, (3, 1000)).astype(np.int32)
    np.testing.assert_array_equal(down(B.int_argsort(up(x), 1, False)), np.argsort(x, 1, kind="stable"))
    t = B.int_permute(up(np.ascontiguousarray(x.T)), (1, 0))
    np.testing.assert_array_equal(down(B.int_sort(t, 1, True)), -np.sort(-x, 1))
