"""Reusable gradient transforms: L2 weight decay, momentum, adaptive (Adam) moments, and the
fused updates built on them (`adam_apply`, `momentum_apply`) with the state handling they share
(`take`, `put_back`)."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.foundations import ownership as _ownership
from burn.module.config import config
from burn.optim.state import OwnedState
from burn.tensor import _owned_ops

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

_rc = sys.getrefcount


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
        # Named methods, not operators, so that temporaries' buffers are reused (burn.foundations.ownership).
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

    Computed as ``m / (sqrt(v) + eps * sqrt(bc2)) * (lr * sqrt(bc2) / bc1)`` (``bc = 1 - beta^t``),
    Burn's form: the same value as PyTorch's up to rounding, with the bias corrections and the
    learning rate folded into scalars, which saves three full-size passes per step.

    State: ``{"time": int, "moment_1": Tensor, "moment_2": Tensor[, "max_moment_2": Tensor]}``.
    With amsgrad the running maximum of the second moment replaces it, as in Burn and PyTorch.
    """
    moment_1, second, new_state, step_size, eps = _moments(grad, state, beta_1, beta_2, epsilon, amsgrad, lr)
    return moment_1.div(second.sqrt().add(eps)).mul(step_size), new_state


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
    """``tensor - lr * m_hat / (sqrt(v_hat) + eps)`` and the new state, through the backend's
    fused ``float_adam_step`` (`burn.backend.ops.optim`) unless `amsgrad`.

    The moments are taken out of an `OwnedState` (what `OptimizerAdaptor` passes): a moment that
    nothing else refers to then has its buffer handed to the backend, which writes the new moment
    into it (burn-ndarray: in place). A moment still held elsewhere (a record from `to_record()`,
    a plain dict passed by a caller) is only read. The gradient's buffer is handed over too when
    the state carries it as `OwnedState.grad` (see `take_grad`): burn-ndarray then writes the new
    param into it instead of a fresh array.
    """
    if grad.shape != tensor.shape:
        raise ShapeError(f"Adam: gradient shape {grad.shape} differs from the param's {tensor.shape}")
    if amsgrad:
        moment_1, second, new_state, step_size, eps = _moments(
            grad, state, beta_1, beta_2, epsilon, amsgrad, lr
        )
        return tensor.sub(moment_1.div(second.sqrt().add(eps)).mul(step_size)), new_state
    time = 1 if state is None else int(state["time"]) + 1
    step_size, eps = _folded_scalars(beta_1, beta_2, epsilon, lr, time)
    scalars = (beta_1, beta_2, step_size, eps)
    if state is None:
        new, m, v = _owned_ops.adam_step(tensor, grad, None, None, (False, False, False), scalars)
        return new, {"time": time, "moment_1": m, "moment_2": v}
    m_in, moves_1 = take(state, "moment_1")
    v_in, moves_2 = take(state, "moment_2")
    grad_moves = take_grad(state, grad)
    try:
        new, m, v = _owned_ops.adam_step(tensor, grad, m_in, v_in, (moves_1, moves_2, grad_moves), scalars)
    except BaseException:
        put_back(state, moment_1=m_in, moment_2=v_in)
        raise
    return new, {"time": time, "moment_1": m, "moment_2": v}


def momentum_apply(
    tensor: Tensor,
    grad: Tensor,
    state: dict[str, Any] | None,
    momentum: MomentumConfig,
    weight_decay: WeightDecayConfig | None,
    lr: float,
) -> tuple[Tensor, dict[str, Any]]:
    """``tensor - lr * update`` and the new state ``{"velocity": Tensor}``: `momentum`'s update of
    the gradient after `weight_decay` (``WeightDecayConfig.transform`` then
    ``MomentumConfig.transform``, the same values), through the backend's fused
    ``float_sgd_momentum_step`` (`burn.backend.ops.optim`).

    The velocity is taken out of an `OwnedState` as in `adam_apply`: held by nothing else, its
    buffer receives the new velocity (burn-ndarray: in place); else it is only read. A gradient
    handed over with the state may receive the new param (`take_grad`).
    """
    if grad.shape != tensor.shape:
        raise ShapeError(f"Sgd: gradient shape {grad.shape} differs from the param's {tensor.shape}")
    decay = None if weight_decay is None else float(weight_decay.penalty)
    velocity, moves = take(state, "velocity")
    grad_moves = take_grad(state, grad)
    try:
        new, v = _owned_ops.sgd_momentum_step(
            tensor, grad, velocity, (moves, grad_moves),
            float(momentum.momentum), float(momentum.dampening), bool(momentum.nesterov), decay, float(lr),
        )  # fmt: skip
    except BaseException:
        put_back(state, velocity=velocity)
        raise
    return new, {"velocity": v}


def take_grad(state: dict[str, Any] | None, grad: Tensor) -> bool:
    """Whether `grad`'s buffer may be handed over to a fused update: `OptimizerAdaptor` proved
    that nothing else refers to it and passed it as the `OwnedState`'s ``grad`` (only to a step
    marked `burn.optim.state.consumes_grad`, which calls the update with it directly). The mark
    is cleared: it is good for one update."""
    if not isinstance(state, OwnedState) or state.grad is None:
        return False
    moves = state.grad is grad
    state.grad = None
    return moves


def take(state: dict[str, Any] | None, key: str, optional: bool = False) -> tuple[Tensor | None, bool]:
    """The state's tensor at `key`, for a fused op, and whether its buffer may be handed over.

    From an `OwnedState` (what `OptimizerAdaptor` passes) the tensor is popped, and it moves if
    nothing else refers to it then; one still held elsewhere (a record from `to_record()`) and
    any tensor of a plain dict (a caller's) are only read. A missing key gives None if
    `optional`, else raises KeyError; a None `state` (the first step) gives None.
    """
    if state is None:
        return None, False
    if isinstance(state, OwnedState):
        tensor = state.pop(key, None) if optional else state.pop(key)
        # Proven here, where it is a local: a count of SOLE means nothing else refers to it. In a
        # statement of its own: inside ``return tensor, _rc(tensor) == ...`` the tuple being
        # built would hold a second reference.
        moves = tensor is not None and _rc(tensor) == _ownership.SOLE
        return tensor, moves
    return (state.get(key) if optional else state[key]), False


def put_back(state: dict[str, Any] | None, **tensors: Tensor | None) -> None:
    """Returns the tensors that `take` popped to their `OwnedState` after a failed step, so that
    `OptimizerAdaptor` keeps the state as it was."""
    if isinstance(state, OwnedState):
        for key, tensor in tensors.items():
            if tensor is not None:
                state[key] = tensor


def _folded_scalars(
    beta_1: float, beta_2: float, epsilon: float, lr: float, time: int
) -> tuple[float, float]:
    """Adam's step size and epsilon with the bias corrections folded in (Burn's form):
    ``lr * m_hat / (sqrt(v_hat) + eps) == m / (sqrt(v) + eps * sqrt(bc2)) * (lr * sqrt(bc2) / bc1)``
    with ``bc = 1 - beta^t``, which saves three full-size passes per step."""
    bias_correction_2_sqrt = math.sqrt(1.0 - beta_2**time)
    step_size = lr * bias_correction_2_sqrt / (1.0 - beta_1**time)
    return step_size, epsilon * bias_correction_2_sqrt


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
    the next op (burn.foundations.ownership), where operators would allocate a fresh array each. Adding
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
    step_size, eps = _folded_scalars(beta_1, beta_2, epsilon, lr, time)
    return moment_1, second, new_state, step_size, eps
