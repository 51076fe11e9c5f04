"""Learning-rate schedulers run one after another (Burn's ``SequentialLrScheduler``, PyTorch's
``SequentialLR``)."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any

from burn.errors import ConfigError
from burn.module.config import config
from burn.optim.lr_scheduler._children import ChildConfig, build_child
from burn.optim.lr_scheduler.base import LrScheduler, SchedulerLike, record_children, record_int


@config
class SequentialLrSchedulerConfig:
    """`schedulers[i]` runs from step ``milestones[i - 1]`` (0 for the first) until step
    ``milestones[i]``; each scheduler starts from its own first step when it takes over. N
    schedulers need N - 1 milestones, positive and strictly increasing.

    Example:
        >>> from burn.optim.lr_scheduler import ExponentialLrSchedulerConfig, LinearLrSchedulerConfig
        >>> cfg = SequentialLrSchedulerConfig(
        ...     [LinearLrSchedulerConfig(0.1, 0.3, 2), ExponentialLrSchedulerConfig(0.5, 0.5)], [2])
        >>> s = cfg.init()
        >>> [round(s.step(), 10) for _ in range(4)]
        [0.1, 0.2, 0.5, 0.25]
    """

    schedulers: list[ChildConfig]
    milestones: list[int]

    def init(self) -> SequentialLrScheduler:
        """The scheduler; raises `ConfigError` for bad milestones or child configs."""
        try:
            return SequentialLrScheduler([build_child(c) for c in self.schedulers], self.milestones)
        except ValueError as exc:
            raise ConfigError(f"SequentialLrSchedulerConfig: {exc}") from None


class SequentialLrScheduler(LrScheduler):
    """See `SequentialLrSchedulerConfig`; built directly, it takes any schedulers or floats.

    State: ``step_count`` (steps taken) and the children's records.
    """

    kind = "sequential"

    def __init__(self, schedulers: Sequence[SchedulerLike], milestones: Sequence[int]) -> None:
        if not schedulers:
            raise ValueError("at least one scheduler is required")
        if len(milestones) + 1 != len(schedulers):
            raise ValueError(
                f"{len(schedulers)} schedulers need {len(schedulers) - 1} milestones, got {len(milestones)}"
            )
        previous = 0
        for m in milestones:
            if m <= previous:
                raise ValueError(
                    f"milestones must be positive and strictly increasing, got {list(milestones)}"
                )
            previous = m
        self.schedulers = [build_child(s) for s in schedulers]
        self.milestones = [int(m) for m in milestones]
        self.step_count = 0

    def step(self) -> float:
        # The active scheduler is the number of milestones already reached.
        index = bisect.bisect_right(self.milestones, self.step_count)
        lr = self.schedulers[index].step()
        self.step_count += 1
        return lr

    def _state(self) -> dict[str, Any]:
        return {"step_count": self.step_count, "schedulers": [s.to_record() for s in self.schedulers]}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        children = record_children(record, len(self.schedulers), self.kind)
        self.step_count = record_int(record, "step_count", self.kind)
        for scheduler, child in zip(self.schedulers, children, strict=True):
            scheduler.load_record(child)

    def __repr__(self) -> str:
        return f"SequentialLrScheduler({self.schedulers!r}, milestones={self.milestones!r})"
