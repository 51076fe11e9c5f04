"""AdaGrad with learning-rate decay (Burn's ``AdaGrad``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.program_update import ProgramUpdate, UpdateBuilder
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

    def program_update(self) -> ProgramUpdate | None:
        """`step`'s ops once the sum exists, the decayed learning rate a scalar input computed
        from the lr and the step count; None for a subclass that changes `step`."""
        if type(self).step is not AdaGrad.step:
            return None
        penalty = None if self.weight_decay is None else float(self.weight_decay.penalty)
        epsilon, lr_decay = self.epsilon, self.lr_decay

        def emit(b: UpdateBuilder, param: Any, grad: Any, states: tuple[Any, ...]) -> tuple[Any, ...]:
            if penalty is not None:
                grad = b.call("float_add", grad, b.call("float_mul_scalar", param, penalty))
            total = b.call("float_add", states[0], b.call("float_mul", grad, grad))
            denom = b.call("float_add_scalar", b.call("float_sqrt", total), epsilon)
            update = b.call("float_mul_scalar", b.call("float_div", grad, denom), b.scalar("lr_t"))
            return b.call("float_sub", param, update), total

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            time = int(state["time"]) + 1
            return (lr / (1.0 + (time - 1) * lr_decay),)

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> dict[str, Any]:
            return {"time": int(state["time"]) + 1, "sum": tensors[0]}

        return ProgramUpdate("adagrad", ("sum",), scalars, next_state, emit=emit)


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
