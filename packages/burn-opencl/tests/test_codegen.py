"""Kernels rewritten around pocl's codegen (group-level bounds check, clang builtins instead of
OpenCL builtins): exact results against NumPy at sizes around the work-group size, on strided
views, in float32 and float64, with NaN, inf and signed zeros."""

from __future__ import annotations

import numpy as np
import pytest

SIZES = [1, 255, 256, 257, 1000, 70001]
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 1e-40]


def _data(n: int, dtype: type, rng: np.random.Generator) -> np.ndarray:
    x = (rng.standard_normal(n) * 4).astype(dtype)
    x[: min(n, len(SPECIAL))] = np.array(SPECIAL[: min(n, len(SPECIAL))], dtype)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_exact_unary_ops(B, up, down, rng, n, dtype):
    x = _data(n, dtype, rng)
    t = up(x)
    with np.errstate(invalid="ignore"):
        cases = [
            (B.float_abs, np.abs),
            (B.float_sqrt, np.sqrt),
            (B.float_round, np.rint),
            (B.float_floor, np.floor),
            (B.float_ceil, np.ceil),
            (B.float_sign, np.sign),
            (B.float_neg, np.negative),
        ]
        for op, ref in cases:
            out = down(op(t))
            assert out.dtype == dtype
            # Bits, not values: -0.0 and NaN must come out as before.
            np.testing.assert_array_equal(out, ref(x), err_msg=op.__name__)
            np.testing.assert_array_equal(np.signbit(out[~np.isnan(out)]), np.signbit(ref(x)[~np.isnan(out)]))
    np.testing.assert_array_equal(B.bool_into_data(B.float_is_nan(t)).array, np.isnan(x))
    np.testing.assert_array_equal(B.bool_into_data(B.float_is_inf(t)).array, np.isinf(x))
    clamped = down(B.float_clamp(t, -1.0, 2.0))
    np.testing.assert_array_equal(clamped, np.where(np.isnan(x), x, np.clip(x, -1.0, 2.0)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_on_strided_views_around_group_size(B, up, down, rng, dtype):
    m = rng.standard_normal((17, 31)).astype(dtype)
    t = B.float_permute(up(m), (1, 0))  # 527 elements, strided
    out = down(B.float_add(t, t))
    np.testing.assert_array_equal(out, m.T + m.T)
    row = up(np.arange(31, dtype=dtype))
    np.testing.assert_array_equal(down(B.float_mul(up(m), row)), m * np.arange(31, dtype=dtype))


@pytest.mark.parametrize("n", [1, 257, 1025, 5000])
def test_max_min_argmax_keep_nan(B, up, down, rng, n):
    x = rng.standard_normal((3, n)).astype(np.float32)
    x[1, n // 2] = np.nan
    t = up(x)
    mx = down(B.float_max_dim(t, 1))[:, 0]
    mn = down(B.float_min_dim(t, 1))[:, 0]
    np.testing.assert_array_equal(mx[[0, 2]], x[[0, 2]].max(1))
    np.testing.assert_array_equal(mn[[0, 2]], x[[0, 2]].min(1))
    assert np.isnan(mx[1]) and np.isnan(mn[1])
    am = B.int_into_data(B.float_argmax(t, 1)).array[:, 0]
    assert am[1] == n // 2 and am[0] == x[0].argmax() and am[2] == x[2].argmax()


@pytest.mark.parametrize("n", [1, 2, 3, 511, 512, 513, 4097])
def test_random_tail_is_written(B, dev, n):
    from burn.foundations.distribution import Normal, Uniform
    from burn.foundations.dtype import DType

    u = B.float_into_data(B.float_random((n,), Uniform(2.0, 3.0), dev, DType.F32)).array
    assert u.shape == (n,) and np.all((u >= 2.0) & (u < 3.0))
    g = B.float_into_data(B.float_random((n,), Normal(0.0, 1.0), dev, DType.F32)).array
    assert np.all(np.isfinite(g))
    i = B.int_into_data(B.int_random((n,), Uniform(-5, 5), dev, DType.I64)).array
    assert np.all((i >= -5) & (i < 5))
