"""burn-ndarray's blocked attention against the contract's composition: the same values whatever
the block of query rows (one row per block up to the whole sequence), with masks, causal order and
a query that has no key left, forward and backward."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend.ops.attention import AttentionOps as Default
from burn_ndarray import NdArray
from burn_ndarray.ops import attention as nd_attention


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("block", [1, 7, 1 << 22], ids=["row", "rows", "whole"])
@pytest.mark.parametrize("causal", [False, True])
def test_blocked_attention_is_the_composition(
    monkeypatch: pytest.MonkeyPatch, dtype: type, block: int, causal: bool
) -> None:
    rng = np.random.default_rng(0)
    B = NdArray(float_dtype="float64" if dtype is np.float64 else "float32")
    shapes = ((2, 3, 9, 4), (2, 3, 6, 4), (2, 3, 6, 5), (2, 3, 9, 5))
    q, k, v, g = (rng.standard_normal(s).astype(dtype) for s in shapes)
    mask = rng.random((2, 1, 9, 6)) < 0.3
    mask[0, 0, 4] = True  # no key left for query 4 of batch 0
    # 1 row per block, a few rows, or the whole sequence: BLOCK_SCORES counts scores of every head
    monkeypatch.setattr(nd_attention, "BLOCK_SCORES", block * 2 * 3 * 6)
    tol = 1e-12 if dtype is np.float64 else 2e-6
    got = B.attention(q, k, v, mask, 0.6, causal)
    want = Default.attention(B, q, k, v, mask, 0.6, causal)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert (got[0, :, 4] == 0).all()
    for a, b in zip(
        B.attention_backward(q, k, v, mask, g, 0.6, causal),
        Default.attention_backward(B, q, k, v, mask, g, 0.6, causal),
        strict=True,
    ):
        np.testing.assert_allclose(a, b, rtol=10 * tol, atol=10 * tol)


def test_other_dtypes_take_the_composition() -> None:
    B = NdArray(float_dtype="float16")
    q = np.ones((2, 3), np.float16)
    out = B.attention(q, q, q, None, 1.0, False)
    assert out.dtype == np.float16 and out.shape == (2, 3)


def test_bfloat16_operands_beside_a_float32_gradient_run_widened(monkeypatch: pytest.MonkeyPatch) -> None:
    """An autocast attention's backward: bfloat16 q, k, v and a float32 output gradient (from a
    float32 residual stream) take the widened float32 path, not the composition, and give the
    float32 results of the widened operands; all-bfloat16 operands give those results rounded."""
    from burn_ndarray.runtime.dtypes import BF16

    rng = np.random.default_rng(5)
    B = NdArray(float_dtype="bfloat16")
    q, k, v = (rng.standard_normal((2, 3, 8, 4)).astype(BF16) for _ in range(3))
    g = rng.standard_normal((2, 3, 8, 4)).astype(np.float32)
    mask = rng.random((2, 1, 8, 8)) < 0.3

    def refuse(*args: object) -> None:
        raise AssertionError("the composition ran")

    monkeypatch.setattr(Default, "attention_backward", refuse)
    monkeypatch.setattr(Default, "attention", refuse)
    wide = [a.astype(np.float32) for a in (q, k, v)]
    want = B.attention_backward(*wide, mask, g, 0.6, True)
    got = B.attention_backward(q, k, v, mask, g, 0.6, True)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, b)
    rounded = B.attention_backward(q, k, v, mask, g.astype(BF16), 0.6, True)
    want_rounded = B.attention_backward(*wide, mask, g.astype(BF16).astype(np.float32), 0.6, True)
    for a, b in zip(rounded, want_rounded, strict=True):
        assert a.dtype == BF16
        np.testing.assert_array_equal(a.view(np.uint16), b.astype(BF16).view(np.uint16))
    out = B.attention(q, k, v.astype(np.float32), mask, 0.6, False)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, B.attention(*wide, mask, 0.6, False))


def test_compiled_softmax_rows_match_numpy_and_keep_nan_and_masked_rows() -> None:
    kernels = pytest.importorskip("burn_ndarray.kernels.attention", reason="numba is not installed")
    rng = np.random.default_rng(3)
    s = (rng.standard_normal((6, 37)) * 8).astype(np.float32)
    s[1, ::3] = -np.inf  # some keys masked
    s[2, :] = -np.inf  # every key masked: zeros
    s[3, 5] = np.nan  # NaN spreads to its row, as NumPy's passes
    s[4, :] = 80.0  # large equal scores: uniform weights
    want = np.exp(s.astype(np.float64) - s.astype(np.float64).max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    got = s.copy()
    kernels.softmax_rows_range(0, got.shape[0], got, 1.0)
    ok = [0, 1, 4, 5]
    np.testing.assert_allclose(got[ok], want[ok], rtol=2e-6, atol=1e-7)
    assert (got[1, ::3] == 0).all() and (got[2] == 0).all() and np.isnan(got[3]).all()


def test_compiled_softmax_rows_scale_the_scores_first() -> None:
    kernels = pytest.importorskip("burn_ndarray.kernels.attention", reason="numba is not installed")
    s = (np.random.default_rng(5).standard_normal((4, 29)) * 8).astype(np.float32)
    for scale in (0.125, -0.5, 0.0):  # a negative scale flips the order; 0: uniform weights
        t = s.astype(np.float64) * np.float32(scale)
        want = np.exp(t - t.max(-1, keepdims=True))
        want /= want.sum(-1, keepdims=True)
        got = s.copy()
        kernels.softmax_rows_range(0, got.shape[0], got, scale)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_compiled_softmax_backward_rows_match_numpy() -> None:
    kernels = pytest.importorskip("burn_ndarray.kernels.attention", reason="numba is not installed")
    rng = np.random.default_rng(4)
    w = rng.random((5, 23)).astype(np.float32)
    w /= w.sum(-1, keepdims=True)
    w[2] = 0.0  # a fully masked query's weights: its gradient is 0
    dw = rng.standard_normal((5, 23)).astype(np.float32)
    w64, dw64 = w.astype(np.float64), dw.astype(np.float64)
    want = w64 * (dw64 - (dw64 * w64).sum(-1, keepdims=True)) * 0.3
    got = dw.copy()
    kernels.softmax_grad_rows_range(0, got.shape[0], got, w, 0.3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert (got[2] == 0).all()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [5, 1 << 22], ids=["rows", "whole"])
def test_heads_split_between_threads_give_the_same_bits(
    monkeypatch: pytest.MonkeyPatch, threads: Any, causal: bool, block: int
) -> None:
    # Two threads take half the (batch x heads) matrices each, BLAS on one thread: the same
    # blocks of query rows as one thread, so the same bits, forward and backward; a mask shared
    # by every matrix ([1, 1, Lq, Lk]) travels with them.
    rng = np.random.default_rng(1)
    B = NdArray()
    q, k, v, g = (rng.standard_normal((2, 3, 40, 16)).astype(np.float32) for _ in range(4))
    mask = rng.random((1, 1, 40, 40)) < 0.2
    monkeypatch.setattr(nd_attention, "BLOCK_SCORES", block * 2 * 3 * 40)
    monkeypatch.setattr(nd_attention, "THREADED_MIN_WORK", 1)
    results = []
    for n in (1, 2):
        threads(n)
        assert (nd_attention._chunks(q, k, v, mask) is None) == (n == 1)
        results.append(
            (B.attention(q, k, v, mask, 0.25, causal), *B.attention_backward(q, k, v, mask, g, 0.25, causal))
        )
    for one, two in zip(*results, strict=True):
        np.testing.assert_array_equal(one, two)
    want = Default.attention(B, q, k, v, mask, 0.25, causal)
    np.testing.assert_allclose(results[1][0], want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [5, 1 << 22], ids=["rows", "whole"])
def test_three_heads_on_two_threads_split_query_rows(
    monkeypatch: pytest.MonkeyPatch, threads: Any, causal: bool, block: int
) -> None:
    # 3 matrices do not share evenly between 2 threads: the forward splits the query rows, each
    # chunk's mask rows and causal cut counted from its first row; the backward keeps the matrices.
    rng = np.random.default_rng(3)
    B = NdArray()
    q, k, v, g = (rng.standard_normal((1, 3, 41, 16)).astype(np.float32) for _ in range(4))
    mask = rng.random((1, 1, 41, 41)) < 0.2
    monkeypatch.setattr(nd_attention, "BLOCK_SCORES", block * 3 * 41)
    monkeypatch.setattr(nd_attention, "THREADED_MIN_WORK", 1)
    threads(2)
    chunks = nd_attention._chunks(q, k, v, mask)
    assert chunks is not None and len(chunks) == 2
    assert nd_attention._row_chunks(q, chunks) == [slice(0, 21), slice(21, 41)]
    six = np.zeros((2, 3, 41, 16), np.float32)  # 6 matrices share evenly: no row split
    assert nd_attention._row_chunks(six, nd_attention._chunks(six, six, six, None)) is None
    two = (B.attention(q, k, v, mask, 0.25, causal), *B.attention_backward(q, k, v, mask, g, 0.25, causal))
    threads(1)
    one = (B.attention(q, k, v, mask, 0.25, causal), *B.attention_backward(q, k, v, mask, g, 0.25, causal))
    np.testing.assert_allclose(two[0], one[0], rtol=2e-6, atol=2e-6)
    for a, b in zip(one[1:], two[1:], strict=True):
        np.testing.assert_array_equal(a, b)  # the backward: the same split as before
    want = Default.attention(B, q, k, v, mask, 0.25, causal)
    np.testing.assert_allclose(two[0], want, rtol=2e-6, atol=2e-6)


def test_matrices_with_their_own_masks_are_not_split(threads: Any) -> None:
    threads(2)
    q = np.zeros((4, 2, 64, 64), np.float32)
    assert nd_attention._chunks(q, q, q, None) is not None
    assert nd_attention._chunks(q, q, q, np.zeros((4, 1, 64, 64), bool)) is None  # a mask per batch
    assert nd_attention._chunks(q, q[:1], q[:1], None) is None  # keys broadcast over the batch
