"""Fused optimizer updates: one op per param instead of a dozen, so a backend can run them in
place and in fewer passes over memory.

Each op is a ``@default`` written with the plain float ops, so every backend has it; a backend
overrides it to be faster (NumPy: ``out=`` passes into the handed-over moments, one fresh array
per step; a GPU backend: one kernel). The override must return the default's values (up to the
dtype's rounding; burn-ndarray's are the same bits).

The state operands (Adam's moments, SGD's velocity, RMSProp's averages and buffer) are handed
over as in `burn.backend.ops.float`: the caller never uses them again, so a backend may write the
new state into their buffers where it proves that nothing else refers to them. So is `grad`
when `burn.optim` hands it over (a gradient taken out of the consumed `GradientsParams` that
nothing else holds, `burn.optim.transforms.take_grad`): a backend may then write the new param
into its buffer, under the same proof; a caller that reads the gradient again keeps a second
reference to it, as a tensor does. `param` is only read. Each op is the optimizer's
per-element update with its scalars given, the same float operations in the same order as
`burn.optim`'s unfused code, so that the default op and an override that keeps that order give
the optimizer's values.
"""

from __future__ import annotations

from typing import Any

from burn.backend.contract import default, family

P = Any  # an opaque primitive


@family("optim", grad=False, bound=None)
class OptimOps:
    """Fused updates used by `burn.optim` on inner (untracked) primitives."""

    @default(grad=False)
    def float_adam_step(
        self,
        param: P,
        grad: P,
        moment_1: P | None,
        moment_2: P | None,
        beta_1: float,
        beta_2: float,
        step_size: float,
        epsilon: float,
    ) -> tuple[P, P, P]:
        """One Adam update with the bias corrections folded into `step_size` and `epsilon`.

        ``m = moment_1 * beta_1 + grad * (1 - beta_1)``,
        ``v = moment_2 * beta_2 + (grad * grad) * (1 - beta_2)``,
        ``param - m / (sqrt(v) + epsilon) * step_size``; a moment given as None (the first step)
        counts as zero: ``m = grad * (1 - beta_1)``. Returns ``(new_param, m, v)``, all with
        `param`'s shape and dtype. `burn.optim.transforms.adam_apply` derives the scalars.
        """
        ops: Any = self
        first = ops.float_mul_scalar(grad, 1.0 - beta_1)
        m = first if moment_1 is None else ops.float_add(ops.float_mul_scalar(moment_1, beta_1), first)
        second = ops.float_mul_scalar(ops.float_mul(grad, grad), 1.0 - beta_2)
        v = second if moment_2 is None else ops.float_add(ops.float_mul_scalar(moment_2, beta_2), second)
        denominator = ops.float_add_scalar(ops.float_sqrt(v), epsilon)
        update = ops.float_mul_scalar(ops.float_div(m, denominator), step_size)
        return ops.float_sub(param, update), m, v

    @default(grad=False)
    def float_sgd_momentum_step(
        self,
        param: P,
        grad: P,
        velocity: P | None,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[P, P]:
        """One SGD update with momentum, the L2 weight decay folded in (Burn's ``Sgd``).

        ``g = grad + param * weight_decay`` (``g = grad`` when `weight_decay` is None),
        ``v = velocity * momentum + g * (1 - dampening)``, or ``v = g`` when `velocity` is None
        (the first step: no dampening, as in Burn and PyTorch),
        ``u = g + v * momentum`` with `nesterov`, else ``u = v``, and ``param - u * lr``.
        Returns ``(new_param, v)`` with `param`'s shape and dtype; on the first step without
        weight decay `v` may be `grad` itself. `burn.optim.transforms.momentum_apply` calls it.
        """
        ops: Any = self
        g = grad if weight_decay is None else ops.float_add(grad, ops.float_mul_scalar(param, weight_decay))
        if velocity is None:
            v = g
        else:
            damped = ops.float_mul_scalar(g, 1.0 - dampening)
            v = ops.float_add(ops.float_mul_scalar(velocity, momentum), damped)
        update = ops.float_add(g, ops.float_mul_scalar(v, momentum)) if nesterov else v
        return ops.float_sub(param, ops.float_mul_scalar(update, lr)), v

    @default(grad=False)
    def float_rmsprop_step(
        self,
        param: P,
        grad: P,
        square_avg: P | None,
        grad_avg: P | None,
        momentum_buffer: P | None,
        alpha: float,
        epsilon: float,
        centered: bool,
        momentum: float,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[P, P, P | None, P | None]:
        """One RMSProp update, optionally centered and with momentum (Burn's ``RmsProp``).

        ``g = grad + param * weight_decay`` (``g = grad`` when `weight_decay` is None),
        ``s = square_avg * alpha + (g * g) * (1 - alpha)``; with `centered`,
        ``a = grad_avg * alpha + g * (1 - alpha)`` and ``avg = s - a * a``, else ``avg = s``;
        ``u = g / (sqrt(avg) + epsilon)``; with ``momentum > 0``, ``b = momentum_buffer * momentum
        + u`` and ``u = b``; and ``param - u * lr``. A state given as None counts as zero (the
        first step: ``s = (g * g) * (1 - alpha)``), except the buffer, which then starts as
        ``b = u``. Returns ``(new_param, s, a, b)``: `a` is None unless `centered`, `b` None
        unless ``momentum > 0`` (`grad_avg`, `momentum_buffer` are then ignored).
        """
        ops: Any = self
        g = grad if weight_decay is None else ops.float_add(grad, ops.float_mul_scalar(param, weight_decay))
        squared = ops.float_mul_scalar(ops.float_mul(g, g), 1.0 - alpha)
        s = squared if square_avg is None else ops.float_add(ops.float_mul_scalar(square_avg, alpha), squared)
        a = None
        avg = s
        if centered:
            scaled = ops.float_mul_scalar(g, 1.0 - alpha)
            a = scaled if grad_avg is None else ops.float_add(ops.float_mul_scalar(grad_avg, alpha), scaled)
            avg = ops.float_sub(s, ops.float_mul(a, a))
        update = ops.float_div(g, ops.float_add_scalar(ops.float_sqrt(avg), epsilon))
        b = None
        if momentum > 0.0:
            if momentum_buffer is not None:
                update = ops.float_add(ops.float_mul_scalar(momentum_buffer, momentum), update)
            b = update
        return ops.float_sub(param, ops.float_mul_scalar(update, lr)), s, a, b
