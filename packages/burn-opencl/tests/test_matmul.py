"""The three GEMM kernels (naive, tiled, packed) against NumPy: odd sizes, strides, batch broadcast."""

from __future__ import annotations

import numpy as np
import pytest

CASES = [
    ((3, 5), (5, 7), False),
    ((2, 33, 17), (17, 65), False),
    ((4, 1, 9, 10), (3, 10, 40), True),
    ((40, 70), (70, 64), True),
    ((2, 3, 4, 5), (2, 3, 5, 6), False),
    ((1, 0), (0, 3), False),
]


@pytest.mark.parametrize("mode", ["naive", "tiled", "packed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_modes(B, up, down, rng, monkeypatch, mode, dtype):
    monkeypatch.setenv("BURN_OPENCL_GEMM", mode)
    for ash, bsh, transposed in CASES:
        a = rng.standard_normal(ash).astype(dtype)
        b = rng.standard_normal(bsh).astype(dtype)
        ta = up(a)
        if transposed:  # feed A as a transposed view of its transpose: strides (1, M)
            ta = B.float_swap_dims(
                up(np.ascontiguousarray(np.swapaxes(a, -1, -2))), len(ash) - 1, len(ash) - 2
            )
        out = down(B.float_matmul(ta, up(b)))
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out, a @ b, rtol=tol, atol=tol, err_msg=f"{mode} {ash} @ {bsh}")


def test_matmul_mismatch_raises(B, up):
    with pytest.raises(ValueError, match="do not match"):
        B.float_matmul(up(np.zeros((2, 3), np.float32)), up(np.zeros((4, 2), np.float32)))


def test_matmul_mixed_precision(B, up, down):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float64).reshape(3, 2)
    out = B.float_matmul(up(a), up(b))
    assert B.float_get_dtype(out).value == "float64"
    np.testing.assert_array_equal(down(out), a @ b)
