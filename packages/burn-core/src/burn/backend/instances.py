"""Every live backend instance, for tools that must reach all of them (the profiler).

`Backend.__init__` registers each instance here. Tools that instrument backends (`burn.profile`)
walk `live()` when they start, and add a hook to `ON_NEW` to catch backends built while they run.
The registry holds weak references only, so a backend is never kept alive by it.

Example:
    >>> import burn
    >>> B = burn.backend("ndarray")  # doctest: +SKIP
    >>> B in live()  # doctest: +SKIP
    True
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn.backend.base import Backend

__all__ = ["ON_NEW", "live", "register"]

_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()
ON_NEW: list[Callable[[Backend], None]] = []
"""Called with each backend as `Backend.__init__` ends; empty (nothing called) unless a tool runs."""


def register(backend: Backend) -> None:
    """Record `backend` as live and tell the `ON_NEW` hooks (called by `Backend.__init__`)."""
    _LIVE.add(backend)
    for hook in ON_NEW:
        hook(backend)


def live() -> list[Backend]:
    """The backends alive now, in no particular order."""
    return list(_LIVE)
