"""`OwnedState`: an optimizer state dict that its receiver may take tensors out of, and the
gradient that `OptimizerAdaptor` may hand over with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

F = TypeVar("F", bound=Callable[..., Any])
_GRAD_CONSUMERS: set[Callable[..., Any]] = set()


def consumes_grad(step: F) -> F:
    """Marks a `SimpleOptimizer.step` of burn's own that passes its `grad` argument, unchanged and
    kept nowhere, to a fused update that reads `OwnedState.grad` (`transforms.take_grad`: Adam's,
    SGD with momentum's, RMSProp's): only to such a step does `OptimizerAdaptor` hand over a
    gradient. A subclass that overrides the step is not marked, so user code never gets one."""
    _GRAD_CONSUMERS.add(step)
    return step


def hands_over_grad(optimizer: object) -> bool:
    """Whether `optimizer`'s class steps with a `consumes_grad` method."""
    return getattr(type(optimizer), "step", None) in _GRAD_CONSUMERS


class OwnedState(dict[str, Any]):
    """A per-param state handed over by `OptimizerAdaptor`: a copy that nothing else refers to.

    A `SimpleOptimizer` may ``pop`` tensors out of it; one that is then held by nothing else may
    have its buffer reused for the new state (`burn.optim.transforms.adam_apply`). States passed
    as plain dicts (by a caller stepping a `SimpleOptimizer` directly) are never modified.

    Example:
        >>> state = OwnedState({"time": 3})
        >>> state.pop("time"), state
        (3, {})
    """

    __slots__ = ("grad",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.grad: Tensor | None = None
        """The step's gradient when `OptimizerAdaptor` proved that nothing else refers to it (taken
        out of the `GradientsParams` that the step consumes): a fused update may then hand its
        buffer to the backend, which may write the new param into it. None otherwise."""
