"""burn-ndarray's static int8 Linear and conv2d (`burn_ndarray.ops.quantization`): their int32
sums are the exact integer products of the quantized input (zero point taken out) and the int8
weight, on each path (int8 dot products for few rows, the exact float32 GEMM for more, sums over
more than one exact chunk, the direct grouped kernels on centred integers for grouped and
depthwise layers), so the result is a NumPy emulation's epilogue bit for bit; inputs the fast
path does not take go to the contract's default."""

from __future__ import annotations

import numpy as np
import pytest

from burn.backend.ops.quantization import QuantizationOps as Contract
from burn_ndarray import NdArray
from burn_ndarray.ops.quantization import EXACT_TERMS, GEMV_ROWS


def _quantized(x: np.ndarray, scale: np.float32, zp: int) -> np.ndarray:
    return np.clip(np.rint(x / scale) + zp, -127, 127).astype(np.int64)


def _epilogue(acc: np.ndarray, scales: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """The kernels' float steps: ``float32(acc) * float32(input_scale * weight_scale) + bias``."""
    out = acc.astype(np.float32) * scales
    return out if bias is None else out + bias


@pytest.mark.parametrize(
    "m, k, n",
    [(1, 8, 3), (GEMV_ROWS - 1, 130, 33), (GEMV_ROWS, 64, 17), (3 * GEMV_ROWS, EXACT_TERMS + 9, 5)],
    ids=str,
)
@pytest.mark.parametrize("zp", [0, -31, 90], ids=lambda z: f"zp{z}")
def test_static_linear_is_the_integer_product(m: int, k: int, n: int, zp: int) -> None:
    rng = np.random.default_rng(m + k + abs(zp))
    x = rng.standard_normal((m, k)).astype(np.float32) * 2
    w = rng.integers(-127, 128, size=(n, k)).astype(np.int8)
    ws = rng.uniform(0.001, 0.02, size=n).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    scale = np.float32(0.02)  # some inputs saturate
    got = NdArray().static_quantized_linear(x, w, ws, np.array([scale]), np.array([zp], np.int8), bias)
    acc = (_quantized(x, scale, zp) - zp) @ w.T.astype(np.int64)
    np.testing.assert_array_equal(got, _epilogue(acc, scale * ws, bias))


def _conv_sums(
    q: np.ndarray, w: np.ndarray, stride: tuple[int, int], dilation: tuple[int, int], groups: int
) -> np.ndarray:
    """int64 sums of the padded, centred integer input ``q [N, C, Hp, Wp]`` with ``w``."""
    o, cg, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(
        q, ((kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1), axis=(2, 3)
    )
    win = win[:, :, :: stride[0], :: stride[1], :: dilation[0], :: dilation[1]]
    per = o // groups
    parts = [
        np.einsum(
            "nchwij,ocij->nohw", win[:, g * cg : (g + 1) * cg], w[g * per : (g + 1) * per].astype(np.int64)
        )
        for g in range(groups)
    ]
    return np.concatenate(parts, axis=1)


@pytest.mark.parametrize(
    "n, c, o, groups, stride, padding, dilation",
    [
        (1, 1, 2, 1, (1, 1), (0, 0), (1, 1)),  # rows below GEMV_ROWS: the int8 dot products
        (3, 5, 7, 1, (1, 2), (1, 1), (1, 1)),
        (2, 6, 4, 2, (2, 2), (1, 0), (2, 1)),
        (2, 6, 6, 6, (1, 1), (1, 1), (1, 1)),  # depthwise: the direct grouped kernels
        (1, 4, 8, 4, (2, 1), (2, 1), (1, 2)),  # depthwise with 2 outputs a channel
        (1, 130, 3, 1, (1, 1), (1, 1), (1, 1)),  # 1170 terms: two exact chunks
    ],
    ids=["few-rows", "plain", "grouped", "depthwise", "depthwise-x2", "two-chunks"],
)
@pytest.mark.parametrize("zp", [0, 17], ids=lambda z: f"zp{z}")
def test_static_conv2d_is_the_integer_convolution(
    n: int, c: int, o: int, groups: int, stride: tuple[int, int], padding: tuple[int, int],
    dilation: tuple[int, int], zp: int,
) -> None:  # fmt: skip
    rng = np.random.default_rng(c * 13 + o + zp)
    size = (3, 3) if n == 1 and c == 1 else (7, 6)
    x = rng.standard_normal((n, c, *size)).astype(np.float32)
    w = rng.integers(-127, 128, size=(o, c // groups, 3, 3)).astype(np.int8)
    ws = rng.uniform(0.001, 0.02, size=o).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    scale = np.float32(0.015)
    got = NdArray().static_quantized_conv2d(
        x, w, ws, np.array([scale]), np.array([zp], np.int8), bias, stride, padding, dilation, groups
    )
    q = _quantized(x, scale, zp) - zp
    q = np.pad(q, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))  # the zero point, centred: 0
    acc = _conv_sums(q, w, stride, dilation, groups)
    expected = _epilogue(np.moveaxis(acc, 1, -1), scale * ws, bias)
    np.testing.assert_array_equal(got, np.moveaxis(expected, -1, 1))


def test_other_dtypes_take_the_default() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5, 5))  # float64
    w = rng.integers(-127, 128, size=(4, 3, 3, 3)).astype(np.int8)
    ws = np.full(4, 0.01, np.float32)
    args = (np.array([0.02], np.float32), np.array([3], np.int8), None, (1, 1), (1, 1), (1, 1), 1)
    got = NdArray().static_quantized_conv2d(x, w, ws, *args)
    expected = Contract.static_quantized_conv2d(NdArray(), x, w, ws, *args)  # type: ignore[arg-type]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)
