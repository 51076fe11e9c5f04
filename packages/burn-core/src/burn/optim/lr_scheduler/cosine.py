"""Cosine annealing learning-rate scheduler with warm restarts (Burn's
``CosineAnnealingLrScheduler``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from burn.errors import ConfigError
from burn.module.config import config
from burn.optim.lr_scheduler.base import LrScheduler, record_int


@config
class CosineAnnealingLrSchedulerConfig:
    """``min_lr + (initial_lr - min_lr) * (1 + cos(pi * i / num_iters)) / 2`` for ``i = 0 ..
    num_iters``, then back to `initial_lr` (a warm restart, as in SGDR and Burn).

    Unlike PyTorch's ``CosineAnnealingLR`` (which climbs back up along the cosine after
    ``T_max``), the cycle restarts at `initial_lr`. As in Burn, `initial_lr` must be in (0, 1] and
    `min_lr` in [0, initial_lr].

    Example:
        >>> s = CosineAnnealingLrSchedulerConfig(0.5, 2, min_lr=0.1).init()
        >>> [round(s.step(), 10) for _ in range(4)]
        [0.5, 0.3, 0.1, 0.5]
    """

    initial_lr: float
    num_iters: int
    min_lr: float = 0.0

    def init(self) -> CosineAnnealingLrScheduler:
        """The scheduler; raises `ConfigError` for values out of range."""
        name = "CosineAnnealingLrSchedulerConfig"
        if not 0.0 < self.initial_lr <= 1.0:
            raise ConfigError(f"{name}: initial_lr must be in (0, 1], got {self.initial_lr}")
        if not 0.0 <= self.min_lr <= self.initial_lr:
            raise ConfigError(
                f"{name}: min_lr must be in [0, initial_lr={self.initial_lr}], got {self.min_lr}"
            )
        if self.num_iters < 1:
            raise ConfigError(f"{name}: num_iters must be at least 1, got {self.num_iters}")
        return CosineAnnealingLrScheduler(float(self.initial_lr), float(self.min_lr), self.num_iters)


class CosineAnnealingLrScheduler(LrScheduler):
    """See `CosineAnnealingLrSchedulerConfig`. State: ``current_iter`` (-1 before the first step)."""

    kind = "cosine"

    def __init__(self, max_lr: float, min_lr: float, num_iters: int) -> None:
        self.max_lr = max_lr
        self.min_lr = min_lr
        self.num_iters = num_iters
        self.current_iter = -1

    def step(self) -> float:
        self.current_iter = (self.current_iter + 1) % (self.num_iters + 1)
        cos = math.cos(self.current_iter / self.num_iters * math.pi)
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + cos)

    def _state(self) -> dict[str, Any]:
        return {"current_iter": self.current_iter}

    def _load_state(self, record: Mapping[str, Any]) -> None:
        self.current_iter = record_int(record, "current_iter", self.kind)
