"""The branch-free select behind mask_where / mask_fill / relu_backward."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from burn_ndarray import NdArray
from burn_ndarray.ops.select import BRANCH_FREE_MIN, where

DTYPES = [
    np.float64,
    np.float32,
    np.float16,
    ml_dtypes.bfloat16,
    np.int64,
    np.int32,
    np.int16,
    np.int8,
    np.uint8,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [7, BRANCH_FREE_MIN * 2])
def test_matches_np_where_bit_for_bit(rng: np.random.Generator, dtype: type, size: int) -> None:
    a: np.ndarray = (rng.standard_normal(size) * 50).astype(dtype)
    b: np.ndarray = (rng.standard_normal(size) * 50).astype(dtype)
    mask = rng.random(size) < 0.5
    got = where(mask, a, b)
    want = np.where(mask, a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_broadcasting_scalars_and_special_values(rng: np.random.Generator) -> None:
    n = BRANCH_FREE_MIN
    a = rng.standard_normal((4, n)).astype(np.float32)
    a[0, :3] = [np.nan, -0.0, np.inf]
    mask = rng.random(n) < 0.5  # broadcast over rows
    got = where(mask, np.float32(-np.inf), a)
    assert got.shape == (4, n) and got.tobytes() == np.where(mask, np.float32(-np.inf), a).tobytes()
    column = rng.random((64, 1)) < 0.5  # mask [64, 1] against a row [1, n] and a scalar: [64, n]
    got = where(column, a[:1], np.float32(7.0))
    assert got.shape == (64, n) and got.tobytes() == np.where(column, a[:1], np.float32(7.0)).tobytes()
    mixed = where(mask, np.ones(n, np.float64), np.zeros(n, np.float32))
    assert mixed.dtype == np.float64 and np.array_equal(mixed, mask.astype(np.float64))


def test_mask_ops_use_it_on_large_random_masks(B: NdArray, rng: np.random.Generator) -> None:
    x = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    mask = rng.random((64, 64)) < 0.3
    got = B.float_mask_fill(x, mask, 2.5)
    assert got.dtype == ml_dtypes.bfloat16
    assert np.array_equal(got.astype(np.float32), np.where(mask, 2.5, x.astype(np.float32)))
    ints = rng.integers(-100, 100, (64, 64)).astype(np.int16)
    assert np.array_equal(B.int_mask_where(ints, mask, -ints), np.where(mask, -ints, ints))
    bools = rng.random((64, 64)) < 0.5
    assert np.array_equal(B.bool_mask_where(bools, mask, ~bools), np.where(mask, ~bools, bools))
    g = rng.standard_normal((64, 64)).astype(np.float32)
    out = B.relu(rng.standard_normal((64, 64)).astype(np.float32))
    assert np.array_equal(B.relu_backward(out, g), np.where(out > 0, g, 0))
