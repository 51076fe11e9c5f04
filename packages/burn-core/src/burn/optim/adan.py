"""Adan, the adaptive Nesterov momentum algorithm (Xie et al., 2022; Burn's ``Adan``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.program_update import ProgramUpdate, UpdateBuilder

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class Adan(SimpleOptimizer[dict[str, Any]]):
    """With ``diff = grad - previous_grad`` (0 on the first step) and ``t = 1, 2, ...``::

        m = beta_1 * m + (1 - beta_1) * grad
        d = beta_2 * d + (1 - beta_2) * diff
        n = beta_3 * n + (1 - beta_3) * (grad + beta_2 * diff)^2
        denom  = sqrt(n) / sqrt(1 - beta_3^t) + eps
        update = (m / (1 - beta_1^t) + beta_2 * d / (1 - beta_2^t)) / denom
        param  = (param - lr * update) / (1 + lr * weight_decay)        # proximal (default)
        param  = param * (1 - lr * weight_decay) - lr * update          # no_prox=True

    The betas are the decay rates of the moving averages, as in the reference implementation
    and Burn (the paper writes ``1 - beta``). The moments start from zero.

    State: ``{"time": int, "exp_avg", "exp_avg_diff", "exp_avg_sq", "previous_grad": Tensor}``.
    """

    def __init__(
        self, beta_1: float, beta_2: float, beta_3: float, epsilon: float, weight_decay: float, no_prox: bool
    ) -> None:
        self.beta_1, self.beta_2, self.beta_3 = beta_1, beta_2, beta_3
        self.epsilon = epsilon
        self.weight_decay = weight_decay
        self.no_prox = no_prox

    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        b1, b2, b3 = self.beta_1, self.beta_2, self.beta_3
        if state is None:
            time = 1
            exp_avg = grad * (1.0 - b1)
            exp_avg_sq = grad * grad * (1.0 - b3)
            exp_avg_diff = grad.zeros_like()
        else:
            time = int(state["time"]) + 1
            diff = grad - state["previous_grad"]
            corrected = diff * b2 + grad
            exp_avg = state["exp_avg"] * b1 + grad * (1.0 - b1)
            exp_avg_diff = state["exp_avg_diff"] * b2 + diff * (1.0 - b2)
            exp_avg_sq = state["exp_avg_sq"] * b3 + corrected * corrected * (1.0 - b3)
        denom = exp_avg_sq.sqrt() * (1.0 / math.sqrt(1.0 - b3**time)) + self.epsilon
        update = (exp_avg * (1.0 / (1.0 - b1**time)) + exp_avg_diff * (b2 / (1.0 - b2**time))) / denom
        decay = lr * self.weight_decay
        if self.no_prox:
            kept = tensor if decay == 0.0 else tensor * (1.0 - decay)
            new_tensor = kept - update * lr
        else:
            new_tensor = tensor - update * lr
            if decay != 0.0:
                new_tensor = new_tensor / (1.0 + decay)
        new_state = {
            "time": time,
            "exp_avg": exp_avg,
            "exp_avg_diff": exp_avg_diff,
            "exp_avg_sq": exp_avg_sq,
            "previous_grad": grad,
        }
        return new_tensor, new_state

    def program_update(self) -> ProgramUpdate | None:
        """`step`'s ops once the moments exist; the bias corrections (powers of the betas at
        the step count), the lr and the decay's factor or divisor are scalar inputs (a factor or
        divisor of exactly 1.0 where `step` skips the decay gives the same bits). The previous
        gradient stays a state tensor: the program's (clipped) gradient. None for a subclass
        that changes `step`."""
        if type(self).step is not Adan.step:
            return None
        b1, b2, b3 = self.beta_1, self.beta_2, self.beta_3
        epsilon, weight_decay, no_prox = self.epsilon, self.weight_decay, self.no_prox

        def emit(b: UpdateBuilder, param: Any, grad: Any, states: tuple[Any, ...]) -> tuple[Any, ...]:
            exp_avg, exp_avg_diff, exp_avg_sq, previous = states
            diff = b.call("float_sub", grad, previous)
            corrected = b.call("float_add", b.call("float_mul_scalar", diff, b2), grad)
            exp_avg = b.call(
                "float_add", b.call("float_mul_scalar", exp_avg, b1),
                b.call("float_mul_scalar", grad, 1.0 - b1),
            )
            exp_avg_diff = b.call(
                "float_add", b.call("float_mul_scalar", exp_avg_diff, b2),
                b.call("float_mul_scalar", diff, 1.0 - b2),
            )
            squared = b.call("float_mul_scalar", b.call("float_mul", corrected, corrected), 1.0 - b3)
            exp_avg_sq = b.call("float_add", b.call("float_mul_scalar", exp_avg_sq, b3), squared)
            root = b.call("float_mul_scalar", b.call("float_sqrt", exp_avg_sq), b.scalar("correction_3"))
            denom = b.call("float_add_scalar", root, epsilon)
            corrected_avg = b.call("float_mul_scalar", exp_avg, b.scalar("correction_1"))
            corrected_diff = b.call("float_mul_scalar", exp_avg_diff, b.scalar("correction_2"))
            update = b.call("float_div", b.call("float_add", corrected_avg, corrected_diff), denom)
            if no_prox:
                kept = param if weight_decay == 0.0 else b.call("float_mul_scalar", param, b.scalar("decay"))
                new = b.call("float_sub", kept, b.call("float_mul_scalar", update, b.scalar("lr")))
            else:
                new = b.call("float_sub", param, b.call("float_mul_scalar", update, b.scalar("lr")))
                if weight_decay != 0.0:
                    new = b.call("float_div_scalar", new, b.scalar("proximal"))
            return new, exp_avg, exp_avg_diff, exp_avg_sq, grad

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            time = int(state["time"]) + 1
            corrections = (1.0 / math.sqrt(1.0 - b3**time), 1.0 / (1.0 - b1**time), b2 / (1.0 - b2**time))
            decay = lr * weight_decay
            if weight_decay == 0.0:
                return (*corrections, lr)
            return (*corrections, 1.0 - decay, lr) if no_prox else (*corrections, lr, 1.0 + decay)

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> dict[str, Any]:
            return {"time": int(state["time"]) + 1, **dict(zip(_ADAN_STATE, tensors, strict=True))}

        return ProgramUpdate("adan", _ADAN_STATE, scalars, next_state, emit=emit)


# The state tensors in the program update's operand order.
_ADAN_STATE = ("exp_avg", "exp_avg_diff", "exp_avg_sq", "previous_grad")


@config
class AdanConfig:
    """Configuration of `Adan`, with Burn's (and the reference implementation's) defaults.

    PyTorch has no Adan. `weight_decay` is decoupled: proximal by default (divide by
    ``1 + lr * weight_decay`` after the step), or multiplicative with ``no_prox=True``.

    Example:
        >>> AdanConfig(weight_decay=0.02).init().optimizer.beta_2
        0.92
    """

    beta_1: float = 0.98
    beta_2: float = 0.92
    beta_3: float = 0.99
    epsilon: float = 1e-8
    weight_decay: float = 0.0
    no_prox: bool = False
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        optimizer = Adan(self.beta_1, self.beta_2, self.beta_3, self.epsilon, self.weight_decay, self.no_prox)
        return OptimizerAdaptor(optimizer, clipping)
