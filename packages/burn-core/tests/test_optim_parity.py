"""Parity with torch.optim where Burn's and PyTorch's update rules coincide: 50 steps in float64
on the same weights and gradients (the gradients depend on the current weights, so any error
compounds), compared to 1e-6 relative."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from burn import Tensor
from burn.module import Module, Param
from burn.optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientsParams,
    MomentumConfig,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
)

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
torch = pytest.importorskip("torch", reason="torch is not installed: no reference to compare with")

STEPS = 50
SHAPES = {"weight": (5, 3), "bias": (3,), "scale": ()}


class Bag(Module):
    tensors: dict


def initial() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1234)
    return {name: rng.normal(size=shape) for name, shape in SHAPES.items()}


def noise() -> list[dict[str, np.ndarray]]:
    # Shrinking noise, so that AMSGrad's running maximum differs from the second moment.
    rng = np.random.default_rng(99)
    return [
        {name: rng.normal(size=shape) * (1.0 + 3.0 * math.exp(-t / 6.0)) for name, shape in SHAPES.items()}
        for t in range(STEPS)
    ]


def gradient(p: np.ndarray, n: np.ndarray) -> np.ndarray:
    """A gradient that depends on the weights: d/dp of 0.3 p^2 + 0.1 sin(3p), plus noise."""
    return 0.6 * p + 0.3 * np.cos(3.0 * p) + n


def lr_at(base: float, t: int) -> float:
    return base * (1.0 - 0.01 * t)  # a changing learning rate, as a scheduler gives


def run_burn(config: Any, base_lr: float) -> dict[str, np.ndarray]:
    B = nd.NdArray(float_dtype="float64")
    model = Bag({k: Param.from_tensor(Tensor.from_data(v, backend=B)) for k, v in initial().items()})
    optimizer = config.init()
    for t, n in enumerate(noise()):
        grads = GradientsParams()
        for name, param in model.tensors.items():
            g = np.asarray(gradient(param.val().to_numpy(), n[name]))
            grads.register(param.id, Tensor.from_data(g, backend=B))
        model = optimizer.step(lr_at(base_lr, t), model, grads)
    out = {k: p.val().to_numpy() for k, p in model.tensors.items()}
    for value in out.values():
        assert value.dtype == np.float64
    return out


def run_torch(factory: Any, base_lr: float) -> dict[str, np.ndarray]:
    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in initial().items()}
    optimizer = factory(list(params.values()), base_lr)
    for t, n in enumerate(noise()):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(base_lr, t)
        for name, p in params.items():
            p.grad = torch.from_numpy(np.asarray(gradient(p.detach().numpy(), n[name])))
        optimizer.step()
    return {k: p.detach().numpy() for k, p in params.items()}


def assert_parity(ours: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> None:
    for name, expected in reference.items():
        got = ours[name]
        assert got.shape == expected.shape, name
        # Relative to the tensor's scale (elementwise relative error is meaningless near zero).
        scale = max(float(np.max(np.abs(expected))), 1e-12)
        assert float(np.max(np.abs(got - expected))) / scale < 1e-6, (name, got, expected)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9 * scale, err_msg=name)
    # The comparison must be able to fail: the optimizers did move the weights.
    start = initial()
    assert any(float(np.max(np.abs(ours[k] - start[k]))) > 1e-2 for k in start)


CASES = {
    "sgd": (SgdConfig(), lambda p, lr: torch.optim.SGD(p, lr=lr), 0.05),
    "sgd-weight-decay": (
        SgdConfig(weight_decay=WeightDecayConfig(0.05)),
        lambda p, lr: torch.optim.SGD(p, lr=lr, weight_decay=0.05),
        0.05,
    ),
    "sgd-momentum-dampening": (
        SgdConfig(momentum=MomentumConfig(0.9, 0.1, False), weight_decay=WeightDecayConfig(0.01)),
        lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9, dampening=0.1, weight_decay=0.01),
        0.02,
    ),
    "sgd-nesterov": (
        # PyTorch refuses Nesterov with dampening, so compare it without.
        SgdConfig(momentum=MomentumConfig(0.8, 0.0, True), weight_decay=WeightDecayConfig(0.02)),
        lambda p, lr: torch.optim.SGD(
            p, lr=lr, momentum=0.8, dampening=0.0, nesterov=True, weight_decay=0.02
        ),
        0.02,
    ),
    "adam": (
        AdamConfig(epsilon=1e-8),
        lambda p, lr: torch.optim.Adam(p, lr=lr, eps=1e-8),
        0.05,
    ),
    "adam-amsgrad-l2": (
        AdamConfig(beta_1=0.8, beta_2=0.95, epsilon=1e-6, amsgrad=True, weight_decay=WeightDecayConfig(0.1)),
        lambda p, lr: torch.optim.Adam(p, lr=lr, betas=(0.8, 0.95), eps=1e-6, amsgrad=True, weight_decay=0.1),
        0.05,
    ),
    "adamw-amsgrad": (
        AdamWConfig(beta_1=0.85, beta_2=0.99, epsilon=1e-7, amsgrad=True, weight_decay=0.2),
        lambda p, lr: torch.optim.AdamW(
            p, lr=lr, betas=(0.85, 0.99), eps=1e-7, amsgrad=True, weight_decay=0.2
        ),
        0.05,
    ),
    "adam-amsgrad": (
        AdamConfig(epsilon=1e-8, amsgrad=True),
        lambda p, lr: torch.optim.Adam(p, lr=lr, eps=1e-8, amsgrad=True),
        0.05,
    ),
    "adamw": (
        AdamWConfig(epsilon=1e-8, weight_decay=0.05),
        lambda p, lr: torch.optim.AdamW(p, lr=lr, eps=1e-8, weight_decay=0.05),
        0.05,
    ),
    "adagrad": (
        AdaGradConfig(epsilon=1e-10),
        lambda p, lr: torch.optim.Adagrad(p, lr=lr, eps=1e-10),
        0.3,
    ),
    "sgd-momentum": (
        SgdConfig(momentum=MomentumConfig(0.9, 0.0, False)),
        lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9),
        0.02,
    ),
    "adagrad-lr-decay": (
        AdaGradConfig(lr_decay=0.05, epsilon=1e-9, weight_decay=WeightDecayConfig(0.03)),
        lambda p, lr: torch.optim.Adagrad(p, lr=lr, lr_decay=0.05, eps=1e-9, weight_decay=0.03),
        0.3,
    ),
    "rmsprop-centered-momentum": (
        RmsPropConfig(
            alpha=0.9, momentum=0.8, epsilon=1e-7, centered=True, weight_decay=WeightDecayConfig(0.01)
        ),
        lambda p, lr: torch.optim.RMSprop(
            p, lr=lr, alpha=0.9, eps=1e-7, momentum=0.8, centered=True, weight_decay=0.01
        ),
        0.01,
    ),
    "rmsprop-plain": (
        RmsPropConfig(alpha=0.95, momentum=0.0, epsilon=1e-8),
        lambda p, lr: torch.optim.RMSprop(p, lr=lr, alpha=0.95, eps=1e-8),
        0.01,
    ),
    "rmsprop-centered": (
        RmsPropConfig(alpha=0.99, momentum=0.0, epsilon=1e-8, centered=True),
        lambda p, lr: torch.optim.RMSprop(p, lr=lr, alpha=0.99, eps=1e-8, centered=True),
        0.01,
    ),
    "rmsprop-momentum": (
        RmsPropConfig(alpha=0.99, momentum=0.9, epsilon=1e-8),
        lambda p, lr: torch.optim.RMSprop(p, lr=lr, alpha=0.99, eps=1e-8, momentum=0.9),
        0.005,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_parity_with_torch_over_50_steps(case: str) -> None:
    config, factory, lr = CASES[case]
    assert_parity(run_burn(config, lr), run_torch(factory, lr))


def test_parity_check_can_fail() -> None:
    """A one-hyperparameter difference (dampening) is caught."""
    ours = run_burn(SgdConfig(momentum=MomentumConfig(0.9, 0.1, False)), 0.02)
    reference = run_torch(lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9, dampening=0.0), 0.02)
    with pytest.raises(AssertionError):
        assert_parity(ours, reference)
