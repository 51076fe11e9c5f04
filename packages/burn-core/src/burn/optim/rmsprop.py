"""RMSProp, optionally centered and with momentum (Burn's ``RmsProp``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.transforms import WeightDecayConfig

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class RmsProp(SimpleOptimizer[dict[str, Any]]):
    """After ``grad += penalty * param`` (weight decay, if set)::

        square_avg = alpha * square_avg + (1 - alpha) * grad^2
        grad_avg   = alpha * grad_avg + (1 - alpha) * grad          (centered only)
        avg        = square_avg - grad_avg^2  if centered else  square_avg
        step       = grad / (sqrt(avg) + eps)
        buf        = momentum * buf + step;  step = buf             (momentum > 0 only)
        param     -= lr * step

    The averages start from zero, so the first step has ``square_avg = (1 - alpha) * grad^2``.

    State: ``{"square_avg": Tensor[, "grad_avg": Tensor][, "momentum_buffer": Tensor]}``.
    """

    def __init__(
        self,
        alpha: float,
        momentum: float,
        epsilon: float,
        centered: bool,
        weight_decay: WeightDecayConfig | None,
    ) -> None:
        self.alpha = alpha
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered
        self.weight_decay = weight_decay

    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        alpha = self.alpha
        squared = grad * grad * (1.0 - alpha)
        square_avg = squared if state is None else state["square_avg"] * alpha + squared
        new_state: dict[str, Any] = {"square_avg": square_avg}
        avg = square_avg
        if self.centered:
            scaled = grad * (1.0 - alpha)
            previous = None if state is None else state.get("grad_avg")
            grad_avg = scaled if previous is None else previous * alpha + scaled
            new_state["grad_avg"] = grad_avg
            avg = square_avg - grad_avg * grad_avg
        update = grad / (avg.sqrt() + self.epsilon)
        if self.momentum > 0.0:
            buffer = None if state is None else state.get("momentum_buffer")
            update = update if buffer is None else buffer * self.momentum + update
            new_state["momentum_buffer"] = update
        return tensor - update * lr, new_state


@config
class RmsPropConfig:
    """Configuration of `RmsProp`, with Burn's defaults.

    Same update as ``torch.optim.RMSprop``; the defaults differ: Burn uses ``momentum=0.9`` and
    ``epsilon=1e-5``, PyTorch ``momentum=0`` and ``eps=1e-8``.

    Example:
        >>> RmsPropConfig(centered=True).init().optimizer.momentum
        0.9
    """

    alpha: float = 0.99
    momentum: float = 0.9
    epsilon: float = 1e-5
    centered: bool = False
    weight_decay: WeightDecayConfig | None = None
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        optimizer = RmsProp(self.alpha, self.momentum, self.epsilon, self.centered, self.weight_decay)
        return OptimizerAdaptor(optimizer, clipping)
