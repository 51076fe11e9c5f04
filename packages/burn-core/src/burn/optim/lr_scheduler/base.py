"""`LrScheduler`: what every learning-rate scheduler does, the constant scheduler, and the
record helpers they share.

A scheduler is a small state machine: ``step()`` advances it and returns the learning rate to use
for this training step. Its state is a record made of plain Python scalars (ints, floats, lists,
dicts), so every recorder of `burn.record` saves it exactly and training resumes where it stopped.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, TypeVar

from burn.record.errors import RecordError

S = TypeVar("S", bound="LrScheduler")

# The key naming the scheduler type in every record, checked on load so that a record of one
# scheduler is never silently read by another.
KIND_KEY = "scheduler"


class LrScheduler(abc.ABC):
    """Base class of learning-rate schedulers (Burn's ``LrScheduler``).

    Subclasses implement `step`, `_state` and `_load_state`; `to_record`/`load_record` add and check
    the scheduler's kind.

    Example:
        >>> scheduler = ConstantLr(0.01)
        >>> scheduler.step(), scheduler.step()
        (0.01, 0.01)
        >>> ConstantLr(0.5).load_record(scheduler.to_record()).step()
        0.5
    """

    kind: str = ""

    @abc.abstractmethod
    def step(self) -> float:
        """Advance one training step and return the learning rate to use for it."""

    def to_record(self) -> dict[str, Any]:
        """The scheduler's state: a dict of Python scalars, saved by any `burn.record` recorder."""
        return {KIND_KEY: self.kind, **self._state()}

    def load_record(self: S, record: Mapping[str, Any]) -> S:
        """Restore the state saved by `to_record` (of a scheduler built with the same config);
        returns self. Raises `burn.record.RecordError` for a record of another scheduler type."""
        self._load_state(check_record(record, self.kind))
        return self

    @abc.abstractmethod
    def _state(self) -> dict[str, Any]:
        """The mutable state (not the config: the config rebuilds the scheduler)."""

    @abc.abstractmethod
    def _load_state(self, record: Mapping[str, Any]) -> None:
        """Set the mutable state from a checked record."""

    def __repr__(self) -> str:
        state = ", ".join(f"{k}={v!r}" for k, v in self._state().items())
        return f"{type(self).__name__}({state})"


class ConstantLr(LrScheduler):
    """Always the same learning rate (Burn implements this for a plain ``f64``). A plain float is
    accepted wherever a scheduler is (see `as_scheduler`).

    Example:
        >>> ConstantLr(1e-3).step()
        0.001
    """

    kind = "constant"

    def __init__(self, lr: float) -> None:
        self.lr = float(lr)

    def step(self) -> float:
        return self.lr

    def _state(self) -> dict[str, Any]:
        return {}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        return None

    def __repr__(self) -> str:
        return f"ConstantLr({self.lr!r})"


SchedulerLike = LrScheduler | float


def as_scheduler(scheduler: SchedulerLike) -> LrScheduler:
    """`scheduler` itself, or a `ConstantLr` for a plain number.

    Example:
        >>> as_scheduler(0.1)
        ConstantLr(0.1)
    """
    if isinstance(scheduler, LrScheduler):
        return scheduler
    if isinstance(scheduler, (int, float)) and not isinstance(scheduler, bool):
        return ConstantLr(float(scheduler))
    raise TypeError(f"expected an LrScheduler or a learning rate (float), got {type(scheduler).__name__}")


# -- record helpers ------------------------------------------------------------------------------
def check_record(record: Any, kind: str) -> Mapping[str, Any]:
    """`record` if it is a mapping saved by a scheduler of `kind`, else a RecordError."""
    if not isinstance(record, Mapping):
        raise RecordError(f"{kind} scheduler: expected a record dict, got {type(record).__name__}")
    saved = record.get(KIND_KEY)
    if saved != kind:
        raise RecordError(f"record of a {saved!r} scheduler cannot be loaded into a {kind!r} scheduler")
    return record


def record_int(record: Mapping[str, Any], key: str, kind: str) -> int:
    value = record.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"{kind} scheduler record: {key!r} must be an int, got {value!r}")
    return value


def record_float(record: Mapping[str, Any], key: str, kind: str, *, optional: bool = False) -> float | None:
    value = record.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise RecordError(f"{kind} scheduler record: {key!r} must be a float, got {value!r}")
    return float(value)


def record_children(record: Mapping[str, Any], count: int, kind: str) -> list[Any]:
    children = record.get("schedulers")
    if not isinstance(children, (list, tuple)) or len(children) != count:
        got = len(children) if isinstance(children, (list, tuple)) else children
        raise RecordError(f"{kind} scheduler record: expected {count} child records, got {got!r}")
    return list(children)
