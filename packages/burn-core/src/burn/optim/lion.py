"""Lion, evolved sign momentum (Chen et al., 2023; Burn's ``Lion``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.program_update import ProgramUpdate, UpdateBuilder

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class Lion(SimpleOptimizer[dict[str, Any]]):
    """One momentum tensor ``m`` (zero at first)::

        update = sign(beta_1 * m + (1 - beta_1) * grad)
        param  = param * (1 - lr * weight_decay) - lr * update
        m      = beta_2 * m + (1 - beta_2) * grad

    Every coordinate moves by exactly ``lr`` (or 0 where the interpolation is 0), so Lion wants a
    learning rate 3-10x smaller than AdamW's and a larger weight decay.

    State: ``{"momentum": Tensor}``.
    """

    def __init__(self, beta_1: float, beta_2: float, weight_decay: float) -> None:
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.weight_decay = weight_decay

    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        if state is None:
            update = (grad * (1.0 - self.beta_1)).sign()
            momentum = grad * (1.0 - self.beta_2)
        else:
            previous = state["momentum"]
            update = (previous * self.beta_1 + grad * (1.0 - self.beta_1)).sign()
            momentum = previous * self.beta_2 + grad * (1.0 - self.beta_2)
        decay = 1.0 - lr * self.weight_decay
        kept = tensor if decay == 1.0 else tensor * decay
        return kept - update * lr, {"momentum": momentum}

    def program_update(self) -> ProgramUpdate | None:
        """`step`'s ops once the momentum exists, the decay factor ``1 - lr * weight_decay``
        and the lr scalar inputs (multiplying by exactly 1.0 where `step` skips the decay gives
        the same bits); None for a subclass that changes `step`."""
        if type(self).step is not Lion.step:
            return None
        beta_1, beta_2, weight_decay = self.beta_1, self.beta_2, self.weight_decay

        def emit(b: UpdateBuilder, param: Any, grad: Any, states: tuple[Any, ...]) -> tuple[Any, ...]:
            (previous,) = states
            mixed = b.call(
                "float_add", b.call("float_mul_scalar", previous, beta_1),
                b.call("float_mul_scalar", grad, 1.0 - beta_1),
            )
            update = b.call("float_sign", mixed)
            momentum = b.call(
                "float_add", b.call("float_mul_scalar", previous, beta_2),
                b.call("float_mul_scalar", grad, 1.0 - beta_2),
            )
            kept = param if weight_decay == 0.0 else b.call("float_mul_scalar", param, b.scalar("decay"))
            return b.call("float_sub", kept, b.call("float_mul_scalar", update, b.scalar("lr"))), momentum

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            return (lr,) if weight_decay == 0.0 else (1.0 - lr * weight_decay, lr)

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> dict[str, Any]:
            return {"momentum": tensors[0]}

        return ProgramUpdate("lion", ("momentum",), scalars, next_state, emit=emit)


@config
class LionConfig:
    """Configuration of `Lion`, with Burn's defaults (the paper's: betas 0.9 / 0.99, no decay).

    PyTorch has no Lion. Weight decay is decoupled, as in AdamW.

    Example:
        >>> LionConfig(weight_decay=0.1).init().optimizer.beta_2
        0.99
    """

    beta_1: float = 0.9
    beta_2: float = 0.99
    weight_decay: float = 0.0
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        return OptimizerAdaptor(Lion(self.beta_1, self.beta_2, self.weight_decay), clipping)
