"""The AVX2 int8 GEMM (`burn_ndarray.kernels.int8_gemm`): its int32 sums equal an int64 NumPy
reference exactly, at the extremes where a ``vpmaddubsw`` pair would saturate if it were fed
shifted activations, over edge tiles, several k and row blocks and a split over panels; the
dynamic Linear packs a weight once and drops the packing with the weight."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from burn_ndarray.kernels import int8_gemm
from burn_ndarray.ops import quantization as ndarray_quantization

pytestmark = pytest.mark.skipif(not int8_gemm.HAS_AVX2, reason="the kernel needs AVX2")


def _sums(a: np.ndarray, w: np.ndarray, parts: int = 1) -> np.ndarray:
    m, k = a.shape
    n = w.shape[0]
    steps = -(-k // int8_gemm.STEP)
    padded = np.zeros((m, steps * int8_gemm.STEP), np.int8)
    padded[:, :k] = a
    panels = -(-n // int8_gemm.PANEL)
    out = np.zeros((m, panels * int8_gemm.PANEL), np.int32)
    if parts == 1:
        int8_gemm.gemm_range(0, panels, padded, int8_gemm.pack_weight(w), out)
    else:
        int8_gemm.gemm(parts, padded, int8_gemm.pack_weight(w), out)
    return out[:, :n]


@pytest.mark.parametrize(
    "m, n, k",
    [
        (1, 1, 1),
        (3, 17, 5),  # a tile of 3 rows, a second panel of one column, k padded to 8
        (9, 48, 4 * int8_gemm.KC_STEPS + 3),  # two k blocks, the second one step long
        (int8_gemm.MC_ROWS + 6, 33, 64),  # two row blocks, the second with an edge tile of 2
    ],
    ids=str,
)
def test_sums_equal_the_int64_reference(m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + n + k)
    a = rng.integers(-127, 128, size=(m, k)).astype(np.int8)
    w = rng.integers(-128, 128, size=(n, k)).astype(np.int8)
    np.testing.assert_array_equal(_sums(a, w), a.astype(np.int64) @ w.astype(np.int64).T)


@pytest.mark.parametrize("a_value", [-127, 127])
@pytest.mark.parametrize("w_value", [-128, 127])
def test_extreme_products_do_not_saturate(a_value: int, w_value: int) -> None:
    """Every pair at the largest magnitude: |w| = 128 or 127 against |a| = 127 (a pair of u8
    255 x 127 would saturate int16); also the sums over MAX_K-sized rows stay exact."""
    k = 4 * int8_gemm.KC_STEPS + 8
    a = np.full((5, k), a_value, np.int8)
    w = np.full((20, k), w_value, np.int8)
    w[1, ::2] = 0  # zero weights: vpsignb zeroes the activation
    expected = a.astype(np.int64) @ w.astype(np.int64).T
    np.testing.assert_array_equal(_sums(a, w), expected)
    assert abs(int(expected[0, 0])) == 127 * abs(w_value) * k


def test_split_over_panels_is_the_serial_result() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(-127, 128, size=(13, 70)).astype(np.int8)
    w = rng.integers(-128, 128, size=(100, 70)).astype(np.int8)
    np.testing.assert_array_equal(_sums(a, w, parts=3), _sums(a, w))


def test_pack_layout() -> None:
    """Panel 0, step 0 holds the 16 columns' first 4 features in column order; padding is 0."""
    w = np.arange(18 * 5, dtype=np.int64).reshape(18, 5).astype(np.int8)
    packed = int8_gemm.pack_weight(w).view(np.int8)
    steps = 2
    assert packed.shape == (2 * steps * 16 * 4,)
    np.testing.assert_array_equal(packed[:64].reshape(16, 4), w[:16, :4])
    np.testing.assert_array_equal(packed[64:128].reshape(16, 4)[:, 0], w[:16, 4])
    assert not packed[64:128].reshape(16, 4)[:, 1:].any()
    second = packed[2 * 64 :].reshape(steps, 16, 4)
    assert not second[:, 2:].any()


def test_the_linear_packs_a_weight_once() -> None:
    from burn_ndarray import NdArray

    rng = np.random.default_rng(8)
    w = rng.integers(-127, 128, size=(24, 40)).astype(np.int8)
    x = rng.standard_normal((6, 40)).astype(np.float32)
    scales = np.full(24, 0.01, np.float32)
    backend = NdArray()
    first = backend.quantized_linear(x, w, scales, None)
    packed = ndarray_quantization._PACKED[id(w)][1]
    second = backend.quantized_linear(x, w, scales, None)
    np.testing.assert_array_equal(first, second)
    assert ndarray_quantization._PACKED[id(w)][1] is packed
    key = id(w)
    del w
    gc.collect()
    assert key not in ndarray_quantization._PACKED
