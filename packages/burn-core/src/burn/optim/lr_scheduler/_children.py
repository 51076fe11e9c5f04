"""The scheduler configs that composed and sequential configs may hold (JSON-serializable)."""

from __future__ import annotations

from typing import Any

from burn.optim.lr_scheduler.base import ConstantLr, LrScheduler, as_scheduler
from burn.optim.lr_scheduler.cosine import CosineAnnealingLrSchedulerConfig
from burn.optim.lr_scheduler.exponential import ExponentialLrSchedulerConfig
from burn.optim.lr_scheduler.linear import LinearLrSchedulerConfig
from burn.optim.lr_scheduler.noam import NoamLrSchedulerConfig
from burn.optim.lr_scheduler.step import StepLrSchedulerConfig

# A plain float stands for a constant learning rate.
ChildConfig = (
    float
    | LinearLrSchedulerConfig
    | CosineAnnealingLrSchedulerConfig
    | ExponentialLrSchedulerConfig
    | StepLrSchedulerConfig
    | NoamLrSchedulerConfig
)


def build_child(child: Any) -> LrScheduler:
    """A scheduler from a child config, a float, or an already built scheduler."""
    if isinstance(child, LrScheduler):
        return child
    if isinstance(child, (int, float)) and not isinstance(child, bool):
        return ConstantLr(float(child))
    init = getattr(child, "init", None)
    if init is None:
        return as_scheduler(child)  # raises the TypeError naming the type
    scheduler = init()
    if not isinstance(scheduler, LrScheduler):
        raise TypeError(
            f"{type(child).__name__}.init() returned {type(scheduler).__name__}, not an LrScheduler"
        )
    return scheduler
