"""Step learning-rate scheduler (Burn's ``StepLrScheduler``, PyTorch's ``StepLR``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from burn.errors import ConfigError
from burn.module.config import config
from burn.optim.lr_scheduler.base import LrScheduler, record_int


@config
class StepLrSchedulerConfig:
    """`initial_lr` for `step_size` steps, then multiplied by `gamma` every `step_size` steps:
    ``initial_lr * gamma ** (i // step_size)`` at step ``i = 0, 1, ...``.

    As in Burn, a non-positive `initial_lr` or a `gamma` outside (0, 1) only warns (they can be
    useful when debugging); `step_size` must be at least 1.

    Example:
        >>> s = StepLrSchedulerConfig(0.5, 2, gamma=0.1).init()
        >>> [round(s.step(), 10) for _ in range(5)]
        [0.5, 0.5, 0.05, 0.05, 0.005]
    """

    initial_lr: float
    step_size: int
    gamma: float = 0.1

    def init(self) -> StepLrScheduler:
        """The scheduler; raises `ConfigError` when `step_size` is 0."""
        if self.step_size < 1:
            raise ConfigError(f"StepLrSchedulerConfig: step_size must be at least 1, got {self.step_size}")
        if self.initial_lr <= 0.0:
            warnings.warn(
                f"StepLrSchedulerConfig: initial_lr {self.initial_lr} is not positive", stacklevel=2
            )
        if not 0.0 < self.gamma < 1.0:
            warnings.warn(f"StepLrSchedulerConfig: gamma {self.gamma} is outside (0, 1)", stacklevel=2)
        return StepLrScheduler(float(self.initial_lr), self.step_size, float(self.gamma))


class StepLrScheduler(LrScheduler):
    """See `StepLrSchedulerConfig`. State: ``iter_idx`` (-1 before the first step)."""

    kind = "step"

    def __init__(self, initial_lr: float, step_size: int, gamma: float) -> None:
        self.initial_lr = initial_lr
        self.step_size = step_size
        self.gamma = gamma
        self.iter_idx = -1

    def step(self) -> float:
        self.iter_idx += 1
        return self.initial_lr * self.gamma ** (self.iter_idx // self.step_size)

    def _state(self) -> dict[str, Any]:
        return {"iter_idx": self.iter_idx}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        self.iter_idx = record_int(record, "iter_idx", self.kind)
