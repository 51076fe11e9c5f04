"""bfloat16 results of float32 work (`burn_ndarray.ops.rounding`, `burn_ndarray.kernels.bfloat16`):
the compiled rounding is ml_dtypes' cast bit for bit (every bfloat16 and every rounding tie, NaN,
infinities, subnormals), ReLU and its gradient on bfloat16 bits give what widening, the float32
op and rounding give, at any thread count and in any layout; and the half paths of the ops that
use them (scalar arithmetic, matmul, sums, max pooling's gradient) keep their bits."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn_ndarray
from burn_ndarray import NdArray
from burn_ndarray.ops import rounding
from burn_ndarray.runtime import split
from burn_ndarray.runtime.dtypes import BF16


@pytest.fixture(params=[1, 2, 3], ids=["1-thread", "2-threads", "3-threads"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Split from 1024 elements per thread, at 1, 2 and 3 threads."""
    monkeypatch.setattr(split, "UFUNC_PER_THREAD", 1 << 10)
    monkeypatch.setattr(split, "NATIVE_UFUNC_PER_THREAD", 1 << 10)
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(request.param)
    yield request.param
    burn_ndarray.set_num_threads(before)


def every_bfloat16() -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(BF16)


def float32_bits() -> np.ndarray:
    """Every bfloat16 as the high half, with the low halves that decide rounding (0, 1, just below
    half, the tie, just above, all ones), then random bits: NaN payloads, subnormals, everything."""
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    rng = np.random.default_rng(0)
    random = rng.integers(0, 1 << 32, size=200_000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([(high[:, None] | low[None]).ravel(), random]).view(np.float32)


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint16)


def test_rounding_is_ml_dtypes_cast_bit_for_bit(threads: int) -> None:
    values = float32_bits()
    with np.errstate(invalid="ignore", over="ignore"):
        want = values.astype(BF16)
    got = rounding.to_dtype(values, BF16)
    assert got.dtype == BF16 and np.array_equal(bits(got), bits(want))
    nan = np.isnan(values)
    assert set(bits(got)[nan].tolist()) == {0x7FC0, 0xFFC0}  # every NaN quiet, sign kept


@pytest.mark.parametrize("layout", ["C", "F", "channels-last", "strided"])
def test_rounding_keeps_the_layout(layout: str) -> None:
    x = np.random.default_rng(1).standard_normal((4, 16, 9, 11), dtype=np.float32)
    if layout == "F":
        x = np.asfortranarray(x)
    elif layout == "channels-last":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    elif layout == "strided":
        x = x[:, ::2]  # gaps in memory: NumPy's cast
    got = rounding.to_dtype(x, BF16)
    want = x.astype(BF16)
    assert got.strides == want.strides and np.array_equal(bits(got), bits(want))


def test_rounding_leaves_other_casts_to_numpy() -> None:
    small = np.linspace(-1, 1, 10, dtype=np.float32)
    assert np.array_equal(bits(rounding.to_dtype(small, BF16)), bits(small.astype(BF16)))
    wide = np.linspace(-1, 1, 10_000)
    assert rounding.to_dtype(wide, BF16).dtype == BF16
    same = np.ones(10_000, np.float32)
    assert rounding.to_dtype(same, np.float32) is same  # no copy
    assert rounding.to_dtype(same, np.float16).dtype == np.float16


def test_relu_and_its_gradient_on_bits_are_the_float32_ops_rounded(threads: int) -> None:
    x = np.concatenate([every_bfloat16(), np.random.default_rng(2).permutation(every_bfloat16())])
    grad = np.random.default_rng(3).permutation(x)
    wide = x.astype(np.float32)
    with np.errstate(invalid="ignore"):
        want = np.where((wide > 0) | np.isnan(wide), wide, np.float32(0)).astype(BF16)
        want_grad = np.where(wide > 0, grad.astype(np.float32), np.float32(0)).astype(BF16)
    got = NdArray().relu(x)
    assert got.dtype == BF16 and np.array_equal(bits(got), bits(want))
    assert bits(got)[bits(x) == 0x8000].tolist() == [0, 0]  # -0.0 -> +0.0, as maximum(x, 0)
    got_grad = NdArray().relu_backward(x, grad)
    assert got_grad.dtype == BF16 and np.array_equal(bits(got_grad), bits(want_grad))


def test_relu_on_bits_keeps_a_channels_last_layout() -> None:
    x = np.random.default_rng(4).standard_normal((2, 6, 20, 40), dtype=np.float32).astype(BF16)
    x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    out = NdArray().relu(x)
    assert out.strides == x.strides and np.array_equal(bits(out), bits(np.maximum(x, BF16.type(0))))
    # gradients in another layout than the output: the widening path, the same values
    grad = np.ascontiguousarray(x)
    assert rounding.relu_backward(x, grad) is None
    got = NdArray().relu_backward(x, grad)
    want = np.where(x.astype(np.float32) > 0, grad.astype(np.float32), 0).astype(BF16)
    assert np.array_equal(bits(got), bits(want))


@pytest.mark.parametrize(
    "op", ["float_add_scalar", "float_sub_scalar", "float_mul_scalar", "float_div_scalar"]
)
@pytest.mark.parametrize("scalar", [0.125, 0.0883883476, -3.0, 1e30])
def test_large_bfloat16_scalar_ops_are_ml_dtypes_loops_bit_for_bit(op: str, scalar: float) -> None:
    x = np.concatenate([every_bfloat16(), every_bfloat16()[::7]])
    ufunc = {"float_add_scalar": np.add, "float_sub_scalar": np.subtract}.get(
        op, np.multiply if op == "float_mul_scalar" else np.true_divide
    )
    with np.errstate(all="ignore"):
        want = ufunc(x, BF16.type(scalar))
        got = getattr(NdArray(), op)(x, scalar)
    assert got.dtype == BF16 and np.array_equal(bits(got), bits(want))


def test_half_matmul_sum_and_pool_gradient_round_the_float32_results() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 96), dtype=np.float32).astype(BF16)
    w = rng.standard_normal((96, 80), dtype=np.float32)
    b = NdArray()
    assert np.array_equal(
        bits(b.float_matmul(a, w.astype(BF16))),
        bits((a.astype(np.float32) @ w.astype(BF16).astype(np.float32)).astype(BF16)),
    )
    mixed = b.float_matmul(a, w)  # a half beside float32: float32, no rounding
    assert mixed.dtype == np.float32 and np.array_equal(mixed, a.astype(np.float32) @ w)
    big = rng.standard_normal((64, 32, 26, 26), dtype=np.float32).astype(BF16)
    sums = b.float_sum_dim(big, 0)
    want = b.float_sum_dim(big.astype(np.float32), 0).astype(BF16)
    assert sums.dtype == BF16 and sums.shape == (1, 32, 26, 26) and np.array_equal(bits(sums), bits(want))
    x = np.ascontiguousarray(
        rng.standard_normal((8, 26, 26, 32), dtype=np.float32).transpose(0, 3, 1, 2)
    ).astype(BF16)
    x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    values, indices = b.max_pool2d_with_indices(x, (2, 2), (2, 2), (0, 0), (1, 1))
    grad = rng.standard_normal(values.shape, dtype=np.float32).astype(BF16)
    got = b.max_pool2d_with_indices_backward(x, (2, 2), (2, 2), (0, 0), (1, 1), grad, indices)
    wide = b.max_pool2d_with_indices_backward(
        x.astype(np.float32), (2, 2), (2, 2), (0, 0), (1, 1), grad.astype(np.float32), indices
    )
    assert got.dtype == BF16 and np.array_equal(bits(got), bits(wide.astype(BF16)))


@pytest.mark.parametrize("op", ["float_add", "float_sub", "float_mul", "float_div"])
@pytest.mark.parametrize("rhs_shape", [(8, 1 << 15), (1 << 15,), (8, 1)], ids=["same", "row", "column"])
def test_large_bfloat16_arithmetic_is_ml_dtypes_loops_bit_for_bit(
    op: str, rhs_shape: tuple, threads: int
) -> None:
    rng = np.random.default_rng(6)
    lhs = rng.choice(every_bfloat16(), size=(8, 1 << 15))  # the threaded sizes too
    rhs = rng.choice(every_bfloat16(), size=rhs_shape)
    ufunc = {"float_add": np.add, "float_sub": np.subtract, "float_mul": np.multiply}.get(op, np.true_divide)
    backend = NdArray()
    backend.float_cast(lhs[:1, :1].astype(np.float32), burn_ndarray.NdArray.float_get_dtype(backend, lhs))
    with np.errstate(all="ignore"):
        want = ufunc(lhs, rhs)
        got = getattr(backend, op)(lhs, rhs)
    assert got.dtype == BF16 and got.shape == want.shape and np.array_equal(bits(got), bits(want))


def test_the_first_bfloat16_cast_keeps_the_arithmetic_wrappers_at_one_thread() -> None:
    from burn_ndarray.ops import float as float_ops

    before = burn_ndarray.get_num_threads()
    try:
        burn_ndarray.set_num_threads(1)
        bound = float_ops.ThreadedFloatOps.__dict__.get("float_add")
        assert bound is None or float_ops._bfloat16_seen  # bare np.add until bfloat16 is used
        from burn.foundations.dtype import DType

        NdArray().float_cast(np.ones(3, np.float32), DType.BF16)
        assert float_ops._bfloat16_seen and "float_add" in float_ops.ThreadedFloatOps.__dict__
        assert "float_exp" not in float_ops.ThreadedFloatOps.__dict__  # only the arithmetic
    finally:
        burn_ndarray.set_num_threads(before)


@pytest.mark.parametrize("width", [1, 3, 256, 1024, 5000])
def test_bias_row_add_is_ml_dtypes_loop_bit_for_bit(threads: int, width: int) -> None:
    """``x + row`` (a Linear's bias add under autocast) in one compiled pass: every bfloat16 (NaN
    payloads, infinities, subnormals, -0.0) against random rows holding infinities, zeros of both
    signs and subnormals, so that inf - inf, overflow and ties occur; ml_dtypes' bits."""
    rng = np.random.default_rng(7)
    x = np.concatenate([every_bfloat16(), rng.permutation(every_bfloat16())])
    x = x[: x.size // width * width].reshape(-1, width)
    row = rng.standard_normal(width, dtype=np.float32).astype(BF16)
    specials = np.array([0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x8001, 0x7F7F, 0xFF7F], np.uint16)
    take = rng.integers(0, width, size=min(width, 16))
    row.view(np.uint16)[take] = specials[np.arange(take.size) % specials.size]
    got = rounding.add_row(x, row)
    assert got is not None and got.dtype == BF16 and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = x + row
    assert np.array_equal(bits(got), bits(want))
    with np.errstate(all="ignore"):  # the op routes a bfloat16 bias row here
        assert np.array_equal(bits(NdArray().float_add(x, row)), bits(want))


def test_bias_row_add_leaves_nan_rows_and_other_layouts_to_the_widening_path() -> None:
    x = np.random.default_rng(8).standard_normal((64, 128), dtype=np.float32).astype(BF16)
    nan_row = np.zeros(128, BF16)
    nan_row.view(np.uint16)[5] = 0xFFC1  # a negative NaN: ml_dtypes keeps the row's NaN
    x.view(np.uint16)[3, 5] = 0x7FC0  # beside a positive one in x
    assert rounding.add_row(x, nan_row) is None
    got = NdArray().float_add(x, nan_row)
    assert np.array_equal(bits(got), bits(x + nan_row)) and bits(got)[3, 5] == 0xFFC0
    assert rounding.add_row(np.asfortranarray(x), x[0]) is None  # not C-ordered
    assert rounding.add_row(x, x[0].astype(np.float32)) is None  # a float32 row: float32 result
    assert rounding.add_row(x[:2], x[0]) is None  # small: ml_dtypes' loop


def test_gelu_and_its_gradient_on_bfloat16_are_the_float32_kernels_widened(threads: int) -> None:
    """GELU of every bfloat16 (NaN, infinities, subnormals) in one pass: the bits of widening, the
    float32 kernel and rounding; its gradient beside a float32 gradient: the float32 kernel's."""
    from burn_ndarray.ops.activation import NATIVE_PER_THREAD, _compiled

    x = np.concatenate([every_bfloat16(), np.random.default_rng(9).permutation(every_bfloat16())])
    wide = x.astype(np.float32)
    want = _compiled("gelu", wide, None, False, NATIVE_PER_THREAD)
    got = rounding.gelu(x)
    assert got is not None and got.dtype == BF16
    assert np.array_equal(bits(got), bits(want.astype(BF16)))
    assert np.array_equal(bits(NdArray().gelu(x)), bits(got))
    grad = np.random.default_rng(10).standard_normal(x.size, dtype=np.float32)
    want_grad = _compiled("gelu_backward", wide, grad, False, NATIVE_PER_THREAD)
    got_grad = rounding.gelu_backward(x, grad)
    assert got_grad is not None and got_grad.dtype == np.float32
    assert np.array_equal(got_grad.view(np.uint32), want_grad.view(np.uint32))
    assert np.array_equal(NdArray().gelu_backward(x, grad).view(np.uint32), got_grad.view(np.uint32))


def test_gelu_on_bfloat16_keeps_a_channels_last_layout_and_refuses_mixed_layouts() -> None:
    x = np.random.default_rng(11).standard_normal((2, 6, 20, 40), dtype=np.float32).astype(BF16)
    x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    out = rounding.gelu(x)
    assert out is not None and out.strides == x.strides
    assert np.array_equal(bits(out), bits(rounding.gelu(np.ascontiguousarray(x))))
    grad = np.ones(x.shape, np.float32)  # C order beside a channels-last x: the caller's path
    assert rounding.gelu_backward(x, grad) is None
    assert rounding.gelu_backward(x, np.ones(x.shape, BF16)) is None  # not float32


@pytest.mark.parametrize("channels", [1, 32])
def test_half_conv2d_input_gradient_is_the_float32_one_rounded(channels: int) -> None:
    """The bfloat16 input gradient never reads x's values (a stand-in of its shape runs): the
    float32 gradient of the widened operands, rounded once."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, channels, 14, 14), dtype=np.float32).astype(BF16)
    weight = rng.standard_normal((32, channels, 3, 3), dtype=np.float32).astype(BF16)
    grad = rng.standard_normal((4, 32, 14, 14), dtype=np.float32).astype(BF16)
    b = NdArray()
    args = ((1, 1), (1, 1), (1, 1), 1)
    got = b.conv2d_x_backward(x, weight, grad, *args)
    wide = [a.astype(np.float32) for a in (x, weight, grad)]
    want = b.conv2d_x_backward(*wide, *args)
    assert got.dtype == BF16 and got.shape == x.shape
    assert np.array_equal(bits(got), bits(want.astype(BF16)))
