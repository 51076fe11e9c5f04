"""The vectorized erf against math.erf, and the activation ops against direct formulas / torch."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from burn_ndarray import NdArray
from burn_ndarray.kernels.erf import erf

# Measured with this grid (plus a dense sweep of 10^6 points while developing):
# float64: max relative error 1.45e-15 (at x ~ -1.949); float32: 1.8e-7 (~1.5 ulp of float32).
ERF_MAX_REL_F64 = 2e-15
ERF_MAX_REL_F32 = 3e-7


def _grid() -> np.ndarray:
    return np.concatenate(
        [
            np.linspace(-7.0, 7.0, 40001),
            np.geomspace(1e-300, 30.0, 2000),
            -np.geomspace(1e-300, 30.0, 2000),
            [0.0, -0.0, 1.9999999999999998, 2.0, 5.999999999999999, 6.0, 1e300],
        ]
    )


def test_erf_float64_against_math_erf() -> None:
    x = _grid()
    want = np.array([math.erf(v) for v in x])
    got = erf(x)
    assert got.dtype == np.float64
    rel = np.abs(got - want) / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
    assert rel.max() < ERF_MAX_REL_F64, (rel.max(), x[rel.argmax()])


def test_erf_float32_against_math_erf() -> None:
    x = np.clip(_grid(), -1e30, 1e30).astype(np.float32)
    x = x[np.abs(x) > 1e-30]  # below that, erf(x) = 2x/sqrt(pi) is subnormal in float32
    want = np.array([math.erf(float(v)) for v in x])
    got = erf(x)
    assert got.dtype == np.float32
    rel = np.abs(got.astype(np.float64) - want) / np.abs(want)
    assert rel.max() < ERF_MAX_REL_F32, (rel.max(), x[rel.argmax()])


def test_small_arrays_take_the_per_element_path_with_the_same_results() -> None:
    from burn_ndarray.kernels import erf as erf_module

    x = np.linspace(-7.0, 7.0, erf_module.SMALL_SIZE)
    big = erf(np.concatenate([x, x]))[: x.size]  # over SMALL_SIZE: the polynomial path
    np.testing.assert_allclose(erf(x), big, rtol=ERF_MAX_REL_F64)
    assert erf(x.astype(np.float32)).dtype == np.float32 and erf(np.asarray(0.5)).shape == ()


def test_erf_special_values_and_shapes() -> None:
    got = erf(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    assert np.isnan(got[0]) and got[1:3].tolist() == [1.0, -1.0] and got[3] == 0.0
    assert np.signbit(got[4])
    assert erf(np.zeros((2, 0, 3))).shape == (2, 0, 3)
    assert erf(np.full((3, 1), 0.5))[::2].shape == (2, 1)
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    np.testing.assert_allclose(erf(x.T), erf(x).T, rtol=0)  # non-contiguous input


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.array(
        [1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v)) for v in x.ravel()]
    ).reshape(x.shape)


def test_activations_against_formulas(B64: NdArray) -> None:
    B = B64
    x = np.array([-800.0, -30.0, -3.0, -0.5, 0.0, 0.25, 2.0, 30.0, 800.0])
    sig = _sigmoid(x)
    np.testing.assert_allclose(B.sigmoid(x), sig, rtol=1e-14)  # no overflow at +-800
    log_sig = np.array(
        [-math.log1p(math.exp(-v)) if v >= 0 else v - math.log1p(math.exp(v)) for v in x[1:-1]]
    )
    np.testing.assert_allclose(B.log_sigmoid(x[1:-1]), log_sig, rtol=1e-14)
    assert B.log_sigmoid(x)[0] == -800.0 and B.log_sigmoid(x)[-1] == 0.0
    np.testing.assert_allclose(B.silu(x[1:-1]), x[1:-1] * sig[1:-1], rtol=1e-14)
    np.testing.assert_allclose(B.relu(x), np.maximum(x, 0))
    np.testing.assert_allclose(B.leaky_relu(x, 0.01), np.where(x >= 0, x, 0.01 * x))
    gelu = np.array([v * (1 + math.erf(v / math.sqrt(2))) / 2 for v in x])
    np.testing.assert_allclose(B.gelu(x), gelu, rtol=1e-14, atol=1e-300)
    many = np.tile(x, 20)  # over erf.SMALL_SIZE: the whole-array polynomial path
    np.testing.assert_allclose(B.gelu(many), np.tile(gelu, 20), rtol=1e-14, atol=1e-300)
    sp = np.array([math.log1p(math.exp(2 * v)) / 2 if v < 100 else v for v in x])
    np.testing.assert_allclose(B.softplus(x, 2.0), sp, rtol=1e-14)
    np.testing.assert_allclose(B.hard_sigmoid(x, 0.2, 0.5), np.clip(0.2 * x + 0.5, 0, 1))


def test_activation_backward_helpers(B64: NdArray, rng: np.random.Generator) -> None:
    B = B64
    x = rng.standard_normal(50) * 3
    g = rng.standard_normal(50)
    out = B.relu(x)
    np.testing.assert_array_equal(B.relu_backward(out, g), np.where(x > 0, g, 0.0))
    s = B.sigmoid(x)
    np.testing.assert_allclose(B.sigmoid_backward(s, g), g * s * (1 - s))
    eps = 1e-6  # central differences of gelu itself
    numeric = (B.gelu(x + eps) - B.gelu(x - eps)) / (2 * eps)
    np.testing.assert_allclose(B.gelu_backward(x, g), g * numeric, rtol=1e-6, atol=1e-8)


def test_softmax_is_stable_and_normalized(B: NdArray) -> None:
    x = np.array([[1000.0, 1001.0, 1002.0], [-1e4, 0.0, 1e4]], np.float32)
    s = B.softmax(x, 1)
    assert s.dtype == np.float32 and np.all(np.isfinite(s))
    np.testing.assert_allclose(s.sum(1), 1.0, rtol=1e-6)
    ref = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(s[0], ref, rtol=1e-6)
    ls = B.log_softmax(x, 1)
    np.testing.assert_allclose(ls[0], np.log(ref), rtol=1e-6)
    assert ls[1, 2] == 0.0 and ls[1, 0] == -2e4
    np.testing.assert_allclose(B.softmax(x.T, 0), s.T, rtol=1e-6)  # another dim, non-contiguous


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_activations_keep_low_precision_dtypes(B: NdArray, dtype: type) -> None:
    x: np.ndarray = np.linspace(-4, 4, 9).astype(dtype)
    x32 = x.astype(np.float32)
    for name, args in [
        ("relu", ()),
        ("gelu", ()),
        ("sigmoid", ()),
        ("silu", ()),
        ("log_sigmoid", ()),
        ("softplus", (1.0,)),
        ("hard_sigmoid", (0.2, 0.5)),
        ("softmax", (0,)),
        ("log_softmax", (0,)),
        ("leaky_relu", (0.1,)),
    ]:
        got = getattr(B, name)(x, *args)
        want = getattr(B, name)(x32, *args)
        assert got.dtype == dtype, name
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-2, atol=2e-2, err_msg=name)


def test_against_torch_when_available(B64: NdArray, rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rng.standard_normal((4, 6)) * 5
    t = torch.tensor(x)
    for ours, theirs in [
        (B64.gelu(x), F.gelu(t)),
        (B64.sigmoid(x), torch.sigmoid(t)),
        (B64.silu(x), F.silu(t)),
        (B64.log_sigmoid(x), F.logsigmoid(t)),
        (B64.softmax(x, 1), F.softmax(t, 1)),
        (B64.log_softmax(x, 0), F.log_softmax(t, 0)),
        (B64.hard_sigmoid(x, 1 / 6, 0.5), F.hardsigmoid(t)),
        (B64.softplus(x, 1.0), F.softplus(t)),
        (B64.leaky_relu(x, 0.2), F.leaky_relu(t, 0.2)),
    ]:
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)
