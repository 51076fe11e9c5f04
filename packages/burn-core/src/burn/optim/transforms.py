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
        return grad.add(tensor.mul(self.penalty))  # methods: the product's buffer is reused


@config
class MomentumConfig:
    """Momentum with Burn's defaults: ``v = momentum * v + (1 - dampening) * grad`` (the first step
    takes ``v = grad``); the update is ``v``, or ``grad + momentum * v`` with Nesterov."""

    momentum: float = 0.9
    dampening: float = 0.1
    nesterov: bool = False

    def transform(self, grad: Tensor, velocity: Tensor | None) -> tuple[Tensor, Tensor]:
        # Named methods, not operators, so that temporaries' buffers are reused (burn.tensor._ownership).
        velocity = (
            grad if velocity is None else velocity.mul(self.momentum).add(grad.mul(1.0 - self.dampening))
        )
        update = grad.add(velocity.mul(self.momentum)) if self.nesterov else velocity
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
    moment_1, second, new_state, step_size, eps = _moments(grad, state, beta_1, beta_2, epsilon, amsgrad, lr)
    return moment_1.mul(step_size).div(second.sqrt().add(eps)), new_state


def adam_apply(
    tensor: Tensor,
    grad: Tensor,
    state: dict[str, Any] | None,
    beta_1: float,
    beta_2: float,
    epsilon: float,
    amsgrad: bool,
    lr: float,
) -> tuple[Tensor, dict[str, Any]]:
    """``tensor - adaptive_moments(...)`` in one expression, so that the update is a temporary
    whose buffer receives the new tensor (the same bits as the two calls)."""
    moment_1, second, new_state, step_size, eps = _moments(grad, state, beta_1, beta_2, epsilon, amsgrad, lr)
    return tensor.sub(moment_1.mul(step_size).div(second.sqrt().add(eps))), new_state


def _moments(
    grad: Tensor,
    state: dict[str, Any] | None,
    beta_1: float,
    beta_2: float,
    epsilon: float,
    amsgrad: bool,
    lr: float,
) -> tuple[Tensor, Tensor, dict[str, Any], float, float]:
    """The new moments, the second moment used, the new state, and the step's two scalars.

    Written with named methods on temporaries (``x.mul(c).add(y)``): their buffers are reused by
    the next op (burn.tensor._ownership), where operators would allocate a fresh array each. Adding
    in either order gives the same bits, so ``m * b1 + g * c`` is computed as it always was.
    """
    if state is None:
        time = 1
        moment_1 = grad.mul(1.0 - beta_1)
        moment_2 = grad.mul(grad).mul(1.0 - beta_2)
    else:
        time = int(state["time"]) + 1
        moment_1 = state["moment_1"].mul(beta_1).add(grad.mul(1.0 - beta_1))
        moment_2 = state["moment_2"].mul(beta_2).add(grad.mul(grad).mul(1.0 - beta_2))
    new_state: dict[str, Any] = {"time": time, "moment_1": moment_1, "moment_2": moment_2}
    second = moment_2
    if amsgrad:
        previous = None if state is None else state.get("max_moment_2")
        second = moment_2 if previous is None else previous.mask_where(moment_2 > previous, moment_2)
        new_state["max_moment_2"] = second
    bias_correction_2_sqrt = math.sqrt(1.0 - beta_2**time)
    step_size = lr * bias_correction_2_sqrt / (1.0 - beta_1**time)
    return moment_1, second, new_state, step_size, epsilon * bias_correction_2_sqrt
