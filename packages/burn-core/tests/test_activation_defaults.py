"""The default activation ops of burn-core, run on backends where they are not overridden (see
`_defaults_harness`). References: NumPy/`math` formulas in float64, `torch.nn.functional` with
autograd for the backward helpers where torch is installed, and extreme inputs for stability."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _defaults_harness import BACKENDS, Ops, make_ops

try:
    import torch
    import torch.nn.functional as F  # noqa: N812
except ImportError:  # pragma: no cover - torch is an optional reference
    torch = None
    F = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (optional reference)")


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def ops(request: pytest.FixtureRequest) -> Ops:
    return make_ops(request.param)


@pytest.fixture
def x() -> np.ndarray:
    rng = np.random.default_rng(7)
    values = rng.standard_normal((3, 5, 4)) * 4
    values[0, 0, :] = [0.0, -0.0, 1e-300, -1e-300]
    return values


def close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-12, atol: float = 1e-14) -> None:
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


_erf = np.vectorize(math.erf)


def ref_sigmoid(v: np.ndarray) -> np.ndarray:
    return np.where(v >= 0, 1 / (1 + np.exp(-np.abs(v))), np.exp(-np.abs(v)) / (1 + np.exp(-np.abs(v))))


def test_relu_and_backward(ops, x):
    out = ops.relu(ops.f(x))
    close(ops.a(out), np.maximum(x, 0))
    grad = np.arange(x.size, dtype=np.float64).reshape(x.shape) + 1
    close(ops.a(ops.relu_backward(out, ops.f(grad))), np.where(x > 0, grad, 0.0))


def test_relu_keeps_nan(ops):
    assert np.isnan(ops.a(ops.relu(ops.f(np.array([np.nan, -1.0]))))[0])


def test_leaky_relu(ops, x):
    close(ops.a(ops.leaky_relu(ops.f(x), 0.1)), np.where(x < 0, 0.1 * x, x))


def test_gelu_and_backward(ops, x):
    cdf = 0.5 * (1 + _erf(x / math.sqrt(2)))
    close(ops.a(ops.gelu(ops.f(x))), x * cdf)
    grad = np.linspace(-1, 1, x.size).reshape(x.shape)
    pdf = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    close(ops.a(ops.gelu_backward(ops.f(x), ops.f(grad))), grad * (cdf + x * pdf))


def test_sigmoid_and_backward(ops, x):
    out = ops.sigmoid(ops.f(x))
    close(ops.a(out), 1 / (1 + np.exp(-x)))
    grad = np.linspace(-2, 2, x.size).reshape(x.shape)
    s = 1 / (1 + np.exp(-x))
    close(ops.a(ops.sigmoid_backward(out, ops.f(grad))), grad * s * (1 - s))


def test_sigmoid_is_stable_for_large_inputs(ops):
    v = np.array([-1000.0, -745.0, -40.0, -20.0, 0.0, 20.0, 40.0, 1000.0])
    with np.errstate(over="raise"):
        got = ops.a(ops.sigmoid(ops.f(v)))
    assert np.all(np.isfinite(got))
    assert got[0] == 0.0 and got[-1] == 1.0 and got[4] == 0.5
    # Full relative precision in the far negative tail (1 + tanh-style formulas lose it).
    close(got[1:4], np.exp(v[1:4]) / (1 + np.exp(v[1:4])), rtol=1e-12, atol=0)
    close(ops.a(ops.silu(ops.f(v))), v * ref_sigmoid(v), atol=0)


def test_log_sigmoid_is_stable(ops, x):
    close(ops.a(ops.log_sigmoid(ops.f(x))), np.log(ref_sigmoid(x)))
    big = np.array([-1000.0, -50.0, 50.0, 1000.0])
    got = ops.a(ops.log_sigmoid(ops.f(big)))
    assert np.all(np.isfinite(got))
    # Absolute accuracy near 0: a backend with only the required ops has log1p(y) = log(1 + y).
    close(got, np.array([-1000.0, -50.0 - math.log1p(math.exp(-50.0)), -math.exp(-50.0), 0.0]), atol=1e-15)


def test_silu(ops, x):
    close(ops.a(ops.silu(ops.f(x))), x / (1 + np.exp(-x)))


@pytest.mark.parametrize("beta", [1.0, 0.5, 3.0])
def test_softplus_is_stable(ops, x, beta):
    close(ops.a(ops.softplus(ops.f(x), beta)), np.log1p(np.exp(beta * x)) / beta)
    big = np.array([-1000.0, 1000.0, 300.0])
    got = ops.a(ops.softplus(ops.f(big), beta))
    assert np.all(np.isfinite(got))
    # Absolute accuracy near 0 (a backend with only the required ops has log1p(y) = log(1 + y)).
    close(got, np.array([math.log1p(math.exp(-1000.0 * beta)) / beta, 1000.0, 300.0]), rtol=1e-15, atol=1e-15)


def test_hard_sigmoid(ops, x):
    close(ops.a(ops.hard_sigmoid(ops.f(x), 0.2, 0.5)), np.clip(0.2 * x + 0.5, 0, 1))
    close(ops.a(ops.hard_sigmoid(ops.f(x), 1 / 6, 0.5)), np.clip(x / 6 + 0.5, 0, 1))


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_softmax_and_log_softmax(ops, x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    e = np.exp(shifted)
    close(ops.a(ops.softmax(ops.f(x), dim)), e / e.sum(axis=dim, keepdims=True))
    close(ops.a(ops.log_softmax(ops.f(x), dim)), shifted - np.log(e.sum(axis=dim, keepdims=True)))


def test_softmax_is_stable_for_large_inputs(ops):
    v = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -1e6]])
    got = ops.a(ops.softmax(ops.f(v), 1))
    assert np.all(np.isfinite(got))
    close(got.sum(axis=1), np.ones(2))
    e = np.exp([0.0, 1.0, -1.0])
    close(got[0], e / e.sum())
    log = ops.a(ops.log_softmax(ops.f(v), 1))
    close(log[1], np.array([0.0, -1.0, -999000.0]) - math.log1p(math.exp(-1.0)), rtol=1e-12)


@needs_torch
def test_match_torch(ops, x):
    tx = torch.tensor(x, dtype=torch.float64)
    pairs = [
        (ops.relu(ops.f(x)), F.relu(tx)),
        (ops.leaky_relu(ops.f(x), 0.01), F.leaky_relu(tx, 0.01)),
        (ops.gelu(ops.f(x)), F.gelu(tx)),
        (ops.sigmoid(ops.f(x)), torch.sigmoid(tx)),
        (ops.log_sigmoid(ops.f(x)), F.logsigmoid(tx)),
        (ops.silu(ops.f(x)), F.silu(tx)),
        (ops.softplus(ops.f(x), 2.0), F.softplus(tx, beta=2.0)),
        (ops.hard_sigmoid(ops.f(x), 1 / 6, 0.5), F.hardsigmoid(tx)),
        (ops.softmax(ops.f(x), 1), F.softmax(tx, 1)),
        (ops.log_softmax(ops.f(x), 2), F.log_softmax(tx, 2)),
    ]
    for got, want in pairs:
        close(ops.a(got), want.numpy())


@needs_torch
@pytest.mark.parametrize("name", ["relu", "gelu", "sigmoid"])
def test_backward_helpers_match_torch_autograd(ops, x, name):
    grad = np.random.default_rng(3).standard_normal(x.shape)
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ty = {"relu": F.relu, "gelu": F.gelu, "sigmoid": torch.sigmoid}[name](tx)
    ty.backward(torch.tensor(grad))
    if name == "gelu":
        got = ops.gelu_backward(ops.f(x), ops.f(grad))
    else:
        got = getattr(ops, f"{name}_backward")(getattr(ops, name)(ops.f(x)), ops.f(grad))
    close(ops.a(got), tx.grad.numpy())


def test_float32_stays_float32(ops, x):
    from burn.foundations.dtype import DType

    if not ops.b.capabilities.supports(DType.F32):
        pytest.skip("backend has no float32")
    p = ops.f(x, "float32")
    for out in (ops.gelu(p), ops.sigmoid(p), ops.softplus(p, 2.0), ops.log_softmax(p, 1)):
        assert ops.a(out).dtype == np.float32
