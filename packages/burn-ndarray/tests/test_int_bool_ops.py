"""Int and bool ops at the primitive level."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.distribution import Bernoulli, Normal, Uniform
from burn.foundations.dtype import DType
from burn_ndarray import NdArray

INTS = [DType.I64, DType.I32, DType.I16, DType.I8, DType.U8]


def test_int_round_trip_and_kind_check(B: NdArray) -> None:
    data = TensorData([[1, 2], [3, 4]], dtype="int32")
    p = B.int_from_data(data, B.default_device())
    assert B.int_into_data(p) == data and B.int_get_dtype(p) is DType.I32 and B.int_shape(p) == (2, 2)
    with pytest.raises(TypeError, match="int_from_data"):
        B.int_from_data(TensorData([1.0]), B.default_device())


def test_floor_division_and_remainder_follow_python(B: NdArray) -> None:
    a = np.array([7, -7, 7, -7, 5], np.int64)
    b = np.array([2, 2, -2, -2, 0], np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # division by zero gives 0, silently
        assert B.int_div(a, b).tolist() == [3, -4, -4, 3, 0]
        assert B.int_remainder(a, b).tolist() == [1, 1, -1, -1, 0]
        assert B.int_div_scalar(a, 0).tolist() == [0] * 5
        assert B.int_remainder_scalar(a, 0).tolist() == [0] * 5
    assert B.int_div_scalar(a, -2).tolist() == [-4, 3, -4, 3, -3]
    assert B.int_remainder_scalar(a, 3).tolist() == [1, 2, 1, 2, 2]
    q, r = B.int_div(a[:4], b[:4]), B.int_remainder(a[:4], b[:4])
    assert np.array_equal(b[:4] * q + r, a[:4])


@pytest.mark.parametrize("dtype", INTS)
def test_int_ops_keep_the_int_type(B: NdArray, dtype: DType) -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=dtype.numpy)
    for got in [
        B.int_add(x, x),
        B.int_sub(x, x),
        B.int_mul(x, x),
        B.int_add_scalar(x, 3),
        B.int_sub_scalar(x, 1),
        B.int_mul_scalar(x, 2),
        B.int_div_scalar(x, 2),
        B.int_remainder_scalar(x, 4),
        B.int_abs(x),
        B.int_sum_dim(x, 0),
        B.int_sum(x),
        B.int_prod_dim(x, 1),
        B.int_prod(x),
        B.int_cumsum(x, 1),
        B.int_mean_dim(x, 1),
        B.int_mean(x),
        B.int_clamp(x, 2, 4),
        B.int_clamp_min(x, 2),
        B.int_clamp_max(x, 4),
        B.int_max_dim(x, 1),
        B.int_min(x),
        B.int_sign(x),
        B.int_mask_fill(x, x > 2, 0),
    ]:
        assert got.dtype == dtype.numpy
    assert B.int_sum(x).tolist() == [21] and B.int_prod(x).tolist() == [
        np.array(720).astype(dtype.numpy).item()
    ]  # wraps like the type
    assert B.int_mean_dim(x, 1).tolist() == [[2], [5]] and B.int_mean(x).tolist() == [3]
    assert B.int_clamp(x, 2, 4).tolist() == [[2, 2, 3], [4, 4, 4]]
    assert B.int_cumsum(x, 1).tolist() == [[1, 3, 6], [4, 9, 15]]


def test_int_mean_floors(B: NdArray) -> None:
    x = np.array([[-3, 0], [1, 2]], np.int64)
    assert B.int_mean_dim(x, 1).tolist() == [[-2], [1]]
    assert B.int_mean(np.zeros((0,), np.int64)).tolist() == [0]


def test_int_neg_sign_compare(B: NdArray) -> None:
    x = np.array([-2, 0, 3], np.int32)
    assert B.int_neg(x).tolist() == [2, 0, -3] and B.int_sign(x).tolist() == [-1, 0, 1]
    assert B.int_greater_elem(x, 0).tolist() == [False, False, True]
    assert B.int_equal(x, x[::-1]).tolist() == [False, True, False]
    assert B.int_not_equal_elem(x, 0).tolist() == [True, False, True]
    assert B.int_lower_equal(x, np.zeros(3, np.int32)).tolist() == [True, True, False]
    assert B.int_greater_equal_elem(np.array([1], np.int8), 1000).tolist() == [False]  # exact, no wrap


def test_int_sort_argmax_and_arange(B: NdArray) -> None:
    x = np.array([[3, 1, 3, 2]], np.int16)
    values, indices = B.int_sort_with_indices(x, 1, True)
    assert values.tolist() == [[3, 3, 2, 1]] and indices.tolist() == [[0, 2, 3, 1]]
    assert values.dtype == np.int16 and indices.dtype == np.int64
    assert B.int_argmax(x, 1).tolist() == [[0]] and B.int_argmin(x, 1).tolist() == [[1]]
    assert B.int_arange(2, 11, 3, B.default_device(), DType.I32).tolist() == [2, 5, 8]
    assert B.int_into_float(x, DType.F16).dtype == np.float16
    assert B.int_cast(x, DType.U8).dtype == np.uint8


def test_int_indexing(B: NdArray) -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert B.int_select(x, 1, np.array([3, 0])).tolist() == [[3, 0], [7, 4], [11, 8]]
    got = B.int_select_add(x, 1, np.array([0, 0]), np.ones((3, 2), np.int32))
    assert got[:, 0].tolist() == [2, 6, 10] and got.dtype == np.int32
    assert B.int_gather(0, x, np.array([[2, 0, 1, 1]])).tolist() == [[8, 1, 6, 7]]
    assert B.int_mask_where(x, x > 5, -x).max() == 5
    assert (
        B.int_slice_assign(x, (slice(0, 1), slice(0, 4)), np.zeros((1, 4), np.int32))[0].tolist() == [0] * 4
    )


@pytest.mark.parametrize("dtype", INTS)
def test_int_random(dtype: DType) -> None:
    B = NdArray()
    B.seed(11)
    u = B.int_random((3000,), Uniform(0, 7), B.default_device(), dtype)
    assert u.dtype == dtype.numpy and u.min() >= 0 and u.max() <= 6 and len(np.unique(u)) == 7
    n = B.int_random((3000,), Normal(10.0, 2.0), B.default_device(), dtype)
    assert abs(n.mean() - 10.0) < 0.3
    b = B.int_random((3000,), Bernoulli(0.5), B.default_device(), dtype)
    assert set(np.unique(b).tolist()) == {0, 1}
    B.seed(11)
    assert np.array_equal(B.int_random((3000,), Uniform(0, 7), B.default_device(), dtype), u)


def test_bool_ops(B: NdArray) -> None:
    a = np.array([[True, False], [True, True]])
    b = np.array([[False, False], [True, False]])
    data = B.bool_into_data(a)
    assert data.dtype is DType.BOOL and B.bool_from_data(data, B.default_device()).tolist() == a.tolist()
    assert B.bool_not(a).tolist() == [[False, True], [False, False]]
    assert B.bool_and(a, b).tolist() == [[False, False], [True, False]]
    assert B.bool_or(a, b).tolist() == [[True, False], [True, True]]
    assert B.bool_xor(a, b).tolist() == [[True, False], [False, True]]
    assert B.bool_equal(a, b).tolist() == [[False, True], [True, False]]
    assert B.bool_not_equal(a, b).tolist() == [[True, False], [False, True]]
    assert B.bool_any(b).tolist() == [True] and B.bool_all(a).tolist() == [False]
    assert B.bool_any_dim(b, 1).tolist() == [[False], [True]] and B.bool_all_dim(a, 0).tolist() == [
        [True, False]
    ]
    assert B.bool_argwhere(a).tolist() == [[0, 0], [1, 0], [1, 1]] and B.bool_argwhere(a).dtype == np.int64
    assert B.bool_argwhere(np.zeros((2, 3), bool)).shape == (0, 2)
    assert B.bool_into_int(a, DType.I8).tolist() == [[1, 0], [1, 1]]
    assert B.bool_into_float(a, DType.BF16).astype(np.float32).tolist() == [[1, 0], [1, 1]]
    assert B.bool_select(a, 0, np.array([1, 1])).tolist() == [[True, True]] * 2
    assert B.bool_gather(1, a, np.array([[1], [0]])).tolist() == [[False], [True]]
    assert B.bool_mask_where(a, b, np.zeros_like(a)).tolist() == [[True, False], [False, True]]
    assert B.bool_repeat_dim(a, 1, 2).tolist() == [[True, False, True, False], [True, True, True, True]]
    assert B.bool_swap_dims(a, 0, 1).tolist() == a.T.tolist()
    assert B.bool_full((2,), True, B.default_device()).tolist() == [True, True]
    assert not B.bool_zeros((3,), B.default_device()).any() and B.bool_ones((3,), B.default_device()).all()
    assert B.bool_empty((0, 3), B.default_device()).shape == (0, 3)
    assert B.bool_cat([a, b], 1).shape == (2, 4) and B.bool_flip(a, (1,)).tolist() == [
        [False, True],
        [True, True],
    ]
    assert B.bool_expand(a[:1], (3, 2)).shape == (3, 2) and B.bool_permute(a, (1, 0)).tolist() == a.T.tolist()
    assert B.bool_slice(a, (slice(1, 2), slice(0, 2))).tolist() == [[True, True]]
    assert B.bool_slice_assign(a, (slice(0, 1), slice(0, 2)), b[:1]).tolist() == [
        [False, False],
        [True, True],
    ]
    assert B.bool_reshape(a, (4,)).tolist() == [True, False, True, True]
