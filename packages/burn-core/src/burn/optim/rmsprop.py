"""RMSProp, optionally centered and with momentum (Burn's ``RmsProp``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.program_update import ProgramUpdate, UpdateBuilder
from burn.optim.state import consumes_grad
from burn.optim.transforms import WeightDecayConfig, put_back, take, take_grad
from burn.tensor import _owned_ops

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

    @consumes_grad
    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        """One fused op per param (the backend's ``float_rmsprop_step``), the state taken out of
        an `OwnedState` as in `burn.optim.transforms.adam_apply`: a tensor held by nothing else
        has its buffer reused for the new state (burn-ndarray: in place), and a gradient handed
        over with it for the new param."""
        if grad.shape != tensor.shape:
            raise ShapeError(f"RmsProp: gradient shape {grad.shape} differs from the param's {tensor.shape}")
        centered, momentum = self.centered, float(self.momentum)
        decay = None if self.weight_decay is None else float(self.weight_decay.penalty)
        square_avg, moves_s = take(state, "square_avg")
        grad_avg, moves_a = take(state, "grad_avg", optional=True) if centered else (None, False)
        buffer, moves_b = take(state, "momentum_buffer", optional=True) if momentum > 0.0 else (None, False)
        moves_g = take_grad(state, grad)
        scalars = (float(self.alpha), float(self.epsilon), centered, momentum, decay, float(lr))
        try:
            new, s, a, b = _owned_ops.rmsprop_step(
                tensor, grad, square_avg, grad_avg, buffer, (moves_s, moves_a, moves_b, moves_g), scalars
            )
        except BaseException:
            put_back(state, square_avg=square_avg, grad_avg=grad_avg, momentum_buffer=buffer)
            raise
        new_state: dict[str, Any] = {"square_avg": s}
        if a is not None:
            new_state["grad_avg"] = a
        if b is not None:
            new_state["momentum_buffer"] = b
        return new, new_state

    def program_update(self) -> ProgramUpdate | None:
        """``float_rmsprop_step`` with `step`'s arguments once the averages exist, the lr a
        scalar input; None for a subclass that changes `step`."""
        if type(self).step is not RmsProp.step:
            return None
        centered, momentum = self.centered, float(self.momentum)
        keys = ("square_avg", *(("grad_avg",) if centered else ()))
        keys += ("momentum_buffer",) if momentum > 0.0 else ()
        decay = None if self.weight_decay is None else float(self.weight_decay.penalty)
        fixed = (float(self.alpha), float(self.epsilon), centered, momentum, decay)

        def emit(b: UpdateBuilder, param: Any, grad: Any, states: tuple[Any, ...]) -> tuple[Any, ...]:
            given = dict(zip(keys, states, strict=True))
            new, s, a, m = b.call(
                "float_rmsprop_step", param, grad, given["square_avg"], given.get("grad_avg"),
                given.get("momentum_buffer"), *fixed, b.scalar("lr"),
                results=(True, True, centered, momentum > 0.0),
            )
            return (new, *(t for t in (s, a, m) if t is not None))

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            return (float(lr),)

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> dict[str, Any]:
            return dict(zip(keys, tensors, strict=True))

        return ProgramUpdate("float_rmsprop_step", keys, scalars, next_state, emit=emit)


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
