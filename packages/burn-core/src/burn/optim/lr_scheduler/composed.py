"""Several learning-rate schedulers stepped together, their rates combined (Burn's
``ComposedLrScheduler``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Literal

from burn.errors import ConfigError
from burn.module.config import config
from burn.optim.lr_scheduler._children import ChildConfig, build_child
from burn.optim.lr_scheduler.base import LrScheduler, SchedulerLike, record_children

Reduction = Literal["avg", "sum", "prod"]


@config
class ComposedLrSchedulerConfig:
    """Step every scheduler each step and combine their rates: ``prod`` (default, as Burn),
    ``sum`` or ``avg``. A float child is a constant rate, e.g. a base lr times a schedule.

    Example:
        >>> from burn.optim.lr_scheduler import StepLrSchedulerConfig
        >>> cfg = ComposedLrSchedulerConfig([0.1, StepLrSchedulerConfig(1.0, 2, gamma=0.5)])
        >>> s = cfg.init()
        >>> [round(s.step(), 10) for _ in range(4)]
        [0.1, 0.1, 0.05, 0.05]
    """

    schedulers: list[ChildConfig] = field(default_factory=list)
    reduction: Reduction = "prod"

    def init(self) -> ComposedLrScheduler:
        """The scheduler; raises `ConfigError` if a child config is invalid."""
        if not self.schedulers:
            raise ConfigError("ComposedLrSchedulerConfig: at least one scheduler is required")
        return ComposedLrScheduler([build_child(c) for c in self.schedulers], self.reduction)


class ComposedLrScheduler(LrScheduler):
    """See `ComposedLrSchedulerConfig`; built directly, it takes any schedulers (composed and
    sequential ones included) or floats. Its record holds its children's records, in order."""

    kind = "composed"

    def __init__(self, schedulers: Sequence[SchedulerLike], reduction: Reduction = "prod") -> None:
        if reduction not in ("avg", "sum", "prod"):
            raise ValueError(
                f"ComposedLrScheduler: reduction must be 'avg', 'sum' or 'prod', got {reduction!r}"
            )
        if not schedulers:
            raise ValueError("ComposedLrScheduler: at least one scheduler is required")
        self.schedulers = [build_child(s) for s in schedulers]
        self.reduction = reduction

    def step(self) -> float:
        rates = [s.step() for s in self.schedulers]
        if self.reduction == "prod":
            out = 1.0
            for lr in rates:
                out *= lr
            return out
        if self.reduction == "sum":
            return sum(rates)
        n = float(len(rates))
        return sum(lr / n for lr in rates)  # Burn averages as a sum of lr / n

    def _state(self) -> dict[str, Any]:
        return {"schedulers": [s.to_record() for s in self.schedulers]}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        for scheduler, child in zip(
            self.schedulers, record_children(record, len(self.schedulers), self.kind), strict=True
        ):
            scheduler.load_record(child)

    def __repr__(self) -> str:
        return f"ComposedLrScheduler({self.schedulers!r}, reduction={self.reduction!r})"
