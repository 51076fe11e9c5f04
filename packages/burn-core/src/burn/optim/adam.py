"""Adam (coupled L2 weight decay) and AdamW (decoupled weight decay), with AMSGrad."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from burn.module.config import config
from burn.optim.base import OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClippingConfig
from burn.optim.program_update import ProgramUpdate, UpdateBuilder
from burn.optim.state import consumes_grad
from burn.optim.transforms import WeightDecayConfig, _folded_scalars, adam_apply

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class Adam(SimpleOptimizer[dict[str, Any]]):
    """``param -= lr * m_hat / (sqrt(v_hat) + eps)`` with ``grad += penalty * param`` first."""

    def __init__(
        self,
        beta_1: float,
        beta_2: float,
        epsilon: float,
        amsgrad: bool,
        weight_decay: WeightDecayConfig | None,
    ) -> None:
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad
        self.weight_decay = weight_decay

    @consumes_grad
    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        return adam_apply(tensor, grad, state, self.beta_1, self.beta_2, self.epsilon, self.amsgrad, lr)

    def program_update(self) -> ProgramUpdate | None:
        """``float_adam_step`` with `adam_apply`'s scalars (its path after the first step); with
        the coupled weight decay, its two ops first; with AMSGrad, `adam_apply`'s op sequence
        (the running maximum of the second moment a third state tensor). None for a subclass
        that changes `step`."""
        if type(self).step is not Adam.step:
            return None
        if not self.amsgrad and self.weight_decay is None:
            return self._fused_update()
        penalty = None if self.weight_decay is None else float(self.weight_decay.penalty)
        return self._emitted_update(penalty, 0.0)

    def _fused_update(self) -> ProgramUpdate:
        """``float_adam_step`` with the scalars `adam_apply` derives from the lr and step count."""
        beta_1, beta_2, epsilon = self.beta_1, self.beta_2, self.epsilon

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            step_size, eps = _folded_scalars(beta_1, beta_2, epsilon, lr, int(state["time"]) + 1)
            return (beta_1, beta_2, step_size, eps)

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> dict[str, Any]:
            return {"time": int(state["time"]) + 1, "moment_1": tensors[0], "moment_2": tensors[1]}

        return ProgramUpdate("float_adam_step", ("moment_1", "moment_2"), scalars, next_state)

    def _emitted_update(self, penalty: float | None, decoupled: float) -> ProgramUpdate:
        """The eager step's ops: AdamW's decay ``param * (1 - lr * decoupled)`` (a scalar input;
        none when `decoupled` is 0), the coupled decay ``grad + param * penalty``, then
        ``float_adam_step`` or, with AMSGrad, `burn.optim.transforms._moments`' ops and the
        running maximum of the second moment."""
        beta_1, beta_2, epsilon, amsgrad = self.beta_1, self.beta_2, self.epsilon, self.amsgrad
        keys = ("moment_1", "moment_2", *(("max_moment_2",) if amsgrad else ()))

        def emit(b: UpdateBuilder, param: Any, grad: Any, states: tuple[Any, ...]) -> tuple[Any, ...]:
            kept = param if decoupled == 0.0 else b.call("float_mul_scalar", param, b.scalar("decay"))
            if penalty is not None:
                grad = b.call("float_add", grad, b.call("float_mul_scalar", param, penalty))
            if not amsgrad:
                return b.call(  # type: ignore[no-any-return]
                    "float_adam_step", kept, grad, *states, beta_1, beta_2,
                    b.scalar("step_size"), b.scalar("epsilon"), results=(True, True, True),
                )
            moment_1, moment_2, previous = states
            moment_1 = b.call(
                "float_add", b.call("float_mul_scalar", moment_1, beta_1),
                b.call("float_mul_scalar", grad, 1.0 - beta_1),
            )
            squared = b.call("float_mul_scalar", b.call("float_mul", grad, grad), 1.0 - beta_2)
            moment_2 = b.call("float_add", b.call("float_mul_scalar", moment_2, beta_2), squared)
            grown = b.call("float_greater", moment_2, previous, boolean=True)
            second = b.call("float_mask_where", previous, grown, moment_2)
            denom = b.call("float_add_scalar", b.call("float_sqrt", second), b.scalar("epsilon"))
            step = b.call("float_mul_scalar", b.call("float_div", moment_1, denom), b.scalar("step_size"))
            return b.call("float_sub", kept, step), moment_1, moment_2, second

        def scalars(lr: float, state: dict[str, Any]) -> tuple[Any, ...]:
            step_size, eps = _folded_scalars(beta_1, beta_2, epsilon, lr, int(state["time"]) + 1)
            decay = () if decoupled == 0.0 else (1.0 - lr * decoupled,)
            return (*decay, step_size, eps) if not amsgrad else (*decay, eps, step_size)

        def next_state(state: dict[str, Any], tensors: tuple[Any, ...]) -> dict[str, Any]:
            return {"time": int(state["time"]) + 1, **dict(zip(keys, tensors, strict=True))}

        return ProgramUpdate("adam", keys, scalars, next_state, emit=emit)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``param *= 1 - lr * weight_decay`` before the update."""

    def __init__(
        self, beta_1: float, beta_2: float, epsilon: float, amsgrad: bool, weight_decay: float
    ) -> None:
        super().__init__(beta_1, beta_2, epsilon, amsgrad, None)
        self.decoupled_weight_decay = weight_decay

    @consumes_grad
    def step(
        self, lr: float, tensor: Tensor, grad: Tensor, state: dict[str, Any] | None
    ) -> tuple[Tensor, dict[str, Any]]:
        # Skipping the multiply by exactly 1.0 saves a full pass and changes no bit.
        decay = 1.0 - lr * self.decoupled_weight_decay
        decayed = tensor if decay == 1.0 else tensor * decay
        return adam_apply(decayed, grad, state, self.beta_1, self.beta_2, self.epsilon, self.amsgrad, lr)

    def program_update(self) -> ProgramUpdate | None:
        """Adam's ``float_adam_step`` after ``param * (1 - lr * weight_decay)`` (the factor a
        scalar input; without decay no multiply, as `step` skips it; multiplying by exactly 1.0
        when ``lr * weight_decay`` is 0 gives the same bits as skipping); with AMSGrad, Adam's
        AMSGrad ops after that multiply. None for a subclass that changes `step`."""
        if type(self).step is not AdamW.step:
            return None
        if self.amsgrad:
            return self._emitted_update(None, self.decoupled_weight_decay)
        update = self._fused_update()
        weight_decay = self.decoupled_weight_decay
        if weight_decay == 0.0:
            return update

        def decay(lr: float) -> float:
            return 1.0 - lr * weight_decay

        return replace(update, param_scale=decay)


@config
class AdamConfig:
    """Configuration of `Adam`, with Burn's defaults (note ``epsilon=1e-5``; PyTorch uses 1e-8).

    Example:
        >>> AdamConfig(weight_decay=WeightDecayConfig(1e-4)).init().optimizer.epsilon
        1e-05
    """

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    amsgrad: bool = False
    weight_decay: WeightDecayConfig | None = None
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        adam = Adam(self.beta_1, self.beta_2, self.epsilon, self.amsgrad, self.weight_decay)
        return OptimizerAdaptor(adam, clipping)


@config
class AdamWConfig:
    """Configuration of `AdamW`, with Burn's defaults (``weight_decay=1e-4``; PyTorch uses 1e-2)."""

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    amsgrad: bool = False
    weight_decay: float = 1e-4
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        adamw = AdamW(self.beta_1, self.beta_2, self.epsilon, self.amsgrad, self.weight_decay)
        return OptimizerAdaptor(adamw, clipping)
