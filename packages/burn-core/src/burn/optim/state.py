"""`OwnedState`: an optimizer state dict that its receiver may take tensors out of."""

from __future__ import annotations

from typing import Any


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

    __slots__ = ()
