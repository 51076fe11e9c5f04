"""0-d primitives (NumPy scalars included) and size-0 shapes.

NumPy ufuncs return NumPy scalars (``np.float32(1.0)``) for 0-d inputs. The backend keeps them as
primitives rather than re-wrapping every result; these tests check that every kind of op accepts
them and that `*_shape` / `*_into_data` report rank 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn_ndarray import NdArray


@pytest.fixture
def scalar(B: NdArray) -> Any:
    zero_d = B.float_reshape(np.array([2.0], np.float32), ())
    return B.float_exp(zero_d)  # a NumPy scalar, not an ndarray


def test_ufunc_results_are_numpy_scalars_with_rank_0(B: NdArray, scalar: Any) -> None:
    assert isinstance(scalar, np.generic)
    assert B.float_shape(scalar) == ()
    data = B.float_into_data(scalar)
    assert data.shape == () and data.dtype is DType.F32 and float(data.array) == pytest.approx(np.exp(2.0))
    assert B.float_get_dtype(scalar) is DType.F32


def test_every_family_accepts_numpy_scalars(B: NdArray, scalar: Any) -> None:
    s = scalar
    assert B.float_add(s, s) == pytest.approx(2 * np.exp(2.0))
    assert B.float_add_scalar(s, 1.0).dtype == np.float32
    assert B.float_sum(s).shape == (1,) and B.float_mean(s).shape == (1,) and B.float_max(s).shape == (1,)
    assert B.float_reshape(s, (1, 1)).shape == (1, 1)
    assert B.float_permute(s, ()).shape == () and B.float_flip(s, ()).shape == ()
    assert B.float_expand(s, (2, 3)).shape == (2, 3)
    assert B.float_slice(s, ()).shape == ()
    assigned = B.float_slice_assign(s, (), np.float32(5.0))
    assert B.float_shape(assigned) == () and float(B.float_into_data(assigned).array) == 5.0
    assert B.float_cast(s, DType.F64).dtype == np.float64
    assert B.float_into_int(s, DType.I32).dtype == np.int32
    assert B.float_mask_fill(s, np.bool_(True), 1.0) == 1.0
    assert B.float_matmul(B.float_reshape(s, (1, 1)), np.ones((1, 2), np.float32)).shape == (1, 2)
    assert B.float_erf(s).shape == () and B.sigmoid(s).shape == () and B.gelu(s).shape == ()
    for name, args in [
        ("silu", ()),
        ("log_sigmoid", ()),
        ("softplus", (2.0,)),
        ("relu", ()),
        ("leaky_relu", (0.1,)),
        ("hard_sigmoid", (0.2, 0.5)),
    ]:
        assert np.shape(getattr(B, name)(s, *args)) == (), name
    assert np.shape(B.gelu_backward(s, s)) == () and np.shape(B.sigmoid_backward(s, s)) == ()
    b = B.float_greater_elem(s, 0.0)
    assert B.bool_shape(b) == () and B.bool_into_data(b).shape == () and B.bool_any(b).tolist() == [True]
    assert B.bool_not(b) == np.False_
    i = B.int_add(np.array(3), np.array(4))
    assert B.int_shape(i) == () and B.int_into_data(i).shape == () and B.int_sum(i).tolist() == [7]
    assert B.int_div(i, np.array(2)) == 3 and B.int_mean(i).tolist() == [7]


def test_size_zero_shapes(B: NdArray) -> None:
    d = B.default_device()
    e = B.float_zeros((0, 3), d, DType.F32)
    assert B.float_sum_dim(e, 0).tolist() == [[0.0, 0.0, 0.0]] and B.float_sum(e).tolist() == [0.0]
    assert B.float_add(e, np.ones(3, np.float32)).shape == (0, 3)
    assert B.float_cat([e, np.ones((2, 3), np.float32)], 0).shape == (2, 3)
    assert B.float_matmul(e, np.ones((3, 4), np.float32)).shape == (0, 4)
    assert (
        B.float_matmul(np.ones((2, 0), np.float32), np.ones((0, 4), np.float32)).tolist() == [[0.0] * 4] * 2
    )
    assert B.float_sort(e, 0, True).shape == (0, 3) and B.float_argsort(e, 1, False).shape == (0, 3)
    assert B.float_into_data(e).shape == (0, 3)
    assert B.float_scatter_add(0, e, np.zeros((0, 3), np.int64), np.zeros((0, 3), np.float32)).shape == (0, 3)
    assert B.float_select(np.ones((2, 3), np.float32), 0, np.zeros(0, np.int64)).shape == (0, 3)
    assert B.float_repeat_dim(e, 1, 2).shape == (0, 6)
    assert B.softmax(e, 1).shape == (0, 3)
    assert B.bool_argwhere(np.zeros((0, 2), bool)).shape == (0, 2)
    assert B.int_sum(np.zeros(0, np.int32)).tolist() == [0]
    assert B.float_cumsum(e, 0).shape == (0, 3)
