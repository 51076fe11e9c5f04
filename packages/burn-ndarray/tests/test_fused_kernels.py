"""burn-ndarray's generated fused kernels (`burn_ndarray.fused`): one-dim blocks split in chunks,
contiguous and strided, equal NumPy's one-op results bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn.backend.ir import FusedBlock, OpIR, TensorIR
from burn_ndarray import fused


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv(fused.ENV_CACHE, str(tmp_path))


def _block(n: int) -> FusedBlock:
    x, y, z, w = (TensorIR(i, (n,), burn.float32) for i in range(4))
    ops = (OpIR("float_mul_scalar", (x,), (y,), (2.0,)), OpIR("float_add", (y, w), (z,)))
    return FusedBlock((n,), (x, w), ops, (z,))


@pytest.mark.parametrize("n", [1, 7, 4099])
@pytest.mark.parametrize("parts", [1, 3])
def test_one_dim_chunks_strided_and_contiguous(n: int, parts: int) -> None:
    rng = np.random.default_rng(n)
    big = rng.random(3 * n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    want = big[::3] * np.float32(2.0) + b
    module = fused._kernel(_block(n), (("x",), ("1",), ("1",)))
    out = np.full(n, np.nan, np.float32)
    strides = np.array([[3], [1], [1]], np.int64)
    module.launch(parts, big, b, np.array([2.0]), strides, np.array([n], np.int64), out)
    assert np.array_equal(out, want)
    got = burn.backend("ndarray").fusion_execute(_block(n), [big[::3], b])[0]
    assert np.array_equal(got, want)


def test_one_dim_loop_counts_from_zero() -> None:
    # A loop over range(lo, hi) keeps numba's negative-index check and does not vectorize
    # (3x slower than NumPy's two passes over 512 x 512); views from `lo` avoid it.
    source = fused.kernel_source(_block(8), (("1",), ("1",), ("1",)))
    assert "for d0 in range(hi - lo):" in source
    assert "r0 = i0[lo:]" in source
