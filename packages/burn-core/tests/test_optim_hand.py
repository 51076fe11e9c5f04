"""Adan, Lion and Muon against expectations derived by hand from their papers' update rules
(PyTorch has no Adan or Lion, and its Muon differs from Burn's: see `burn.optim.muon`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from burn import Tensor
from burn.errors import ShapeError
from burn.module import Module, Param
from burn.optim import (
    Adan,
    AdanConfig,
    GradientsParams,
    Lion,
    LionConfig,
    MomentumConfig,
    Muon,
    MuonConfig,
    WeightDecayConfig,
    newton_schulz,
)

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

NS = (3.4445, -4.775, 2.0315)


@pytest.fixture(scope="module")
def B64():  # noqa: N802
    return nd.NdArray(float_dtype="float64")


def t64(B, values) -> Tensor:  # noqa: N803
    return Tensor.from_data(np.asarray(values, dtype=np.float64), backend=B)


# -- Lion -----------------------------------------------------------------------------------------
def test_lion_two_steps_by_hand(B64) -> None:  # noqa: N803
    lion = Lion(beta_1=0.9, beta_2=0.99, weight_decay=0.1)
    lr = 0.1
    # step 1: m = 0, so update = sign(0.1 g) = [1, -1, 0]; param * (1 - 0.01) - 0.1 * update
    p, state = lion.step(lr, t64(B64, [1.0, -2.0, 3.0]), t64(B64, [0.5, -0.25, 0.0]), None)
    np.testing.assert_allclose(p.to_numpy(), [0.89, -1.88, 2.97], rtol=0, atol=1e-15)
    np.testing.assert_allclose(state["momentum"].to_numpy(), [0.005, -0.0025, 0.0], rtol=0, atol=1e-15)
    # step 2: 0.9 m + 0.1 g = [-0.0055, 0.04775, -0.2] -> sign [-1, 1, -1]
    p, state = lion.step(lr, p, t64(B64, [-0.1, 0.5, -2.0]), state)
    np.testing.assert_allclose(p.to_numpy(), [0.9811, -1.9612, 3.0403], rtol=0, atol=1e-14)
    # m = 0.99 m + 0.01 g
    np.testing.assert_allclose(state["momentum"].to_numpy(), [0.00395, 0.002525, -0.02], rtol=0, atol=1e-15)


def test_lion_moves_every_coordinate_by_lr(B64) -> None:  # noqa: N803
    rng = np.random.default_rng(0)
    lion = Lion(0.9, 0.99, 0.0)
    p, state = t64(B64, rng.normal(size=50)), None
    for _ in range(5):
        before = p.to_numpy()
        p, state = lion.step(0.01, p, t64(B64, rng.normal(size=50)), state)
        np.testing.assert_allclose(np.abs(p.to_numpy() - before), 0.01, rtol=1e-12)


# -- Adan -----------------------------------------------------------------------------------------
def adan_reference(p, grads, lr, b1, b2, b3, eps, wd, no_prox):  # noqa: ANN001, ANN201
    """Adan (Xie et al. 2022, Algorithm 1), scalar by scalar in plain Python, with the reference
    implementation's conventions: betas are decay rates, bias corrections, zero-initialized
    moments and a zero gradient difference on the first step."""
    p = [float(v) for v in p]
    m = [0.0] * len(p)
    v = [0.0] * len(p)
    n = [0.0] * len(p)
    prev = None
    for t, g in enumerate(grads, start=1):
        for i, gi in enumerate(g):
            diff = 0.0 if prev is None else gi - prev[i]
            m[i] = b1 * m[i] + (1 - b1) * gi
            v[i] = b2 * v[i] + (1 - b2) * diff
            n[i] = b3 * n[i] + (1 - b3) * (gi + b2 * diff) ** 2
            m_hat = m[i] / (1 - b1**t)
            v_hat = v[i] / (1 - b2**t)
            n_hat = n[i] / (1 - b3**t)
            step = lr * (m_hat + b2 * v_hat) / (math.sqrt(n_hat) + eps)
            if no_prox:
                p[i] = p[i] * (1 - lr * wd) - step
            else:
                p[i] = (p[i] - step) / (1 + lr * wd)
        prev = list(g)
    return p


def test_adan_first_step_closed_form(B64) -> None:  # noqa: N803
    # t = 1: m_hat = g, n_hat = g^2 (diff = 0), so param = (param - lr g / (|g| + eps)) / (1 + lr wd)
    adan = Adan(0.98, 0.92, 0.99, 1e-8, 0.02, no_prox=False)
    p0, g = np.array([0.5, -1.0, 2.0]), np.array([0.2, -3.0, 1e-3])
    p, state = adan.step(0.1, t64(B64, p0), t64(B64, g), None)
    expected = (p0 - 0.1 * g / (np.abs(g) + 1e-8)) / (1 + 0.1 * 0.02)
    np.testing.assert_allclose(p.to_numpy(), expected, rtol=1e-12)
    assert state["time"] == 1
    np.testing.assert_array_equal(state["exp_avg_diff"].to_numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("no_prox", [False, True])
def test_adan_matches_reference_over_20_steps(B64, no_prox: bool) -> None:  # noqa: N803
    rng = np.random.default_rng(3)
    p0 = rng.normal(size=6)
    grads = [rng.normal(size=6) for _ in range(20)]
    adan = Adan(0.9, 0.8, 0.95, 1e-6, 0.05, no_prox=no_prox)
    p, state = t64(B64, p0), None
    for g in grads:
        p, state = adan.step(0.05, p, t64(B64, g), state)
    expected = adan_reference(p0, grads, 0.05, 0.9, 0.8, 0.95, 1e-6, 0.05, no_prox)
    np.testing.assert_allclose(p.to_numpy(), expected, rtol=1e-10)
    assert state["time"] == 20


def test_adan_defaults_are_burns() -> None:
    adan = AdanConfig().init().optimizer
    assert (adan.beta_1, adan.beta_2, adan.beta_3, adan.epsilon, adan.weight_decay, adan.no_prox) == (
        0.98,
        0.92,
        0.99,
        1e-8,
        0.0,
        False,
    )


# -- Muon -----------------------------------------------------------------------------------------
def ns_scalar(s: float, steps: int = 5) -> float:
    """Newton-Schulz acts on each singular value alone: s -> a s + b s^3 + c s^5."""
    a, b, c = NS
    for _ in range(steps):
        s = a * s + b * s**3 + c * s**5
    return s


def rotation(theta: float) -> np.ndarray:
    return np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])


def rotation3(theta: float) -> np.ndarray:
    """A 3-D rotation: by `theta` in the y-z plane, then by 0.4 in the x-y plane."""
    yz, xy = np.eye(3), np.eye(3)
    yz[1:, 1:] = rotation(theta)
    xy[:2, :2] = rotation(0.4)
    return xy @ yz


def test_newton_schulz_on_known_singular_values(B64) -> None:  # noqa: N803
    # G = U diag(3, 4) V^T: ||G||_F = 5, so the iteration starts from singular values 0.6 and 0.8.
    u, v = rotation(0.3), rotation(-1.1)
    g = u @ np.diag([3.0, 4.0]) @ v.T
    out = newton_schulz(t64(B64, g), NS, 5, 1e-7).to_numpy()
    expected = u @ np.diag([ns_scalar(0.6), ns_scalar(0.8)]) @ v.T
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)
    # Not exactly orthogonal, but close: the point of the quintic's coefficients.
    assert 0.6 < ns_scalar(0.6) < 1.3 and 0.6 < ns_scalar(0.8) < 1.3


def test_newton_schulz_tall_matrix_goes_through_the_transpose(B64) -> None:  # noqa: N803
    u, v = rotation3(0.7), rotation(0.2)
    sigma = np.zeros((3, 2))
    sigma[0, 0], sigma[1, 1] = 1.0, 2.0  # norm sqrt(5)
    g = u @ sigma @ v.T
    out = newton_schulz(t64(B64, g), NS, 5, 1e-7).to_numpy()
    s_out = np.zeros((3, 2))
    s_out[0, 0], s_out[1, 1] = ns_scalar(1 / math.sqrt(5)), ns_scalar(2 / math.sqrt(5))
    np.testing.assert_allclose(out, u @ s_out @ v.T, rtol=0, atol=1e-12)


def test_newton_schulz_orthogonalizes_random_matrices(B64) -> None:  # noqa: N803
    rng = np.random.default_rng(5)
    for shape in [(8, 5), (5, 8), (16, 16)]:
        out = newton_schulz(t64(B64, rng.normal(size=shape)), NS, 5, 1e-7).to_numpy()
        singular = np.linalg.svd(out, compute_uv=False)
        assert singular.min() > 0.5 and singular.max() < 1.3, (shape, singular)


def test_muon_two_steps_by_hand(B64) -> None:  # noqa: N803
    """Nesterov momentum 0.95 without dampening, orthogonalized, lr scaled by sqrt(max(1, rows/cols)),
    decoupled weight decay with the plain lr."""
    muon = Muon(MomentumConfig(0.95, 0.0, True), NS, 5, 1e-7, "original", WeightDecayConfig(0.1))
    u, v = rotation3(0.3), rotation(0.9)

    def mat(s1: float, s2: float) -> np.ndarray:
        s = np.zeros((3, 2))
        s[0, 0], s[1, 1] = s1, s2
        return u @ s @ v.T

    lr, ratio = 0.02, math.sqrt(3 / 2)
    p0 = np.arange(6.0).reshape(3, 2) / 10
    # step 1: velocity = g1, update = g1 + 0.95 g1 (same direction: only the normalization matters)
    g1 = mat(3.0, 4.0)
    p1, state = muon.step(lr, t64(B64, p0), t64(B64, g1), None)
    expected1 = p0 * (1 - lr * 0.1) - lr * ratio * mat(ns_scalar(0.6), ns_scalar(0.8))
    np.testing.assert_allclose(p1.to_numpy(), expected1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state["velocity"].to_numpy(), g1, rtol=0, atol=1e-15)
    # step 2: velocity = 0.95 g1 + g2 = diag(3.85, 8.8); update = g2 + 0.95 velocity = diag(4.6575, 13.36)
    g2 = mat(1.0, 5.0)
    p2, state = muon.step(lr, p1, t64(B64, g2), state)
    norm = math.hypot(4.6575, 13.36)
    expected2 = expected1 * (1 - lr * 0.1) - lr * ratio * mat(
        ns_scalar(4.6575 / norm), ns_scalar(13.36 / norm)
    )
    np.testing.assert_allclose(p2.to_numpy(), expected2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state["velocity"].to_numpy(), mat(3.85, 8.8), rtol=0, atol=1e-12)


def test_muon_match_rms_adamw_scaling(B64) -> None:  # noqa: N803
    muon = Muon(MomentumConfig(0.95, 0.0, True), NS, 5, 1e-7, "match_rms_adamw", None)
    g = np.diag([3.0, 4.0])
    p, _ = muon.step(0.01, t64(B64, np.zeros((2, 2))), t64(B64, g), None)
    ratio = 0.2 * math.sqrt(2)
    np.testing.assert_allclose(
        p.to_numpy(), -0.01 * ratio * np.diag([ns_scalar(0.6), ns_scalar(0.8)]), atol=1e-14
    )


class Layer(Module):
    weight: Param
    bias: Param


def test_muon_refuses_non_matrix_params_with_a_clear_error(B64) -> None:  # noqa: N803
    layer = Layer(Param.from_tensor(t64(B64, np.ones((3, 2)))), Param.from_tensor(t64(B64, np.ones(2))))
    grads = GradientsParams()
    grads.register(layer.bias.id, t64(B64, np.ones(2)))
    with pytest.raises(ShapeError, match=r"2-D parameter, got shape \(2,\).*from_module"):
        MuonConfig().init().step(0.01, layer, grads)
    # The matrix alone steps fine.
    grads = GradientsParams()
    grads.register(layer.weight.id, t64(B64, np.ones((3, 2))))
    stepped = MuonConfig().init().step(0.01, layer, grads)
    assert not np.array_equal(stepped.weight.val().to_numpy(), np.ones((3, 2)))
    np.testing.assert_array_equal(stepped.bias.val().to_numpy(), np.ones(2))


def test_lion_config_defaults() -> None:
    lion = LionConfig().init().optimizer
    assert (lion.beta_1, lion.beta_2, lion.weight_decay) == (0.9, 0.99, 0.0)
