"""Muon: momentum SGD whose update is orthogonalized by a Newton-Schulz iteration (Keller Jordan,
2024; Burn's ``Muon``). For 2-D parameters only (weight matrices)."""

from __future__ import annotations

import math
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from burn.errors import ShapeError
from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.transforms import MomentumConfig, WeightDecayConfig

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

AdjustLrFn = Literal["original", "match_rms_adamw"]


def adjust_lr_ratio(adjust_lr_fn: AdjustLrFn, shape: tuple[int, ...]) -> float:
    """The factor Muon multiplies the learning rate by for a ``[rows, cols]`` parameter.

    - ``original`` (Keller Jordan): ``sqrt(max(1, rows / cols))``.
    - ``match_rms_adamw`` (Moonshot): ``0.2 * sqrt(max(rows, cols))``, so that AdamW's learning
      rate and weight decay can be reused.

    Example:
        >>> adjust_lr_ratio("original", (1024, 512)) == math.sqrt(2)
        True
    """
    rows, cols = shape[-2], shape[-1]
    if adjust_lr_fn == "original":
        return math.sqrt(max(1.0, rows / cols))
    return 0.2 * math.sqrt(max(rows, cols))


def newton_schulz(
    grad: Tensor, coefficients: tuple[float, float, float], steps: int, epsilon: float
) -> Tensor:
    """The quintic Newton-Schulz iteration that maps a matrix ``G = U S V^T`` to about ``U V^T``.

    ``X = G / max(||G||_F, eps)`` (transposed first if it has more rows than columns), then
    `steps` times ``A = X X^T; X = a X + (b A + c A A) X``. Each step applies
    ``s -> a s + b s^3 + c s^5`` to every singular value; with the default coefficients the
    singular values end up near 1 (roughly within [0.7, 1.2]), not exactly 1.
    """
    a, b, c = coefficients
    rows, cols = grad.shape
    tall = rows > cols
    x = grad.transpose() if tall else grad
    norm = (x * x).sum().sqrt().clamp_min(epsilon)  # shape (1,): broadcasts over the matrix
    x = x / norm
    for _ in range(steps):
        gram = x @ x.transpose()
        x = x * a + (gram * b + (gram @ gram) * c) @ x
    return x.transpose() if tall else x


class Muon(SimpleOptimizer[dict[str, Any]]):
    """For a 2-D parameter ``[rows, cols]``::

        update = momentum(grad)                       # Burn's momentum: Nesterov, 0.95, no dampening
        update = newton_schulz(update)                # ~ the nearest semi-orthogonal matrix
        param  = param * (1 - lr * penalty)           # decoupled weight decay, with the plain lr
        param -= lr * adjust_lr_ratio(shape) * update

    Only 2-D parameters: any other rank raises `ShapeError`. Optimize biases, norms and
    embeddings with another optimizer on their own gradients (`GradientsParams.from_module`).

    Differences from ``torch.optim.Muon``: the momentum is Burn's (``v = momentum * v + (1 -
    dampening) * grad``, first ``v = grad``; Nesterov update ``grad + momentum * v``), where
    PyTorch interpolates (``v = lerp(v, grad, 1 - momentum)``); the iteration runs in the
    parameter's dtype (PyTorch uses bfloat16); the norm is clamped to `epsilon` (PyTorch adds it).

    State: ``{"velocity": Tensor}``.
    """

    def __init__(
        self,
        momentum: MomentumConfig,
        ns_coefficients: tuple[float, float, float],
        ns_steps: int,
        epsilon: float,
        adjust_lr_fn: AdjustLrFn,
        weight_decay: WeightDecayConfig | None,
    ) -> None:
        self.momentum = momentum
        self.ns_coefficients = ns_coefficients
        self.ns_steps = ns_steps
        self.epsilon = epsilon
        self.adjust_lr_fn = adjust_lr_fn
        self.weight_decay = weight_decay

    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        shape = tuple(tensor.shape)
        if len(shape) != 2:
            raise ShapeError(
                f"Muon: Newton-Schulz orthogonalization needs a 2-D parameter, got shape {shape} "
                f"(dtype {tensor.dtype}, device {tensor.device}); optimize biases, norms and other "
                "non-matrix params with another optimizer (e.g. AdamW) on their own "
                "GradientsParams.from_module(grads, submodule)"
            )
        update, velocity = self.momentum.transform(grad, None if state is None else state["velocity"])
        update = newton_schulz(update, self.ns_coefficients, self.ns_steps, self.epsilon)
        if self.weight_decay is not None and self.weight_decay.penalty != 0.0:
            tensor = tensor * (1.0 - lr * self.weight_decay.penalty)
        adjusted_lr = lr * adjust_lr_ratio(self.adjust_lr_fn, shape)
        return tensor - update * adjusted_lr, {"velocity": velocity}


def _default_momentum() -> MomentumConfig:
    return MomentumConfig(momentum=0.95, dampening=0.0, nesterov=True)


@config
class MuonConfig:
    """Configuration of `Muon`, with Burn's defaults (Keller Jordan's coefficients and momentum).

    Example:
        >>> MuonConfig().init().optimizer.momentum
        MomentumConfig(momentum=0.95, dampening=0.0, nesterov=True)
    """

    weight_decay: WeightDecayConfig | None = None
    momentum: MomentumConfig = field(default_factory=_default_momentum)
    ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315)
    epsilon: float = 1e-7
    ns_steps: int = 5
    adjust_lr_fn: AdjustLrFn = "original"
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        """The optimizer (gradient clipping is an addition: Burn's Muon has none)."""
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        optimizer = Muon(
            self.momentum,
            tuple(float(c) for c in self.ns_coefficients),  # type: ignore[arg-type]
            self.ns_steps,
            self.epsilon,
            self.adjust_lr_fn,
            self.weight_decay,
        )
        return OptimizerAdaptor(optimizer, clipping)
