"""`LearnerConfig`: the Learner's plain settings as a `@burn.config` (saved with the run)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from burn.module.config import config
from burn.train.early_stopping import EarlyStopping

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from burn.module.base import Module
    from burn.optim.base import Optimizer
    from burn.optim.lr_scheduler.base import SchedulerLike
    from burn.train.learner import Learner, StepFn
    from burn.train.loggers import Logger
    from burn.train.metrics import Metric


@config
class LearnerConfig:
    """Builds a `Learner` from JSON-friendly settings.

    Attributes:
        num_epochs: epochs in total.
        keep_checkpoints: how many epoch checkpoints to keep.
        patience: stop after this many epochs without improvement of `stop_metric` (None: never).
        stop_metric: the metric early stopping watches.
        stop_split: ``"valid"`` or ``"train"``.
        stop_mode: ``"min"`` (loss) or ``"max"`` (accuracy).
        seed: seeds the backend's random ops at the start of a fresh run.
        progress: ``"auto"``, ``"bar"``, ``"plain"`` or ``"none"``.
        plot: write ``metrics.png`` (needs matplotlib).
        restore_best: with `patience`, return the best epoch's params (`EarlyStopping`'s
            ``restore_best``).
        grad_accumulation: batches per optimizer step (see `Learner`).
        checkpoint_every: also checkpoint every this many optimizer steps (None: epoch ends only).

    Example:
        >>> cfg = LearnerConfig(num_epochs=20, patience=3, stop_metric="accuracy", stop_mode="max")
        >>> LearnerConfig.from_json(cfg.to_json()) == cfg
        True
        >>> learner = cfg.init(model, optimizer, step, lr=1e-3, directory="runs/x")  # doctest: +SKIP
    """

    num_epochs: int = 10
    keep_checkpoints: int = 2
    patience: int | None = None
    stop_metric: str = "loss"
    stop_split: Literal["train", "valid"] = "valid"
    stop_mode: Literal["min", "max"] = "min"
    seed: int | None = None
    progress: Literal["auto", "bar", "plain", "none"] = "auto"
    plot: bool = True
    restore_best: bool = False
    grad_accumulation: int = 1
    checkpoint_every: int | None = None

    def init(
        self,
        model: Module,
        optimizer: Optimizer,
        step_fn: StepFn,
        *,
        lr: SchedulerLike = 1e-3,
        valid_step_fn: StepFn | None = None,
        metrics: list[Metric] | None = None,
        directory: str | Path | None = None,
        loggers: Sequence[Logger | str] | None = None,
        hparams: Mapping[str, Any] | None = None,
    ) -> Learner:
        """The `Learner` with these settings; its loggers get them as hyperparameters (beside
        `hparams`, which win on a clash)."""
        import dataclasses

        from burn.train.learner import Learner

        stopper = None
        if self.patience is not None:
            stopper = EarlyStopping(
                self.stop_metric,
                split=self.stop_split,
                mode=self.stop_mode,
                patience=self.patience,
                restore_best=self.restore_best,
            )
        return Learner(
            model,
            optimizer,
            step_fn,
            lr=lr,
            num_epochs=self.num_epochs,
            valid_step_fn=valid_step_fn,
            metrics=metrics,
            directory=directory,
            keep_checkpoints=self.keep_checkpoints,
            early_stopping=stopper,
            seed=self.seed,
            progress=self.progress,
            plot=self.plot,
            grad_accumulation=self.grad_accumulation,
            checkpoint_every=self.checkpoint_every,
            loggers=loggers,
            hparams={**dataclasses.asdict(self), **(hparams or {})},
        )
