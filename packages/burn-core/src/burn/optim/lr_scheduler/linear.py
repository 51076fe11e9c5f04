"""Linear learning-rate scheduler (Burn's ``LinearLrScheduler``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from burn.errors import ConfigError
from burn.module.config import config
from burn.optim.lr_scheduler.base import LrScheduler, record_int


@config
class LinearLrSchedulerConfig:
    """A learning rate going from `initial_lr` to `final_lr` in `num_iters` equal steps, then
    staying at `final_lr`.

    The first `step()` returns `initial_lr`, step ``num_iters + 1`` returns `final_lr`. As in Burn,
    `initial_lr` must be in (0, 1] and `final_lr` in [0, 1]. (PyTorch's ``LinearLR`` scales a base
    lr by factors instead.)

    Example:
        >>> s = LinearLrSchedulerConfig(0.9, 0.5, 4).init()
        >>> [round(s.step(), 10) for _ in range(6)]
        [0.9, 0.8, 0.7, 0.6, 0.5, 0.5]
    """

    initial_lr: float
    final_lr: float
    num_iters: int

    def init(self) -> LinearLrScheduler:
        """The scheduler; raises `ConfigError` for values out of range."""
        if not 0.0 < self.initial_lr <= 1.0:
            raise ConfigError(f"LinearLrSchedulerConfig: initial_lr must be in (0, 1], got {self.initial_lr}")
        if not 0.0 <= self.final_lr <= 1.0:
            raise ConfigError(f"LinearLrSchedulerConfig: final_lr must be in [0, 1], got {self.final_lr}")
        if self.num_iters < 1:
            raise ConfigError(f"LinearLrSchedulerConfig: num_iters must be at least 1, got {self.num_iters}")
        return LinearLrScheduler(float(self.initial_lr), float(self.final_lr), self.num_iters)


class LinearLrScheduler(LrScheduler):
    """See `LinearLrSchedulerConfig`. State: ``remaining_iters``."""

    kind = "linear"

    def __init__(self, initial_lr: float, final_lr: float, num_iters: int) -> None:
        self.final_lr = final_lr
        self.step_size = (final_lr - initial_lr) / num_iters
        self.remaining_iters = num_iters + 1

    def step(self) -> float:
        if self.remaining_iters:
            self.remaining_iters -= 1
        return self.final_lr - self.step_size * self.remaining_iters

    def _state(self) -> dict[str, Any]:
        return {"remaining_iters": self.remaining_iters}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        self.remaining_iters = record_int(record, "remaining_iters", self.kind)
