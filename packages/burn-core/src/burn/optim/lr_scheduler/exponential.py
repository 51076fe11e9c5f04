"""Exponential learning-rate scheduler (Burn's ``ExponentialLrScheduler``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from burn.errors import ConfigError
from burn.module.config import config
from burn.optim.lr_scheduler.base import LrScheduler, record_float


@config
class ExponentialLrSchedulerConfig:
    """``initial_lr * gamma ** i`` at step ``i = 0, 1, ...`` (each step multiplies the previous
    learning rate by `gamma`). As in Burn, `initial_lr` and `gamma` must be in (0, 1].

    Example:
        >>> s = ExponentialLrSchedulerConfig(0.8, 0.5).init()
        >>> [s.step() for _ in range(3)]
        [0.8, 0.4, 0.2]
    """

    initial_lr: float
    gamma: float

    def init(self) -> ExponentialLrScheduler:
        """The scheduler; raises `ConfigError` for values out of range."""
        if not 0.0 < self.initial_lr <= 1.0:
            raise ConfigError(
                f"ExponentialLrSchedulerConfig: initial_lr must be in (0, 1], got {self.initial_lr}"
            )
        if not 0.0 < self.gamma <= 1.0:
            raise ConfigError(f"ExponentialLrSchedulerConfig: gamma must be in (0, 1], got {self.gamma}")
        return ExponentialLrScheduler(float(self.initial_lr), float(self.gamma))


class ExponentialLrScheduler(LrScheduler):
    """See `ExponentialLrSchedulerConfig`. State: ``lr``, the last learning rate returned (None
    before the first step). Burn starts from ``initial_lr / gamma`` instead; starting from None
    returns `initial_lr` exactly on the first step."""

    kind = "exponential"

    def __init__(self, initial_lr: float, gamma: float) -> None:
        self.initial_lr = initial_lr
        self.gamma = gamma
        self.lr: float | None = None

    def step(self) -> float:
        self.lr = self.initial_lr if self.lr is None else self.lr * self.gamma
        return self.lr

    def _state(self) -> dict[str, Any]:
        return {"lr": self.lr}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        self.lr = record_float(record, "lr", self.kind, optional=True)
