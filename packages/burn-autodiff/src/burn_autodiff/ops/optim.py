"""The optim family of `Autodiff`: the fused optimizer steps (Adam, SGD with momentum, RMSprop).

An update carries no gradient. With no operand tracked (the usual case: parameters and
gradients handed over detached), each step runs the inner backend's fused op on the inner
primitives. With a tracked operand, the default composition runs on this backend instead, so
that every op it is made of records its node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn_autodiff.node import ADTensor as AD

if TYPE_CHECKING:
    from burn.backend import Backend


class AutodiffOptimOps:
    """The optim family of `Autodiff` (mixed into it; see `burn.backend.ops.optim`)."""

    _in: Backend

    def float_adam_step(
        self,
        param: AD,
        grad: AD,
        moment_1: AD | None,
        moment_2: AD | None,
        beta_1: float,
        beta_2: float,
        step_size: float,
        epsilon: float,
    ) -> tuple[AD, AD, AD]:
        scalars = (beta_1, beta_2, step_size, epsilon)
        operands = (param, grad, moment_1, moment_2)
        if any(a is not None and a.node is not None for a in operands):
            from burn.backend.ops.optim import OptimOps

            backend: Any = self  # a tracked operand: the default composition records its nodes
            composed: tuple[AD, AD, AD] = OptimOps.float_adam_step(backend, *operands, *scalars)
            return composed
        m_in = None if moment_1 is None else moment_1.p
        v_in = None if moment_2 is None else moment_2.p
        new, m, v = self._in.float_adam_step(param.p, grad.p, m_in, v_in, *scalars)
        return AD(new, None), AD(m, None), AD(v, None)

    def float_sgd_momentum_step(
        self,
        param: AD,
        grad: AD,
        velocity: AD | None,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[AD, AD]:
        scalars = (momentum, dampening, nesterov, weight_decay, lr)
        if any(a is not None and a.node is not None for a in (param, grad, velocity)):
            from burn.backend.ops.optim import OptimOps

            backend: Any = self  # a tracked operand: the default composition records its nodes
            composed: tuple[AD, AD] = OptimOps.float_sgd_momentum_step(
                backend, param, grad, velocity, *scalars
            )
            return composed
        v_in = None if velocity is None else velocity.p
        new, v = self._in.float_sgd_momentum_step(param.p, grad.p, v_in, *scalars)
        return AD(new, None), AD(v, None)

    def float_rmsprop_step(
        self,
        param: AD,
        grad: AD,
        square_avg: AD | None,
        grad_avg: AD | None,
        momentum_buffer: AD | None,
        alpha: float,
        epsilon: float,
        centered: bool,
        momentum: float,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[AD, AD, AD | None, AD | None]:
        scalars = (alpha, epsilon, centered, momentum, weight_decay, lr)
        operands = (param, grad, square_avg, grad_avg, momentum_buffer)
        if any(a is not None and a.node is not None for a in operands):
            from burn.backend.ops.optim import OptimOps

            backend: Any = self  # a tracked operand: the default composition records its nodes
            composed: tuple[AD, AD, AD | None, AD | None] = OptimOps.float_rmsprop_step(
                backend, param, grad, square_avg, grad_avg, momentum_buffer, *scalars
            )
            return composed
        s_in = None if square_avg is None else square_avg.p
        a_in = None if grad_avg is None else grad_avg.p
        b_in = None if momentum_buffer is None else momentum_buffer.p
        new, s, a, b = self._in.float_rmsprop_step(param.p, grad.p, s_in, a_in, b_in, *scalars)
        return (
            AD(new, None),
            AD(s, None),
            None if a is None else AD(a, None),
            None if b is None else AD(b, None),
        )
