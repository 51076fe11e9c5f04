"""Reductions, including the split path for long dims, NaN handling and cumsum."""

from __future__ import annotations

import numpy as np
import pytest

from burn.foundations.dtype import DType


@pytest.mark.parametrize(
    "shape,dim", [((4, 7), 0), ((4, 7), 1), ((3, 5000), 1), ((5000, 3), 0), ((2, 3, 4), 1)]
)
def test_float_reductions(B, up, down, rng, shape, dim):
    x = rng.standard_normal(shape).astype(np.float32)
    t = up(x)
    np.testing.assert_allclose(down(B.float_sum_dim(t, dim)), x.sum(dim, keepdims=True), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(
        down(B.float_mean_dim(t, dim)), x.mean(dim, keepdims=True), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_array_equal(down(B.float_max_dim(t, dim)), x.max(dim, keepdims=True))
    np.testing.assert_array_equal(down(B.float_argmin(t, dim)), x.argmin(dim, keepdims=True))
    values, idx = B.float_max_dim_with_indices(t, dim)
    np.testing.assert_array_equal(down(idx), x.argmax(dim, keepdims=True))
    np.testing.assert_array_equal(down(values), x.max(dim, keepdims=True))


def test_full_reduction_of_a_view(B, up, down, rng):
    x = rng.standard_normal((300, 40))
    t = B.float_permute(up(x), (1, 0))
    out = down(B.float_sum(t))
    assert out.shape == (1,)
    np.testing.assert_allclose(out, [x.sum()], rtol=1e-10)


def test_argmax_first_and_nan(B, up, down):
    x = np.array([[1.0, 3.0, 3.0, 0.0], [1.0, np.nan, 5.0, np.nan]], np.float32)
    np.testing.assert_array_equal(down(B.float_argmax(up(x), 1)), [[1], [1]])
    assert np.isnan(down(B.float_max_dim(up(x), 1))[1, 0])
    long = np.zeros(3000, np.float32)
    long[[2500, 2700]] = 7.0
    assert down(B.float_argmax(up(long), 0))[0] == 2500  # across chunks, the first one wins


def test_int_and_bool_reductions(B, up, down):
    x = np.array([[3, -2, 7], [0, 5, -9]], np.int32)
    np.testing.assert_array_equal(down(B.int_sum_dim(up(x), 1)), x.sum(1, keepdims=True))
    np.testing.assert_array_equal(down(B.int_prod(up(x))), [x.prod()])
    np.testing.assert_array_equal(down(B.int_mean_dim(up(x), 1)), np.floor_divide(x.sum(1, keepdims=True), 3))
    assert B.int_get_dtype(B.int_argmax(up(x), 0)) is B.int_dtype
    m = np.array([[True, False], [False, False]])
    np.testing.assert_array_equal(down(B.bool_any_dim(up(m), 1)), [[True], [False]])
    np.testing.assert_array_equal(down(B.bool_all(up(m))), [False])
    np.testing.assert_array_equal(down(B.bool_any(up(np.zeros((0, 3), bool)))), [False])


def test_cumsum_along_each_dim(B, up, down, rng):
    x = rng.integers(-5, 5, (3, 4, 5)).astype(np.int64)
    for dim in range(3):
        np.testing.assert_array_equal(down(B.int_cumsum(up(x), dim)), np.cumsum(x, dim))
    f = rng.standard_normal((4, 6)).astype(np.float32)
    np.testing.assert_allclose(
        down(B.float_cumsum(B.float_permute(up(f), (1, 0)), 0)), np.cumsum(f.T, 0), rtol=1e-5
    )


def test_empty_max_raises(B, up):
    with pytest.raises(ValueError, match="empty"):
        B.float_max_dim(up(np.zeros((2, 0), np.float32)), 1)


def test_sum_keeps_dtype(B, up):
    assert B.int_get_dtype(B.int_sum(up(np.array([100, 100], np.int8)))) is DType.I8
