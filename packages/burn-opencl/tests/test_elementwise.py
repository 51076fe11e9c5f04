"""Elementwise kernels against NumPy: broadcasting, strided views, dtype promotion, int semantics."""

from __future__ import annotations

import numpy as np
import pytest

from burn.foundations.dtype import DType


def test_binary_broadcast_and_views(B, up, down, rng):
    a = rng.standard_normal((3, 1, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(down(B.float_add(up(a), up(b))), a + b, rtol=1e-6)
    # A transposed view, a flipped view and a strided slice, combined without copies.
    m = rng.standard_normal((6, 8)).astype(np.float32)
    t = B.float_permute(up(m), (1, 0))
    f = B.float_flip(up(m.T.copy()), (0, 1))
    s = B.float_slice(up(np.repeat(m.T, 2, axis=1)), (slice(0, 8), slice(0, 12, 2)))
    out = down(B.float_mul(B.float_sub(t, f), s))
    np.testing.assert_allclose(out, (m.T - m.T[::-1, ::-1]) * np.repeat(m.T, 2, axis=1)[:, ::2], rtol=1e-5)


def test_expand_and_scalar_broadcast(B, up, down):
    row = up(np.arange(3, dtype=np.float32))
    wide = B.float_expand(row, (4, 3))
    assert B.float_shape(wide) == (4, 3)
    np.testing.assert_array_equal(down(B.float_add_scalar(wide, 1.5)), np.arange(3) + np.zeros((4, 1)) + 1.5)
    one = up(np.array([2.0], np.float32))
    np.testing.assert_array_equal(down(B.float_div(wide, one)), np.broadcast_to(np.arange(3) / 2, (4, 3)))


def test_incompatible_shapes_raise(B, up):
    with pytest.raises(ValueError, match="broadcast"):
        B.float_add(up(np.zeros((2, 3), np.float32)), up(np.zeros((4,), np.float32)))


def test_promotion_to_wider(B, up, down):
    a = up(np.array([1.5, 2.5], np.float32))
    b = up(np.array([1.0, 2.0], np.float64))
    out = B.float_add(a, b)
    assert B.float_get_dtype(out) is DType.F64
    np.testing.assert_array_equal(down(out), [2.5, 4.5])


def test_float_unary_and_remainder(B, up, down, rng):
    x = rng.standard_normal(50).astype(np.float64) * 3
    for op, ref in [
        (B.float_exp, np.exp),
        (B.float_tanh, np.tanh),
        (B.float_round, np.round),
        (B.float_sign, np.sign),
        (B.float_floor, np.floor),
        (B.float_abs, np.abs),
        (B.float_neg, np.negative),
    ]:
        np.testing.assert_allclose(down(op(up(x))), ref(x), rtol=1e-12, atol=1e-12, err_msg=op.__name__)
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5])
    np.testing.assert_array_equal(down(B.float_round(up(halves))), [0.0, 2.0, 2.0, -0.0, -2.0])
    y = np.array([2.0, -2.0, 3.0, -0.5] * 3)
    xs = np.array([-7.0, 7.0, 5.5, 1.25, -7.0, 7.0, -5.5, -1.25, 0.0, 3.0, -3.0, 2.0])
    np.testing.assert_allclose(down(B.float_remainder(up(xs), up(y))), np.remainder(xs, y))


def test_int_floor_division_and_remainder(B, up, down):
    a = np.array([-7, 7, -7, 7, 5, 0, -128], np.int64)
    b = np.array([2, -2, -2, 2, 0, 3, -1], np.int64)
    expect_div = np.array([-4, -4, 3, 3, 0, 0, 128])
    expect_rem = np.array([1, -1, -1, 1, 0, 0, 0])
    np.testing.assert_array_equal(down(B.int_div(up(a), up(b))), expect_div)
    np.testing.assert_array_equal(down(B.int_remainder(up(a), up(b))), expect_rem)
    i8 = up(np.array([-128, 100], np.int8))
    assert B.int_get_dtype(B.int_add_scalar(i8, 1)) is DType.I8
    np.testing.assert_array_equal(
        down(B.int_div_scalar(i8, -1)), np.array([-128, -100], np.int8)
    )  # wraps like C


def test_int_scalar_compare_out_of_range(B, up, down):
    # An int8 tensor compared with 1000: the scalar must not wrap to -24.
    x = up(np.array([-100, 0, 100], np.int8))
    np.testing.assert_array_equal(down(B.int_lower_elem(x, 1000)), [True, True, True])
    np.testing.assert_array_equal(down(B.int_greater_elem(x, -1000)), [True, True, True])


def test_casts_and_masks(B, up, down):
    x = np.array([-1.7, 0.0, 2.9, 3.5], np.float32)
    np.testing.assert_array_equal(down(B.float_into_int(up(x), DType.I32)), [-1, 0, 2, 3])
    mask = np.array([True, False, True, False])
    np.testing.assert_array_equal(down(B.bool_into_float(up(mask), DType.F32)), [1, 0, 1, 0])
    np.testing.assert_array_equal(down(B.float_mask_fill(up(x), up(mask), 9.0)), np.where(mask, 9.0, x))
    other = np.array([10.0], np.float32)
    np.testing.assert_array_equal(
        down(B.float_mask_where(up(x), up(mask), up(other))), np.where(mask, 10.0, x)
    )
    np.testing.assert_array_equal(down(B.bool_not(up(mask))), ~mask)
    np.testing.assert_array_equal(down(B.bool_xor(up(mask), up(mask[::-1].copy()))), mask ^ mask[::-1])


def test_float16_storage_path(B, dev):
    """float16 is stored as half and computed in float: exercised on the runtime directly, since a
    device without cl_khr_fp16 does not declare it."""
    from burn_opencl import layout
    from burn_opencl.kernels import elementwise as ew

    rt = B.runtime(dev)
    a = np.array([0.1, 1.5, -2.25, 65504.0], np.float16)
    t = layout.from_numpy(rt, a, DType.F16)
    out = ew.run(ew.OPS["float_mul_scalar"], [t], None, (0.5,))
    assert out.dtype is DType.F16
    np.testing.assert_array_equal(layout.into_data(out).array, a * np.float16(0.5))
    wide = layout.cast(t, DType.F32)
    np.testing.assert_array_equal(layout.into_data(wide).array, a.astype(np.float32))


def test_fill_arange_and_repeat(B, dev, down):
    np.testing.assert_array_equal(down(B.float_full((2, 3), 2.5, dev, DType.F32)), np.full((2, 3), 2.5))
    np.testing.assert_array_equal(down(B.int_arange(3, 20, 4, dev, DType.I64)), np.arange(3, 20, 4))
    np.testing.assert_array_equal(down(B.int_arange(5, 0, -2, dev, DType.I32)), np.arange(5, 0, -2))
    np.testing.assert_array_equal(down(B.bool_full((2,), True, dev)), [True, True])
    x = B.float_from_data(__import__("burn").tensor.TensorData(np.arange(6.0).reshape(2, 3)), dev)
    np.testing.assert_array_equal(
        down(B.float_repeat_dim(x, 1, 3)), np.tile(np.arange(6.0).reshape(2, 3), (1, 3))
    )
    np.testing.assert_array_equal(
        down(B.float_repeat_dim(x, 0, 2)), np.tile(np.arange(6.0).reshape(2, 3), (2, 1))
    )
