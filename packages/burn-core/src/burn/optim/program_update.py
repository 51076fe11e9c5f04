"""`ProgramUpdate`: a `SimpleOptimizer`'s update of one param as one fused backend op, described
so that a compiled training step (`burn.compile.step`) can run it inside its replayed program.

The op's tensor operands are ``(param, grad, *state)``, its other arguments host values that
`scalars` computes at each call from the learning rate and the param's state (Adam's step count
and bias corrections): the program reads them as scalar inputs, so a new learning rate or step
never retraces. Its results are ``(new_param, *new_state)``, the state tensors in `state_keys`
order; `next_state` builds the state dict the eager step would have left.

Example:
    >>> from burn.optim import AdamConfig
    >>> update = AdamConfig().init().optimizer.program_update()
    >>> update.op, update.state_keys
    ('float_adam_step', ('moment_1', 'moment_2'))
    >>> update.scalars(1e-3, {"time": 1})[:2]
    (0.9, 0.999)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ProgramUpdate"]


@dataclass(frozen=True)
class ProgramUpdate:
    """How one param's update runs as the backend op `op` (see the module docstring).

    Attributes:
        op: the fused contract op (``"float_adam_step"``).
        state_keys: the state's tensors, in the op's operand order after ``(param, grad)``.
        scalars: ``scalars(lr, state) -> args``: the op's arguments after its tensors, for this
            call (the same host arithmetic as the eager step, so the same values).
        next_state: ``next_state(state, tensors) -> state``: the new state from the old one and
            the op's new state tensors.
        param_scale: None, or ``param_scale(lr) -> factor``: the param is first multiplied by
            that host value (``float_mul_scalar``), AdamW's decoupled decay ``1 - lr * wd``.
    """

    op: str
    state_keys: tuple[str, ...]
    scalars: Callable[[float, dict[str, Any]], tuple[Any, ...]]
    next_state: Callable[[dict[str, Any], tuple[Any, ...]], dict[str, Any]]
    param_scale: Callable[[float], float] | None = None

    def ready(self, state: Any) -> bool:
        """Whether `state` holds every state tensor (the first step, without state, runs the
        eager update: its op call differs, the state being None)."""
        return isinstance(state, dict) and all(state.get(k) is not None for k in self.state_keys)
