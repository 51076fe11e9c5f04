"""burn-ndarray's quantized Linears (`burn_ndarray.ops.quantization`). The dynamic int8 one is
bit for bit the contract default's result on each of its paths (the AVX2 int8 GEMM where the CPU
has it, and the portable ones, forced: integer dot products for few rows, the exact float32 GEMM
in chunks for more), including sums over more features than one exact chunk holds; the
weight-only one is the default's product within float32 sums."""

from __future__ import annotations

import numpy as np
import pytest

from burn.backend.ops.quantization import QuantizationOps as Contract
from burn.foundations.dtype import DType
from burn_ndarray import NdArray
from burn_ndarray.ops import quantization as ndarray_quantization
from burn_ndarray.ops.quantization import EXACT_TERMS, GEMV_ROWS, WEIGHT_GEMV_ROWS


@pytest.mark.parametrize(
    "shape",
    [
        (1, 8, 3),
        (GEMV_ROWS - 1, 130, 33),
        (GEMV_ROWS, 64, 17),
        (40, EXACT_TERMS + 7, 9),
        (3, 2 * EXACT_TERMS + 1, 5),
    ],
    ids=str,
)
@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("portable", [False, True], ids=["native", "portable"])
def test_quantized_linear_is_the_default_bit_for_bit(
    shape: tuple[int, int, int], with_bias: bool, portable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ndarray_quantization, "FORCE_PORTABLE", portable)
    m, k, n = shape
    rng = np.random.default_rng(m * 7 + k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    x[0] = 0.0  # a zero row: scale 1
    x[-1] = np.abs(x[-1])  # all-positive sums, the largest the weight allows below
    w = rng.integers(-127, 128, size=(n, k)).astype(np.int8)
    w[0] = 127
    scales = rng.uniform(0.001, 0.02, size=n).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    backend = NdArray()
    got = backend.quantized_linear(x, w, scales, bias)
    expected = Contract.quantized_linear(backend, x, w, scales, bias)
    assert got.dtype == np.float32 and got.shape == (m, n)
    np.testing.assert_array_equal(got, expected)


def test_batch_dims_and_one_weight_scale() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 20, 64)).astype(np.float32)
    w = rng.integers(-127, 128, size=(5, 64)).astype(np.int8)
    scale = np.full(1, 0.01, np.float32)
    backend = NdArray()
    got = backend.quantized_linear(x, w, scale, None)
    assert got.shape == (2, 20, 5)
    np.testing.assert_array_equal(got, Contract.quantized_linear(backend, x, w, scale, None))


def test_other_dtypes_take_the_default() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 16))  # float64
    w = rng.integers(-127, 128, size=(3, 16)).astype(np.int8)
    scales = np.full(3, 0.01, np.float32)
    got = NdArray().quantized_linear(x, w, scales, None)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, Contract.quantized_linear(NdArray(), x, w, scales, None))


@pytest.mark.parametrize("affine", [False, True], ids=["symmetric", "affine"])
def test_quantize_and_dequantize_are_the_defaults_bit_for_bit(affine: bool) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 16)).astype(np.float32)
    scales = rng.uniform(0.001, 0.1, size=(1, 4, 1)).astype(np.float32)
    zp = rng.integers(-10, 10, size=(1, 4, 1)).astype(np.int8) if affine else None
    backend = NdArray()
    q = backend.quantize_into_int(x, scales, zp, -128, 127, DType.I8)
    expected = Contract.quantize_into_int(backend, x, scales, zp, -128, 127, DType.I8)
    assert q.dtype == np.int8
    np.testing.assert_array_equal(q, expected)
    back = backend.dequantize(q, scales, zp, DType.F32)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, Contract.dequantize(backend, q, scales, zp, DType.F32))


@pytest.mark.parametrize("value", ["int8", "int4", "uint4"])
@pytest.mark.parametrize(
    "m, k, n, blocks, affine",
    [
        (1, 64, 5, 0, False),  # one scale, symmetric int8: the direct dot product
        (1, 128, 11, 4, True),  # one row, blocks of 32: packed rows four at a time and three single
        (1, 96, 8, 3, False),  # one row, symmetric blocks: packed rows four at a time only
        (WEIGHT_GEMV_ROWS - 1, 96, 33, 3, True),  # three blocks of four rows and three single
        (6, 64, 10, 1, False),  # a zero point-free int8 row with one scale, several input rows
        (WEIGHT_GEMV_ROWS, 64, 263, 2, False),  # GEMM over three panels of 100 rows
        (40, 50, 9, 1, True),  # rows padded from 50 to 64 (two blocks of 32 stored)
    ],
    ids=str,
)
def test_dequantized_linear_is_the_default(
    value: str, m: int, k: int, n: int, blocks: int, affine: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both paths of the weight-only Linear (a dequantized row dotted with the inputs, panels of
    dequantized rows through GEMM) give the contract default's product within float32 sums."""
    rng = np.random.default_rng(m * 31 + n)
    stored_k = 64 if k == 50 else k
    monkeypatch.setattr(ndarray_quantization, "PANEL_BYTES", 4 * stored_k * 100)
    lo, hi = {"int8": (-128, 128), "int4": (-8, 8), "uint4": (0, 16)}[value]
    q = rng.integers(lo, hi, size=(n, stored_k))
    packed = ((q[:, 0::2] & 15) | ((q[:, 1::2] & 15) << 4)).astype(np.uint8)
    stored = q.astype(np.int8) if value == "int8" else packed
    s_shape = (1,) if blocks == 0 else (n, 1) if blocks == 1 else (n, blocks, 1)
    if k == 50:
        s_shape = (n, 2, 1)
    scales = rng.uniform(0.01, 0.1, size=s_shape).astype(np.float32)
    zp_type = np.uint8 if value == "uint4" else np.int8
    zp = rng.integers(lo, hi, size=s_shape).astype(zp_type) if affine else None
    x = rng.standard_normal((m, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    backend = NdArray()
    got = backend.dequantized_linear(x, stored, scales, zp, value, bias)
    expected = Contract.dequantized_linear(backend, x, stored, scales, zp, value, bias)
    assert got.shape == expected.shape == (m, n) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * k)


def test_quantized_linear_sums_of_minus_128_weights_are_exact() -> None:
    """PyTorch's qint8 weights may hold -128 (`load_pytorch`): a full chunk of the largest
    products, -128 * 127 per term, still sums exactly on the GEMM path."""
    m, k = GEMV_ROWS, EXACT_TERMS
    x = np.ones((m, k), np.float32)  # every activation quantizes to 127
    w = np.full((2, k), -128, np.int8)
    w[1] = 127
    backend = NdArray()
    scales = np.ones(2, np.float32)
    got = backend.quantized_linear(x, w, scales, None)
    expected = Contract.quantized_linear(backend, x, w, scales, None)
    np.testing.assert_array_equal(got, expected)
    assert got[0, 0] == np.float32(-128 * 127 * k / 127)


def test_a_cpu_without_avx2_takes_the_portable_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """With llvmlite's host features saying no AVX2, nothing is packed and the result is still
    the default's."""
    from burn_ndarray.kernels import int8_gemm

    monkeypatch.setattr(int8_gemm, "HAS_AVX2", False)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((GEMV_ROWS + 3, 40)).astype(np.float32)
    w = rng.integers(-127, 128, size=(7, 40)).astype(np.int8)
    scales = np.full(7, 0.02, np.float32)
    backend = NdArray()
    got = backend.quantized_linear(x, w, scales, None)
    assert id(w) not in ndarray_quantization._PACKED
    np.testing.assert_array_equal(got, Contract.quantized_linear(backend, x, w, scales, None))


@pytest.mark.parametrize("sign", [8, 0], ids=["int4", "uint4"])
def test_packed_one_row_gemv_in_chunks_is_the_serial_kernel(sign: int) -> None:
    """The weight-only GEMV's parallel launcher (chunks of rows in a prange, whose bounds arrive
    as uint64) types and gives the serial kernel's one-row result, four rows at a time and single
    rows at chunk ends alike."""
    from burn_ndarray.kernels import quantization as kq

    rng = np.random.default_rng(sign)
    n, k, blocks = 22, 128, 4
    w = rng.integers(0, 256, size=(n, k // 2)).astype(np.uint8)
    scales = rng.uniform(0.01, 0.1, size=(n, blocks)).astype(np.float32)
    zps = rng.integers(0, 16, size=(n, blocks)).astype(np.int32)
    x = rng.standard_normal((1, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    serial = np.empty((1, n), np.float32)
    kq.weight_gemv_range(0, n, x, w, True, sign, scales, zps, bias, serial)
    chunked = np.empty((1, n), np.float32)
    kq.weight_gemv(3, x, w, True, sign, scales, zps, bias, chunked)
    np.testing.assert_allclose(chunked, serial, rtol=1e-6, atol=1e-6)
