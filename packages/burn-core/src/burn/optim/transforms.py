"""Reusable gradient transforms: L2 weight decay, momentum, adaptive (Adam) moments."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from burn.module.config import config

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


@config
class WeightDecayConfig:
    """L2 penalty added to the gradient: ``grad + penalty * param`` (coupled weight decay)."""

    penalty: float

    def transform(self, grad: Tensor, tensor: Tensor) -> Tensor:
        return grad + tensor * self.penalty


@config
class MomentumConfig:
    """Momentum with Burn's defaults: ``v = momentum * v + (1 - dampening) * grad`` (the first step
    takes ``v = grad``); the update is ``v``, or ``grad + momentum * v`` with Nesterov."""

    momentum: float = 0.9
    dampening: float = 0.1
    nesterov: bool = False

    def transform(self, grad: Tensor, velocity: Tensor | None) -> tuple[Tensor, Tensor]:
        velocity = grad if velocity is None else velocity * self.momentum + grad * (1.0 - self.dampening)
        update = grad + velocity * self.momentum if self.nesterov else velocity
        return update, velocity


def adaptive_moments(
    grad: Tensor,
    state: dict[str, Any] | None,
    beta_1: float,
    beta_2: float,
    epsilon: float,
    amsgrad: bool,
    lr: float = 1.0,
) -> tuple[Tensor, dict[str, Any]]:
    """Adam's step ``lr * m_hat / (sqrt(v_hat) + eps)`` and the new state.

    Computed as ``m * (lr * sqrt(bc2) / bc1) / (sqrt(v) + eps * sqrt(bc2))`` (``bc = 1 - beta^t``),
    Burn's form: the same value as PyTorch's up to rounding, with the bias corrections and the
    learning rate folded into scalars, which saves three full-size passes per step.

    State: ``{"time": int, "moment_1": Tensor, "moment_2": Tensor[, "max_moment_2": Tensor]}``.
    With amsgrad the running maximum of the second moment replaces it, as in Burn and PyTorch.
    """
    squared = grad * grad
    if state is None:
        time = 1
        moment_1 = grad * (1.0 - beta_1)
        moment_2 = squared * (1.0 - beta_2)
    else:
        time = int(state["time"]) + 1
        moment_1 = state["moment_1"] * beta_1 + grad * (1.0 - beta_1)
        moment_2 = state["moment_2"] * beta_2 + squared * (1.0 - beta_2)
    new_state: dict[str, Any] = {"time": time, "moment_1": moment_1, "moment_2": moment_2}
    second = moment_2
    if amsgrad:
        previous = None if state is None else state.get("max_moment_2")
        second = moment_2 if previous is None else previous.mask_where(moment_2 > previous, moment_2)
        new_state["max_moment_2"] = second
    bias_correction_2_sqrt = math.sqrt(1.0 - beta_2**time)
    step_size = lr * bias_correction_2_sqrt / (1.0 - beta_1**time)
    return moment_1 * step_size / (second.sqrt() + epsilon * bias_correction_2_sqrt), new_state
