"""`Learner`: the training loop (train and validate every epoch, checkpoint, resume, stop early, log)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from burn.optim.base import Optimizer
from burn.optim.grads import GradientsParams
from burn.optim.lr_scheduler.base import LrScheduler, SchedulerLike, as_scheduler
from burn.train.checkpoint import Checkpointer
from burn.train.early_stopping import EarlyStopping
from burn.train.history import History
from burn.train.loader import DataLoader
from burn.train.metrics import (
    EpochAggregator,
    Metric,
    StepOutput,
    check_metrics,
    compute_all,
    default_metrics,
)
from burn.train.plot import MISSING_MATPLOTLIB, PLOT_NAME, plot_history
from burn.train.progress import Progress, make_progress

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.module.base import Module
    from burn.train.ddp import DataParallel

StepFn = Callable[[Any, Any], StepOutput]
"""``step_fn(model, batch) -> StepOutput``: the forward pass and the loss of one batch."""

CHECKPOINT_DIR = "checkpoints"


@dataclass
class TrainingResult:
    """What `Learner.fit` returns.

    Attributes:
        model: the model after the last epoch run (on the autodiff backend; ``.valid()`` for inference).
        history: every step's and epoch's metrics.
        epoch: the last epoch completed.
        stopped_early: early stopping ended the run before `num_epochs`.
        checkpoint: the newest checkpoint file, when a directory was given.
        files: the metrics CSV, JSON and plot written (by name: ``csv``, ``json``, ``plot``).
    """

    model: Any
    history: History
    epoch: int
    stopped_early: bool = False
    checkpoint: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)


class Learner:
    """Trains a model with an optimizer and a learning-rate schedule over data loaders.

    Every epoch: one pass over the training loader (forward through `step_fn`, backward,
    optimizer step with the scheduler's learning rate), then, given a validation loader, a pass
    with ``model.valid()`` on the inner backend (no graph, dropout off). Metrics are averaged per
    epoch; with a `directory`, each epoch ends with a checkpoint (model, optimizer, scheduler,
    counters, RNG state, history) and ``metrics.csv``/``metrics.json``; the run ends with a
    ``metrics.png`` when matplotlib is installed. ``fit(..., resume=True)`` continues from the
    latest checkpoint and gives the same parameters as a run that was never interrupted.

    Args:
        model: a module on an autodiff backend (``burn.backend("autodiff(ndarray)")``).
        optimizer: e.g. ``optim.AdamConfig().init()``.
        step_fn: ``step_fn(model, batch) -> StepOutput`` (loss, and output/targets for accuracy).
        lr: an `LrScheduler` or a constant learning rate.
        num_epochs: how many epochs `fit` runs in total (a resumed run counts the epochs done).
        valid_step_fn: the step for validation batches (default: `step_fn`).
        metrics: default loss and learning rate; add `AccuracyMetric()` for classifiers.
        directory: where checkpoints (``directory/checkpoints``) and metric logs go; None keeps
            everything in memory.
        keep_checkpoints: how many epoch checkpoints to keep.
        early_stopping: an `EarlyStopping`, checked after each epoch.
        seed: seeds the backend's random ops (initializers run lazily, dropout) at the start of a
            fresh run; a resumed run restores the generator's state instead.
        progress: ``"auto"`` (a tqdm bar on a terminal, plain lines otherwise), ``"bar"``,
            ``"plain"`` or ``"none"``.
        stream: where progress goes (default stdout).
        plot: write ``metrics.png`` at the end of `fit` (needs matplotlib: ``burn-core[plot]``).
        strategy: `burn.train.DataParallel()` trains one replica per rank (launched with
            ``mpiexec -n N``): rank-0 params broadcast, sharded loaders, averaged gradients and
            metrics; only rank 0 prints, logs and checkpoints (see `burn.train.ddp`).

    Example:
        >>> from burn import nn, optim
        >>> from burn.train import AccuracyMetric, Learner, LossMetric, StepOutput
        >>> def step(model, batch):
        ...     x, y = batch
        ...     logits = model(x)
        ...     return StepOutput(nn.CrossEntropyLoss()(logits, y), logits, y)
        >>> metrics = [LossMetric(), AccuracyMetric()]
        >>> learner = Learner(model, optim.AdamConfig().init(), step, lr=1e-3, num_epochs=5,
        ...                   metrics=metrics, directory="runs/demo")  # doctest: +SKIP
        >>> result = learner.fit(train_loader, valid_loader)  # doctest: +SKIP
    """

    def __init__(
        self,
        model: Module,
        optimizer: Optimizer,
        step_fn: StepFn,
        *,
        lr: SchedulerLike = 1e-3,
        num_epochs: int = 10,
        valid_step_fn: StepFn | None = None,
        metrics: list[Metric] | None = None,
        directory: str | Path | None = None,
        keep_checkpoints: int = 2,
        early_stopping: EarlyStopping | None = None,
        seed: int | None = None,
        progress: str | Progress = "auto",
        stream: TextIO | None = None,
        plot: bool = True,
        strategy: DataParallel | None = None,
    ) -> None:
        from burn.module.base import Module

        if not isinstance(model, Module):
            raise TypeError(f"Learner: model must be a burn.Module, got {type(model).__name__}")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"Learner: optimizer must be a burn.optim.Optimizer, got {type(optimizer).__name__}"
            )
        for name, fn in (("step_fn", step_fn), ("valid_step_fn", valid_step_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"Learner: {name} must be callable, got {type(fn).__name__}")
        if isinstance(num_epochs, bool) or not isinstance(num_epochs, int) or num_epochs < 1:
            raise ValueError(f"Learner: num_epochs must be a positive int, got {num_epochs!r}")
        if early_stopping is not None and not isinstance(early_stopping, EarlyStopping):
            raise TypeError(f"Learner: early_stopping must be an EarlyStopping, got {early_stopping!r}")
        self.model = model
        self.optimizer = optimizer
        self.scheduler: LrScheduler = as_scheduler(lr)
        self.step_fn = step_fn
        self.valid_step_fn = valid_step_fn if valid_step_fn is not None else step_fn
        self.num_epochs = num_epochs
        self.metrics = check_metrics(metrics if metrics is not None else default_metrics())
        self.directory = None if directory is None else Path(directory)
        self.checkpointer = (
            None
            if self.directory is None
            else Checkpointer(self.directory / CHECKPOINT_DIR, keep_checkpoints)
        )
        self.early_stopping = early_stopping
        self.seed = seed
        self.progress = make_progress(progress, stream) if isinstance(progress, str) else progress
        self.stream = stream
        self.plot = plot
        self.backend = _training_backend(model)
        self.strategy = strategy
        self._main = strategy is None or strategy.is_main  # prints, logs and checkpoints
        if strategy is not None:
            strategy.attach(self.backend)
            if not self._main:
                self.stream = strategy.quiet_stream()
                self.progress = make_progress("none", self.stream)

    # -- the loop -----------------------------------------------------------------------------
    def fit(
        self,
        train: DataLoader,
        valid: DataLoader | None = None,
        *,
        resume: bool = False,
        overwrite: bool = False,
    ) -> TrainingResult:
        """Train until `num_epochs` (or early stopping); returns the model and its history.

        Args:
            train: the training loader; its batches go to the model's device.
            valid: the validation loader, run through ``model.valid()`` on the inner backend.
            resume: continue from the latest checkpoint in ``directory/checkpoints``. A run that
                already reached `num_epochs` trains nothing: its final metrics are printed and
                returned (``result.history``, ``result.files``).
            overwrite: start a fresh run in a `directory` that holds another run's checkpoints,
                deleting them. Without it (and without `resume`) such a directory is refused, so
                that running a script twice never silently wipes the first run.

        Raises:
            FileNotFoundError: `resume` and no checkpoint exists.
            FileExistsError: neither `resume` nor `overwrite`, and `directory` holds checkpoints.
        """
        for name, loader in (("train", train), ("valid", valid)):
            if loader is not None and not isinstance(loader, DataLoader):
                raise TypeError(
                    f"Learner.fit: {name} must be a burn.train.DataLoader, got {type(loader).__name__}"
                )
        model, history, epoch, step = self.model, History(), 0, 0
        if resume:
            model, history, epoch, step = self._restore(model)
            if epoch >= self.num_epochs:
                return self._finished(model, history, epoch)
        else:
            refused: FileExistsError | None = None
            if self.checkpointer is not None and self._main:
                previous = self.checkpointer.latest()
                if previous is not None and not overwrite:
                    refused = FileExistsError(
                        f"Learner.fit: {self.directory} already holds a run (checkpoints up to epoch "
                        f"{previous}): pass resume=True to continue it, overwrite=True to start over "
                        f"(deleting it), or another directory"
                    )
                else:
                    self.checkpointer.clear()
            if self.strategy is not None:
                self.strategy.agree(refused)  # every rank stops when rank 0 refuses the directory
            elif refused is not None:
                raise refused
            if self.seed is not None:
                self.backend.seed(self.seed)
        if self.strategy is not None:
            model = self.strategy.prepare(model)
            train = self.strategy.loader(train)
            valid = None if valid is None else self.strategy.loader(valid, valid=True)
        device = _device_of(model)
        result = TrainingResult(model, history, epoch)
        while epoch < self.num_epochs:
            epoch += 1
            model, step = self._train_epoch(model, train, device, epoch, step, history)
            if valid is not None:
                self._valid_epoch(model, valid, epoch, history)
            stop = self._should_stop(epoch, history)
            result = TrainingResult(model, history, epoch, stopped_early=stop)
            if self.directory is not None and self._main:
                self._save(model, history, epoch, step, result)
            if stop:
                break
        self.model = model
        if self.directory is not None and self._main and self.plot and len(history):
            path = plot_history(history, self.directory / PLOT_NAME)
            if path is None:
                print(MISSING_MATPLOTLIB, file=self.stream)
            else:
                result.files["plot"] = path
        return result

    def _train_epoch(
        self, model: Any, loader: DataLoader, device: Any, epoch: int, step: int, history: History
    ) -> tuple[Any, int]:
        aggregator, started = EpochAggregator(), time.perf_counter()
        self.progress.start("train", epoch, self.num_epochs, len(loader))
        # Epoch e (from 1) uses the loader's order of epoch e - 1: the loader counts from 0.
        for iteration, batch in enumerate(loader.batches(device, epoch - 1), start=1):
            lr = self.scheduler.step()
            output = _checked(self.step_fn(model, batch), "step_fn")
            grads = GradientsParams.from_grads(output.loss.backward(), model)
            if self.strategy is not None:
                grads = self.strategy.reduce_grads(grads, model)
            model = self.optimizer.step(lr, model, grads)
            step += 1
            values = compute_all(self.metrics, output, lr)
            aggregator.add(values)
            current = {name: value for name, (value, _) in values.items()}
            history.add_step("train", epoch, iteration, step, current)
            self.progress.step(current)
        means = aggregator.means() if self.strategy is None else self.strategy.reduce_means(aggregator)
        history.add_epoch("train", epoch, means)
        self.progress.end(_summary(epoch, self.num_epochs, "train", means, time.perf_counter() - started))
        return model, step

    def _valid_epoch(self, model: Any, loader: DataLoader, epoch: int, history: History) -> None:
        aggregator, started = EpochAggregator(), time.perf_counter()
        valid_model = model.valid()
        device = _device_of(valid_model)
        self.progress.start("valid", epoch, self.num_epochs, len(loader))
        for iteration, batch in enumerate(loader.batches(device, epoch - 1), start=1):
            output = _checked(self.valid_step_fn(valid_model, batch), "valid_step_fn")
            values = compute_all(self.metrics, output, None)
            aggregator.add(values)
            current = {name: value for name, (value, _) in values.items()}
            history.add_step("valid", epoch, iteration, 0, current)
            self.progress.step(current)
        means = aggregator.means() if self.strategy is None else self.strategy.reduce_means(aggregator)
        history.add_epoch("valid", epoch, means)
        self.progress.end(_summary(epoch, self.num_epochs, "valid", means, time.perf_counter() - started))

    def _should_stop(self, epoch: int, history: History) -> bool:
        stopper = self.early_stopping
        if stopper is None:
            return False
        stop = stopper.update(epoch, history.last(stopper.split))
        if stop:
            print(
                f"early stopping after epoch {epoch}: {stopper.split} {stopper.metric} has not improved "
                f"for {stopper.patience} epochs (best {stopper.best:.6g} at epoch {stopper.best_epoch})",
                file=self.stream,
            )
        return stop

    def _finished(self, model: Any, history: History, epoch: int) -> TrainingResult:
        """`fit(resume=True)` on a run that already reached `num_epochs`: report, train nothing."""
        assert self.checkpointer is not None and self.directory is not None
        print(
            f"the run in {self.directory} is complete ({epoch}/{self.num_epochs} epochs): nothing to "
            "train; its final metrics:",
            file=self.stream,
        )
        for split in ("train", "valid"):
            means = {k: v for k, v in history.last(split).items() if isinstance(v, (int, float))}
            if means:
                print(_summary(epoch, self.num_epochs, split, means, None), file=self.stream)
        result = TrainingResult(model, history, epoch, checkpoint=self.checkpointer.path(epoch))
        if self._main:
            result.files["csv"], result.files["json"] = history.write(self.directory)
        plot = self.directory / PLOT_NAME
        if plot.is_file():
            result.files["plot"] = plot
        self.model = model
        return result

    # -- checkpoints ----------------------------------------------------------------------------
    def _save(self, model: Any, history: History, epoch: int, step: int, result: TrainingResult) -> None:
        assert self.checkpointer is not None and self.directory is not None
        state = {
            "epoch": epoch,
            "step": step,
            "model": model.into_record(),
            "optimizer": self.optimizer.to_record(),
            "scheduler": self.scheduler.to_record(),
            # JSON: a PCG64 state holds 128-bit ints, more than MessagePack's ints carry.
            "rng": json.dumps(self.backend.rng.bit_generator.state),
            "early_stopping": None if self.early_stopping is None else self.early_stopping.to_record(),
            "history": history.to_json(),
        }
        result.checkpoint = self.checkpointer.save(epoch, state)
        result.files["csv"], result.files["json"] = history.write(self.directory)

    def _restore(self, model: Any) -> tuple[Any, History, int, int]:
        if self.checkpointer is None:
            raise ValueError("Learner.fit(resume=True) needs the Learner's directory, where checkpoints are")
        state = self.checkpointer.load()
        model = model.load_record(state["model"])
        self.optimizer.load_record(state["optimizer"])
        self.scheduler.load_record(state["scheduler"])
        self.backend.rng.bit_generator.state = json.loads(state["rng"])
        if self.early_stopping is not None and state.get("early_stopping") is not None:
            self.early_stopping.load_record(state["early_stopping"])
        history = History.from_json(state["history"])
        epoch, step = state["epoch"], state["step"]
        print(f"resuming from {self.checkpointer.path(epoch)} (epoch {epoch}, step {step})", file=self.stream)
        return model, history, epoch, step

    def __repr__(self) -> str:
        return (
            f"Learner({type(self.model).__name__}, {self.optimizer!r}, {self.scheduler!r}, "
            f"num_epochs={self.num_epochs}, directory={self.directory})"
        )


# -- helpers --------------------------------------------------------------------------------------
def _training_backend(model: Module) -> Backend:
    params = model.params()
    if not params:
        raise ValueError(f"Learner: {type(model).__name__} has no params to train")
    # The device's owner, not `val().backend`: reading the value would run a lazy initializer.
    device = params[0].device
    owner: Backend | None = None if device is None else device.owner
    if owner is None:
        raise ValueError(f"Learner: {type(model).__name__}'s params are on no backend's device")
    backend = owner
    if not backend.ad_enabled:
        raise TypeError(
            f"Learner: the model is on {backend.name!r}, which has no autodiff; build it on "
            f"burn.backend('autodiff({backend.name})')"
        )
    return backend


def _device_of(model: Any) -> Any:
    devices = model.devices()
    if len(devices) != 1:
        raise ValueError(f"Learner: the model's params must be on one device, found {devices}")
    return devices[0]


def _checked(output: Any, name: str) -> StepOutput:
    if not isinstance(output, StepOutput):
        raise TypeError(f"Learner: {name} must return a burn.train.StepOutput, got {type(output).__name__}")
    return output


def _summary(epoch: int, num_epochs: int, split: str, means: dict[str, float], seconds: float | None) -> str:
    parts = [
        f"{name} {value:.3g}" if name == "lr" else f"{name} {value:.4f}" for name, value in means.items()
    ]
    took = "" if seconds is None else f"  ({seconds:.1f} s)"
    return f"epoch {epoch}/{num_epochs} {split:<5}  " + "  ".join(parts) + took
