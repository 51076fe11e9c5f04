"""Fused optimizer updates: one op per param instead of a dozen, so a backend can run them in
place and in fewer passes over memory.

Each op is a ``@default`` written with the plain float ops, so every backend has it; a backend
overrides it to be faster (NumPy: ``out=`` passes into the handed-over moments, one fresh array
per step; a GPU backend: one kernel). The override must return the default's values (up to the
dtype's rounding; burn-ndarray's are the same bits).

Operands are handed over as in `burn.backend.reuse_ops`: the caller never uses `moment_1` and
`moment_2` again, so a backend may write the new moments into their buffers where it proves that
nothing else refers to them. `param` and `grad` are only read.
"""

from __future__ import annotations

from typing import Any

from burn.backend.contract import default

P = Any  # an opaque primitive


class OptimOps:
    """Fused updates used by `burn.optim` on inner (untracked) primitives."""

    @default
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
