"""burn-ndarray's blocked attention against the contract's composition: the same values whatever
the block of query rows (one row per block up to the whole sequence), with masks, causal order and
a query that has no key left, forward and backward."""

from __future__ import annotations

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
