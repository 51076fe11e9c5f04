"""AdaGrad with learning-rate decay (Burn's ``AdaGrad``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.transforms import WeightDecayConfig

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class AdaGrad(SimpleOptimizer[dict[str, Any]]):
    """``sum += grad^2``; ``param -= lr_t * grad / (sqrt(sum) + eps)`` with
    ``lr_t = lr / (1 + (t - 1) * lr_decay)`` at step ``t = 1, 2, ...``, after ``grad += penalty *
    param`` when weight decay is set.

    State: ``{"time": int, "sum": Tensor}``.
    """

    def __init__(self, lr_decay: float, epsilon: float, weight_decay: WeightDecayConfig | None) -> None:
        self.lr_decay = lr_decay
        self.epsilon = epsilon
        self.weight_decay = weight_decay

    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        squared = grad * grad
        if state is None:
            time, total = 1, squared
        else:
            time, total = int(state["time"]) + 1, state["sum"] + squared
        decayed_lr = lr / (1.0 + (time - 1) * self.lr_decay)
        update = grad / (total.sqrt() + self.epsilon) * decayed_lr
        return tensor - update, {"time": time, "sum": total}


@config
class AdaGradConfig:
    """Configuration of `AdaGrad`, with Burn's defaults.

    Same update as ``torch.optim.Adagrad`` (with ``initial_accumulator_value=0``); the default
    epsilon differs (Burn 1e-5, PyTorch 1e-10).

    Example:
        >>> AdaGradConfig(lr_decay=0.01).init().optimizer.epsilon
        1e-05
    """

    lr_decay: float = 0.0
    epsilon: float = 1e-5
    weight_decay: WeightDecayConfig | None = None
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        return OptimizerAdaptor(AdaGrad(self.lr_decay, self.epsilon, self.weight_decay), clipping)
