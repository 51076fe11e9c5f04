"""The errors of `burn.distributed`."""

from __future__ import annotations

from burn.errors import BurnError


class DistributedError(BurnError, RuntimeError):
    """A process-group or collective failure (no engine, bad launch, a collective that failed)."""


class CollectiveMismatchError(DistributedError, ValueError):
    """Ranks called a collective with different ops, shapes, dtypes or roots (the message lists
    what each rank called)."""


class CollectiveTimeoutError(DistributedError, TimeoutError):
    """A collective did not complete within the timeout: another rank hung, died, or is waiting in
    a different collective."""
