"""Noam learning-rate scheduler ("Attention Is All You Need"; Burn's ``NoamLrScheduler``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from burn.errors import ConfigError
from burn.module.config import config
from burn.optim.lr_scheduler.base import LrScheduler, record_int


@config
class NoamLrSchedulerConfig:
    """``factor * model_size^-0.5 * min(t^-0.5, t * warmup_steps^-1.5)`` at step ``t = 1, 2, ...``:
    a linear warm-up for `warmup_steps` steps, then a decay in ``1 / sqrt(t)``.

    Example:
        >>> s = NoamLrSchedulerConfig(2.0, warmup_steps=4, model_size=16).init()
        >>> [round(s.step(), 6) for _ in range(6)]
        [0.0625, 0.125, 0.1875, 0.25, 0.223607, 0.204124]
    """

    factor: float
    warmup_steps: int = 4000
    model_size: int = 512

    def init(self) -> NoamLrScheduler:
        """The scheduler; raises `ConfigError` when `warmup_steps` or `model_size` is 0."""
        if self.warmup_steps < 1:
            raise ConfigError(
                f"NoamLrSchedulerConfig: warmup_steps must be at least 1, got {self.warmup_steps}"
            )
        if self.model_size < 1:
            raise ConfigError(f"NoamLrSchedulerConfig: model_size must be at least 1, got {self.model_size}")
        return NoamLrScheduler(float(self.factor), self.warmup_steps, self.model_size)


class NoamLrScheduler(LrScheduler):
    """See `NoamLrSchedulerConfig`. State: ``step_count``, the steps taken so far."""

    kind = "noam"

    def __init__(self, factor: float, warmup_steps: int, model_size: int) -> None:
        self.factor = factor
        self.warmup_steps = float(warmup_steps)
        self.model_size = float(model_size)
        self.step_count = 0

    def step(self) -> float:
        self.step_count += 1
        t = float(self.step_count)
        return self.factor * self.model_size**-0.5 * min(t**-0.5, t * self.warmup_steps**-1.5)

    def _state(self) -> dict[str, Any]:
        return {"step_count": self.step_count}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        self.step_count = record_int(record, "step_count", self.kind)
