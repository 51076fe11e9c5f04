"""burn-ndarray's compiled layer norm against the contract's composition, forward and backward,
float32 and float64, with and without a shift; float16 takes the composition."""

from __future__ import annotations

import numpy as np
import pytest

from burn.backend.ops.norm import NormOps as Default
from burn_ndarray import NdArray


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shift", [True, False])
def test_compiled_layer_norm_is_the_composition(dtype: type, shift: bool) -> None:
    rng = np.random.default_rng(1)
    B = NdArray(float_dtype="float64" if dtype is np.float64 else "float32")
    x = (rng.standard_normal((3, 7, 24)) * 3 + 1).astype(dtype)
    gamma, beta = (rng.standard_normal(24).astype(dtype) for _ in range(2))
    dy = rng.standard_normal(x.shape).astype(dtype)
    tol = 1e-12 if dtype is np.float64 else 2e-5
    got = B.layer_norm(x, gamma, beta if shift else None, 1e-5)
    want = Default.layer_norm(B, x, gamma, beta if shift else None, 1e-5)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    compiled = B.layer_norm_backward(x, gamma, 1e-5, dy)
    for a, b in zip(compiled, Default.layer_norm_backward(B, x, gamma, 1e-5, dy), strict=True):
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=10 * tol, atol=10 * tol)


def test_float16_takes_the_composition() -> None:
    B = NdArray()
    x = np.linspace(-2, 2, 12, dtype=np.float16).reshape(3, 4)
    gamma = np.ones(4, np.float16)
    out = B.layer_norm(x, gamma, None, 1e-5)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, Default.layer_norm(B, x, gamma, None, 1e-5))
