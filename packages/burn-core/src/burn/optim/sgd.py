"""Stochastic gradient descent with optional momentum and weight decay (Burn's ``Sgd``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.program_update import ProgramUpdate, UpdateBuilder
from burn.optim.state import consumes_grad
from burn.optim.transforms import MomentumConfig, WeightDecayConfig, momentum_apply

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class Sgd(SimpleOptimizer[dict[str, Any]]):
    """``param -= lr * update``, the update being the gradient after weight decay and momentum.

    With momentum, the whole update is one fused op per param (`momentum_apply`, the backend's
    ``float_sgd_momentum_step``), the velocity updated in place where the backend can.

    State (only with momentum): ``{"velocity": Tensor}``.
    """

    def __init__(self, momentum: MomentumConfig | None, weight_decay: WeightDecayConfig | None) -> None:
        self.momentum = momentum
        self.weight_decay = weight_decay

    @consumes_grad
    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any] | None]:
        if self.momentum is not None:
            return momentum_apply(tensor, grad, state, self.momentum, self.weight_decay, lr)
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        return tensor.sub(grad.mul(lr)), state  # methods: the product's buffer is reused

    def program_update(self) -> ProgramUpdate | None:
        """``float_sgd_momentum_step`` with `momentum_apply`'s arguments (its path once the
        velocity exists), for SGD with momentum (Nesterov's too); plain SGD as its two or four
        ops (the weight decay's, then ``param - grad * lr``), stateless, so from the first step.
        Subclasses that change `step` keep the eager update."""
        momentum = self.momentum
        if type(self).step is not Sgd.step:
            return None
        if momentum is None:
            return self._plain_update()
        decay = None if self.weight_decay is None else float(self.weight_decay.penalty)
        fixed = (float(momentum.momentum), float(momentum.dampening), bool(momentum.nesterov), decay)

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            return (*fixed, float(lr))

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> dict[str, Any]:
            return {"velocity": tensors[0]}

        return ProgramUpdate("float_sgd_momentum_step", ("velocity",), scalars, next_state)

    def _plain_update(self) -> ProgramUpdate:
        """`step`'s ops without momentum: ``grad + param * penalty`` (weight decay), then
        ``param - grad * lr``, the lr a scalar input."""
        penalty = None if self.weight_decay is None else float(self.weight_decay.penalty)

        def emit(b: UpdateBuilder, param: Any, grad: Any, states: tuple[Any, ...]) -> tuple[Any, ...]:
            if penalty is not None:
                grad = b.call("float_add", grad, b.call("float_mul_scalar", param, penalty))
            return (b.call("float_sub", param, b.call("float_mul_scalar", grad, b.scalar("lr"))),)

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            return (float(lr),)

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> None:
            return None

        return ProgramUpdate("sgd", (), scalars, next_state, emit=emit)


@config
class SgdConfig:
    """Configuration of `Sgd` (Burn's ``SgdConfig``).

    Same update as ``torch.optim.SGD``. Differences: `MomentumConfig`'s default dampening is 0.1
    (Burn; PyTorch's is 0), and Nesterov momentum with dampening is allowed (PyTorch refuses it).

    Example:
        >>> optimizer = SgdConfig(momentum=MomentumConfig(0.9, 0.0, nesterov=True)).init()
        >>> type(optimizer.optimizer).__name__
        'Sgd'
    """

    momentum: MomentumConfig | None = None
    weight_decay: WeightDecayConfig | None = None
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        return OptimizerAdaptor(Sgd(self.momentum, self.weight_decay), clipping)
