"""`ProgramUpdate`: a `SimpleOptimizer`'s update of one param as one fused backend op or a short
sequence of backend ops, described so that a compiled training step (`burn.compile.step`) can
run it inside its replayed program.

The op's tensor operands are ``(param, grad, *state)``, its other arguments host values that
`scalars` computes at each call from the learning rate and the param's state (Adam's step count
and bias corrections): the program reads them as scalar inputs, so a new learning rate or step
never retraces. Its results are ``(new_param, *new_state)``, the state tensors in `state_keys`
order; `next_state` builds the state dict the eager step would have left.

An optimizer without one fused op (AdaGrad, Lion, Adan, plain SGD) gives `emit` instead: it
writes the eager step's backend ops, in the eager step's order and with its constants, through
an `UpdateBuilder`; each host value it asks of `UpdateBuilder.scalar` is the next value of
`scalars`. The program then computes what the eager step computes, op for op.

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
from typing import Any, Protocol

__all__ = ["ProgramUpdate", "UpdateBuilder"]


class UpdateBuilder(Protocol):
    """What `ProgramUpdate.emit` writes the update with (`burn.capture.step` implements it): its
    values are opaque handles of the program (the param, the gradient, the state tensors, and
    what `call` returns)."""

    def call(self, op: str, *args: Any, results: tuple[bool, ...] = (True,), boolean: bool = False) -> Any:
        """Appends backend op `op` (its tensor operands handles, its other arguments constants
        or `scalar` handles); returns its result, a handle of the param's shape and dtype (bool
        with `boolean`: a comparison), or a tuple with one handle (or None where `results` is
        False) per result when the op returns several."""
        ...

    def scalar(self, name: str) -> Any:
        """A host value read at each run: the next value of `ProgramUpdate.scalars`."""
        ...


@dataclass(frozen=True)
class ProgramUpdate:
    """How one param's update runs as the backend op `op` (see the module docstring).

    Attributes:
        op: the fused contract op (``"float_adam_step"``).
        state_keys: the state's tensors, in the op's operand order after ``(param, grad)``.
        scalars: ``scalars(lr, state) -> args``: the op's arguments after its tensors, for this
            call (the same host arithmetic as the eager step, so the same values).
        next_state: ``next_state(state, tensors) -> state``: the new state from the old one and
            the op's new state tensors (None for a stateless update: plain SGD keeps none).
        param_scale: None, or ``param_scale(lr) -> factor``: the param is first multiplied by
            that host value (``float_mul_scalar``), AdamW's decoupled decay ``1 - lr * wd``.
        emit: None (the update is `op`), or ``emit(builder, param, grad, states) -> (new_param,
            *new_states)``: the update as backend ops (see the module docstring); `scalars`
            then gives the values of its `UpdateBuilder.scalar` handles, in the order asked.
    """

    op: str
    state_keys: tuple[str, ...]
    scalars: Callable[[float, dict[str, Any]], tuple[Any, ...]]
    next_state: Callable[[dict[str, Any], tuple[Any, ...]], dict[str, Any] | None]
    param_scale: Callable[[float], float] | None = None
    emit: Callable[[UpdateBuilder, Any, Any, tuple[Any, ...]], tuple[Any, ...]] | None = None

    def ready(self, state: Any) -> bool:
        """Whether `state` holds every state tensor (the first step, without state, runs the
        eager update: its op calls differ, the state being None). A stateless update (plain
        SGD) is always ready."""
        if not self.state_keys:
            return True
        return isinstance(state, dict) and all(state.get(k) is not None for k in self.state_keys)
