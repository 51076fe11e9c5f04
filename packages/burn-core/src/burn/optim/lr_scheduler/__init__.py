"""Learning-rate schedulers: ``lr = scheduler.step()`` once per training step.

Every scheduler has a record (`to_record()` / `load_record(record)`) of plain Python scalars, so
any `burn.record` recorder saves it and training resumes exactly. A plain float works as a
constant scheduler wherever one is accepted (`as_scheduler`).

Example:
    >>> from burn.optim.lr_scheduler import (
    ...     CosineAnnealingLrSchedulerConfig, LinearLrSchedulerConfig, SequentialLrSchedulerConfig)
    >>> warmup_then_cosine = SequentialLrSchedulerConfig(
    ...     [LinearLrSchedulerConfig(1e-4, 1e-2, 10), CosineAnnealingLrSchedulerConfig(1e-2, 90)],
    ...     milestones=[10]).init()
    >>> lr = warmup_then_cosine.step()  # 1e-4, then rising for 10 steps, then annealing
"""

from burn.optim.lr_scheduler.base import ConstantLr, LrScheduler, SchedulerLike, as_scheduler
from burn.optim.lr_scheduler.composed import ComposedLrScheduler, ComposedLrSchedulerConfig
from burn.optim.lr_scheduler.cosine import CosineAnnealingLrScheduler, CosineAnnealingLrSchedulerConfig
from burn.optim.lr_scheduler.exponential import ExponentialLrScheduler, ExponentialLrSchedulerConfig
from burn.optim.lr_scheduler.linear import LinearLrScheduler, LinearLrSchedulerConfig
from burn.optim.lr_scheduler.noam import NoamLrScheduler, NoamLrSchedulerConfig
from burn.optim.lr_scheduler.sequential import SequentialLrScheduler, SequentialLrSchedulerConfig
from burn.optim.lr_scheduler.step import StepLrScheduler, StepLrSchedulerConfig

__all__ = [
    "ComposedLrScheduler",
    "ComposedLrSchedulerConfig",
    "ConstantLr",
    "CosineAnnealingLrScheduler",
    "CosineAnnealingLrSchedulerConfig",
    "ExponentialLrScheduler",
    "ExponentialLrSchedulerConfig",
    "LinearLrScheduler",
    "LinearLrSchedulerConfig",
    "LrScheduler",
    "NoamLrScheduler",
    "NoamLrSchedulerConfig",
    "SchedulerLike",
    "SequentialLrScheduler",
    "SequentialLrSchedulerConfig",
    "StepLrScheduler",
    "StepLrSchedulerConfig",
    "as_scheduler",
]
