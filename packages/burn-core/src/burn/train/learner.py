"""`Learner`: the training loop (train and validate every epoch, checkpoint, resume, stop early, log)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from burn.amp import GradScaler, autocast
from burn.data.loader import DataLoader
from burn.optim.base import Optimizer
from burn.optim.grads import GradientsAccumulator, GradientsParams
from burn.optim.lr_scheduler.base import LrScheduler, SchedulerLike, as_scheduler
from burn.train.callbacks import Callback, TrainState
from burn.train.checkpoint import Checkpointer
from burn.train.early_stopping import EarlyStopping
from burn.train.history import History
from burn.train.loggers import CsvLogger, Logger, LoggerError, MetricsRecord, RunInfo, create_logger
from burn.train.loggers.base import EndStatus, plain_value
from burn.train.metrics import (
    EpochAggregator,
    Metric,
    StepOutput,
    check_metrics,
    compute_all,
    default_metrics,
)
from burn.train.plot import PLOT_NAME
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
        stopped_early: early stopping or a callback ended the run before `num_epochs`.
        checkpoint: the newest checkpoint file, when a directory was given.
        best_epoch: the epoch whose params `model` holds when ``EarlyStopping(restore_best=True)``
            restored them (None otherwise).
        files: what the loggers wrote, by name: the metrics CSV, JSON and plot (``csv``, ``json``,
            ``plot``) of `CsvLogger`, ``tensorboard`` (the event files' folder)...
    """

    model: Any
    history: History
    epoch: int
    stopped_early: bool = False
    checkpoint: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    best_epoch: int | None = None


class Learner:
    """Trains a model with an optimizer and a learning-rate schedule over data loaders.

    Every epoch: one pass over the training loader (forward through `step_fn`, backward,
    optimizer step with the scheduler's learning rate), then, given a validation loader, a pass
    with ``model.valid()`` on the inner backend (no graph, dropout off). Metrics are averaged per
    epoch; with a `directory`, each epoch ends with a checkpoint (model, optimizer, scheduler,
    counters, RNG state, history). `loggers` receive the run's hyperparameters and every step's
    and epoch's metrics: by default, with a `directory`, `CsvLogger` (``metrics.csv`` and
    ``metrics.json`` every epoch, ``metrics.png`` at the end when matplotlib is installed).
    ``fit(..., resume=True)`` continues from the latest checkpoint (an epoch's end or, with
    `checkpoint_every`, a step inside an epoch) and gives the same parameters as a run that was
    never interrupted. `callbacks` see every event
    (`Callback`) and may stop the run.

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
        keep_checkpoints: how many checkpoints to keep (epoch ends and steps together).
        early_stopping: an `EarlyStopping`, checked after each epoch; with its ``restore_best``
            the result's model is the best epoch's.
        seed: seeds the backend's random ops (initializers run lazily, dropout) at the start of a
            fresh run; a resumed run restores the generator's state instead.
        progress: ``"auto"`` (a tqdm bar on a terminal, plain lines otherwise), ``"bar"``,
            ``"plain"`` or ``"none"``.
        stream: where progress goes (default stdout).
        plot: write ``metrics.png`` at the end of `fit` (needs matplotlib: ``burn-core[plot]``).
        strategy: `burn.train.DataParallel()` trains one replica per rank (launched with
            ``mpiexec -n N``): rank-0 params broadcast, sharded loaders, averaged gradients and
            metrics; only rank 0 prints, logs and checkpoints (see `burn.train.ddp`).
        callbacks: `Callback` objects called at every event (fit, epoch and step ends...), in order;
            e.g. `BestCheckpoint`. Their `to_record` state is saved in the checkpoints.
        grad_accumulation: optimizer steps every N batches, on the mean of their gradients
            (summed by `optim.GradientsAccumulator`): N batches of size b train like one batch of
            N*b with a mean loss. The learning rate schedule and `step` count optimizer steps.
        checkpoint_every: also write a checkpoint every this many optimizer steps inside an epoch
            (with a `directory`); None: only at epoch ends.
        profile_steps: profile the first this many optimizer steps with `burn.profile`: print
            the tables by op and by module, and with a `directory` write the Chrome trace to
            ``profile/trace.json`` there (`burn.train.ProfileSteps`); None: no profiling.
        loggers: where hyperparameters and metrics go: `Logger` objects or names resolved through
            the ``burn.loggers`` plugin group (``"csv"``, ``"tensorboard"``, ``"mlflow"``, or a
            plugin's); see `burn.train.loggers`. None: ``["csv"]`` with a `directory`, else none;
            ``[]``: none. Only the main process logs under `DataParallel`.
        hparams: extra hyperparameters for the loggers (batch size, model settings...), beside
            those the learner knows (``num_epochs``, ``optimizer``, ``lr``, ``seed``...).
        precision: ``"32"`` (default: every op in the model's dtype), ``"bf16-mixed"`` (the
            steps run under `burn.amp.autocast` bfloat16) or ``"16-mixed"`` (autocast float16
            with a `burn.amp.GradScaler`, whose state the checkpoints keep). Params, gradients
            and optimizer state stay in the model's dtype; see docs/guides/precision.md.
        grad_scaler: the `GradScaler` of ``"16-mixed"`` (default: ``GradScaler()``), to change
            its settings; only with ``"16-mixed"``.
        compile: run each batch's forward and backward pass (`step_fn`, the loss scaling of
            `grad_accumulation` and of the `GradScaler`) through `burn.compile.step`: traced once
            per batch signature, then replayed; the last batch of each accumulation group also
            runs the update inside the program where the optimizer allows (every built-in one
            but Muon; gradient clipping, the accumulated sum and the scaler's unscale and skip
            included), with the same values. A step that
            cannot be traced (a host read such as ``loss.item()`` in `step_fn`, batch norm's
            running statistics in training) runs eagerly with one
            `burn.capture.compiler.CompileWarning`. Counts: `compile_stats`.

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
        >>> # TensorBoard event files in runs/demo/tensorboard, beside the CSV files:
        >>> learner = Learner(model, optim.AdamConfig().init(), step, directory="runs/demo",
        ...                   loggers=["csv", "tensorboard"], hparams={"batch_size": 32})  # doctest: +SKIP
        >>> # Accumulate 4 batches per step, checkpoint every 100 steps, keep the best by accuracy:
        >>> learner = Learner(model, optim.AdamConfig().init(), step, grad_accumulation=4,
        ...                   checkpoint_every=100, directory="runs/demo",
        ...                   callbacks=[BestCheckpoint("accuracy", mode="max")])  # doctest: +SKIP
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
        callbacks: list[Callback] | None = None,
        grad_accumulation: int = 1,
        checkpoint_every: int | None = None,
        profile_steps: int | None = None,
        loggers: Sequence[Logger | str] | None = None,
        hparams: Mapping[str, Any] | None = None,
        precision: str = "32",
        grad_scaler: GradScaler | None = None,
        compile: bool = False,  # noqa: A002 - the name users know from torch and burn.compile
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
        self.callbacks: list[Callback] = list(callbacks or [])
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"Learner: callbacks must be burn.train.Callback instances, got {callback!r}")
        if profile_steps is not None:
            from burn.train.profiling import ProfileSteps

            self.callbacks.append(ProfileSteps(profile_steps))
        if not _positive_int(grad_accumulation):
            raise ValueError(f"Learner: grad_accumulation must be a positive int, got {grad_accumulation!r}")
        if checkpoint_every is not None and not _positive_int(checkpoint_every):
            raise ValueError(
                f"Learner: checkpoint_every must be a positive int or None, got {checkpoint_every!r}"
            )
        if hparams is not None and not isinstance(hparams, Mapping):
            raise TypeError(f"Learner: hparams must be a mapping of names to values, got {hparams!r}")
        self.hparams: dict[str, Any] = dict(hparams or {})
        if precision not in PRECISIONS:
            raise ValueError(
                f"Learner: precision must be one of {', '.join(map(repr, PRECISIONS))}, got {precision!r}"
            )
        if grad_scaler is not None and precision != "16-mixed":
            raise ValueError(f"Learner: grad_scaler is for precision='16-mixed', not {precision!r}")
        if grad_scaler is not None and not isinstance(grad_scaler, GradScaler):
            raise TypeError(f"Learner: grad_scaler must be a burn.amp.GradScaler, got {grad_scaler!r}")
        self.precision = precision
        low = PRECISIONS[precision]
        # One context re-entered at every step (an autocast context pushes on enter, so it is
        # reentrant); "32" leaves the steps as they are, inside any region the caller opened.
        self._autocast: AbstractContextManager[Any] = nullcontext() if low is None else autocast(low)
        self.grad_scaler: GradScaler | None = (
            (grad_scaler or GradScaler()) if precision == "16-mixed" else None
        )
        if not isinstance(compile, bool):
            raise TypeError(f"Learner: compile must be a bool, got {compile!r}")
        self.grad_accumulation = grad_accumulation
        self.checkpoint_every = checkpoint_every
        self._best_model: Any = None  # the best epoch's model, for EarlyStopping(restore_best=True)
        self.model = model
        self.optimizer = optimizer
        self.scheduler: LrScheduler = as_scheduler(lr)
        self.step_fn = step_fn
        self._compiled: Any = _compiled_step(step_fn, optimizer) if compile else None
        # One optimizer step per batch, without a grad scaler or an autocast region: the compiled
        # step then runs the update inside its program (set once the precision is known).
        self._update_inside = False
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
        self.loggers: list[Logger] = _make_loggers(loggers, self.directory, plot)
        self._started: list[Logger] = []  # the loggers whose `start` ran in this `fit`, until `end`
        self.backend = _training_backend(model)
        self.strategy = strategy
        self._main = strategy is None or strategy.is_main  # prints, logs and checkpoints
        if strategy is not None:
            strategy.attach(self.backend)
            if not self._main:
                self.stream = strategy.quiet_stream()
                self.progress = make_progress("none", self.stream)

    # -- the loop -----------------------------------------------------------------------------
    @property
    def is_main(self) -> bool:
        """This process prints, logs and checkpoints (always, without `DataParallel`: rank 0 with)."""
        return self._main

    def compile_stats(self) -> dict[str, Any] | None:
        """With ``compile=True``: the compiled step's counts (`burn.compile.stats`: traces,
        replays, fallbacks, recompiles, fused_groups...) and ``fallback_reasons`` (eager calls
        per reason); None without it."""
        if self._compiled is None:
            return None
        return {**self._compiled.stats(), "fallback_reasons": self._compiled.fallback_reasons()}

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
            resume: continue from the newest checkpoint in ``directory/checkpoints``; from a
                mid-epoch one, the epoch goes on at the next batch (the loader's order of an
                epoch is fixed, so the batches done are skipped without being loaded). A run that
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
        iteration, aggregator = 0, None  # a mid-epoch checkpoint's place in epoch + 1
        self._best_model = None
        if resume:
            model, history, epoch, step, iteration, aggregator = self._restore(model)
            if epoch >= self.num_epochs:
                return self._finished(model, history, epoch)
        else:
            refused: FileExistsError | None = None
            if self.checkpointer is not None and self._main:
                previous = self.checkpointer.newest()
                if previous is not None and not overwrite:
                    refused = FileExistsError(
                        f"Learner.fit: {self.directory} already holds a run (checkpoints up to epoch "
                        f"{previous[0]}): pass resume=True to continue it, overwrite=True to start over "
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
        state = TrainState(self, model, epoch, step, history=history, resumed=resume)
        self._emit("on_fit_start", state)
        self._started = []
        try:
            result = self._fit_loop(
                model, history, epoch, step, iteration, aggregator, train, valid, device, state
            )
        except BaseException:
            self._end_loggers("failed", quiet=True)
            raise
        return result

    def _fit_loop(
        self,
        model: Any,
        history: History,
        epoch: int,
        step: int,
        iteration: int,
        aggregator: EpochAggregator | None,
        train: DataLoader,
        valid: DataLoader | None,
        device: Any,
        state: TrainState,
    ) -> TrainingResult:
        """`fit` after the restore and the `on_fit_start` event: the loggers' run and the epochs."""
        run = RunInfo(
            self._hparams(), self.directory, state.resumed, epoch, step, self.num_epochs, history, self.stream
        )
        for logger in self.loggers if self._main else []:
            _call(logger, "start", run)
            self._started.append(logger)
        result = TrainingResult(model, history, epoch, stopped_early=state.stop)
        while not state.stop and epoch < self.num_epochs:
            epoch += 1
            model, step, done = self._train_epoch(
                model, train, device, epoch, step, state, iteration, aggregator
            )
            iteration, aggregator = 0, None
            if not done:  # a callback stopped the run inside the epoch
                result = TrainingResult(
                    model, history, epoch - 1, stopped_early=True, checkpoint=state.checkpoint
                )
                break
            if valid is not None:
                self._valid_epoch(model, valid, epoch, state)
            stop = self._should_stop(epoch, history, model)
            state.model, state.metrics = model, history.last("train")
            self._emit("on_epoch_end", state)
            stop = stop or state.stop
            result = TrainingResult(model, history, epoch, stopped_early=stop)
            if self.directory is not None and self._main:
                self._save(model, history, epoch, step, result, state)
            if stop:
                break
        stopper = self.early_stopping
        if stopper is not None and stopper.restore_best and stopper.best_epoch is not None:
            if self._best_model is not None and stopper.best_epoch != result.epoch:
                print(f"restoring the params of epoch {stopper.best_epoch} (the best)", file=self.stream)
                result.model = model = self._best_model
            result.best_epoch = stopper.best_epoch
        self.model = model
        if self._compiled is not None and self._main:
            print(_compile_summary(self._compiled), file=self.stream)
        for logger in self._end_loggers("stopped" if result.stopped_early else "finished"):
            result.files.update(logger.files())
        state.model, state.epoch = model, result.epoch
        self._emit("on_fit_end", state)
        return result

    def _hparams(self) -> dict[str, Any]:
        """What the loggers get as the run's hyperparameters: the learner's, then `hparams`."""
        inner = getattr(self.optimizer, "optimizer", self.optimizer)  # OptimizerAdaptor's rule
        known: dict[str, Any] = {
            "num_epochs": self.num_epochs,
            "optimizer": type(inner).__name__,
            "lr": repr(self.scheduler),
            "grad_accumulation": self.grad_accumulation,
            "seed": self.seed,
            "backend": self.backend.name,
            "model": type(self.model).__name__,
            "num_params": self.model.num_params(),
        }
        return {name: plain_value(value) for name, value in {**known, **self.hparams}.items()}

    def _log(self, method: str, record: MetricsRecord) -> None:
        for logger in self._started:
            _call(logger, method, record)

    def _end_loggers(self, status: EndStatus, *, quiet: bool = False) -> list[Logger]:
        """Call every started logger's `end` once; `quiet` (a failing run) keeps their errors from
        hiding the run's own."""
        ended, self._started = self._started, []
        for logger in ended:
            try:
                _call(logger, "end", status)
            except LoggerError:
                if not quiet:
                    raise
        return ended

    def _emit(self, event: str, state: TrainState) -> None:
        for callback in self.callbacks:
            getattr(callback, event)(state)

    def _train_epoch(
        self,
        model: Any,
        loader: DataLoader,
        device: Any,
        epoch: int,
        step: int,
        state: TrainState,
        start: int = 0,
        aggregator: EpochAggregator | None = None,
    ) -> tuple[Any, int, bool]:
        """One epoch's training pass from batch `start`; returns the model, the step count and
        whether the epoch finished (False: a callback stopped the run inside it)."""
        history, total, every = state.history, len(loader), self.grad_accumulation
        aggregator = aggregator if aggregator is not None else EpochAggregator()
        started = time.perf_counter()
        self.progress.start("train", epoch, self.num_epochs, total)
        state.model, state.epoch, state.step, state.iteration, state.metrics = model, epoch, step, start, {}
        self._emit("on_epoch_start", state)
        accumulator, group, lr = GradientsAccumulator(), EpochAggregator(), 0.0
        # Epoch e (from 1) uses the loader's order of epoch e - 1: the loader counts from 0.
        for iteration, batch in enumerate(loader.batches(device, epoch - 1, start), start=start + 1):
            # Batches go in groups of `every` (the epoch's last group may be smaller): one
            # optimizer step per group, on the mean of the group's gradients.
            first = (iteration - 1) // every * every + 1
            size = min(every, total - first + 1)
            if iteration == first:
                lr = self.scheduler.step()
            scaler = self.grad_scaler
            last = iteration - first + 1 == size
            updated = False
            if self._compiled is not None:
                # The loss scale is an argument (a new value traces again, up to the limit).
                loss_scale = scaler.get_scale() if scaler is not None and scaler.enabled else None
                # The group's last batch, without a strategy (it reduces the gradients first):
                # the compiled step applies the update itself, inside its program when the
                # optimizer allows (`burn.compile.step`), with the same values: the earlier
                # batches' gradients added to this one's, the scaler's unscale, check and skip,
                # under autocast too (the update is never autocast, as here).
                updated = last and self.strategy is None
                with self._autocast:
                    if updated:
                        summed = accumulator.grads() if size > 1 else None
                        (_, *parts), model = self._compiled(
                            lr, model, batch, size, loss_scale, accumulated=summed, scaler=scaler
                        )
                        if scaler is not None:
                            scaler.update()
                    else:
                        (_, *parts), grads = self._compiled.grads(model, batch, size, loss_scale)
                output = StepOutput(*parts)
            else:
                with self._autocast:
                    output = _checked(self.step_fn(model, batch), "step_fn")
                # Scaling each loss by 1/size makes the summed gradients the group's mean gradient.
                loss = output.loss if size == 1 else output.loss * (1.0 / size)
                if scaler is not None:
                    loss = scaler.scale(loss)  # the same scale for every batch of a group
                grads = GradientsParams.from_grads(loss.backward(), model)
            if size > 1 and not updated:
                accumulator.accumulate(grads)
                if last:
                    grads = accumulator.grads()
            if last and not updated:
                if self.strategy is not None:
                    grads = self.strategy.reduce_grads(grads, model)
                if scaler is None:
                    model = self.optimizer.step(lr, model, grads)
                else:  # a step with inf or NaN gradients leaves the model as it is
                    model = scaler.step(self.optimizer, model, grads, lr)
                    scaler.update()
            if last:
                step += 1
            values = compute_all(self.metrics, output, lr)
            aggregator.add(values)
            group.add(values)
            current = {name: value for name, (value, _) in values.items()}
            history.add_step("train", epoch, iteration, step, current)
            self.progress.step(current)
            if not last:
                continue
            state.model, state.step, state.iteration, state.metrics = model, step, iteration, group.means()
            group = EpochAggregator()
            self._emit("on_step_end", state)
            self._log("log_step", MetricsRecord("train", epoch, step, dict(state.metrics), iteration))
            if iteration == total:
                break  # the epoch's end: validation and the epoch checkpoint follow
            due = self.checkpoint_every is not None and step % self.checkpoint_every == 0
            if (due or state.stop) and self.directory is not None and self._main:
                self._save_mid(model, history, epoch, step, iteration, aggregator, state)
            if state.stop:
                print(f"stopped by a callback after step {step} (epoch {epoch}, batch {iteration})",
                      file=self.stream)
                return model, step, False
        means = aggregator.means() if self.strategy is None else self.strategy.reduce_means(aggregator)
        history.add_epoch("train", epoch, means)
        self._log("log_epoch", MetricsRecord("train", epoch, step, dict(means)))
        self.progress.end(_summary(epoch, self.num_epochs, "train", means, time.perf_counter() - started))
        return model, step, True

    def _valid_epoch(self, model: Any, loader: DataLoader, epoch: int, state: TrainState) -> None:
        history = state.history
        aggregator, started = EpochAggregator(), time.perf_counter()
        valid_model = model.valid()
        device = _device_of(valid_model)
        self.progress.start("valid", epoch, self.num_epochs, len(loader))
        for iteration, batch in enumerate(loader.batches(device, epoch - 1), start=1):
            with self._autocast:
                output = _checked(self.valid_step_fn(valid_model, batch), "valid_step_fn")
            values = compute_all(self.metrics, output, None)
            aggregator.add(values)
            current = {name: value for name, (value, _) in values.items()}
            history.add_step("valid", epoch, iteration, 0, current)
            self._log("log_step", MetricsRecord("valid", epoch, state.step, current, iteration))
            self.progress.step(current)
        means = aggregator.means() if self.strategy is None else self.strategy.reduce_means(aggregator)
        history.add_epoch("valid", epoch, means)
        self._log("log_epoch", MetricsRecord("valid", epoch, state.step, dict(means)))
        self.progress.end(_summary(epoch, self.num_epochs, "valid", means, time.perf_counter() - started))
        state.model, state.metrics = model, means
        self._emit("on_validation_end", state)

    def _should_stop(self, epoch: int, history: History, model: Any) -> bool:
        stopper = self.early_stopping
        if stopper is None:
            return False
        stop = stopper.update(epoch, history.last(stopper.split))
        if stopper.restore_best and stopper.best_epoch == epoch:
            self._best_model = model  # modules are immutable: keeping the reference keeps the params
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
    def _state(
        self,
        model: Any,
        history: History,
        epoch: int,
        step: int,
        iteration: int = 0,
        aggregator: EpochAggregator | None = None,
    ) -> dict[str, Any]:
        """Everything a resume needs. `epoch` counts the epochs completed; `iteration` > 0 is a
        mid-epoch checkpoint after that many batches of epoch + 1 (whose running sums are in
        ``aggregator``)."""
        stopper = self.early_stopping
        state: dict[str, Any] = {
            "epoch": epoch,
            "step": step,
            "iteration": iteration,
            "model": model.into_record(),
            "optimizer": self.optimizer.to_record(),
            "scheduler": self.scheduler.to_record(),
            # JSON: a PCG64 state holds 128-bit ints, more than MessagePack's ints carry.
            "rng": json.dumps(self.backend.rng.bit_generator.state),
            "early_stopping": None if stopper is None else stopper.to_record(),
            "history": history.to_json(),
            "grad_accumulation": self.grad_accumulation,
            "callbacks": [{"type": type(cb).__name__, "state": cb.to_record()} for cb in self.callbacks],
        }
        if aggregator is not None:
            state["aggregator"] = aggregator.to_record()
        if self.grad_scaler is not None:
            state["grad_scaler"] = self.grad_scaler.to_record()
        if stopper is not None and stopper.restore_best and self._best_model is not None:
            state["best_model"] = self._best_model.into_record()
        return state

    def _save(
        self, model: Any, history: History, epoch: int, step: int, result: TrainingResult, state: TrainState
    ) -> None:
        assert self.checkpointer is not None and self.directory is not None
        result.checkpoint = self.checkpointer.save(epoch, self._state(model, history, epoch, step))
        state.checkpoint = result.checkpoint
        self._emit("on_checkpoint", state)

    def _save_mid(
        self,
        model: Any,
        history: History,
        epoch: int,
        step: int,
        iteration: int,
        aggregator: EpochAggregator,
        state: TrainState,
    ) -> None:
        assert self.checkpointer is not None
        record = self._state(model, history, epoch - 1, step, iteration, aggregator)
        state.checkpoint = self.checkpointer.save(epoch, record, iteration=iteration)
        self._emit("on_checkpoint", state)

    def save_best(self, state: TrainState, name: str = "best") -> Path:
        """Write the end of ``state.epoch`` as ``checkpoints/<name>.mpk`` (what `BestCheckpoint`
        calls); a full, resumable checkpoint. Needs the learner's directory.

        Example:
            >>> path = learner.save_best(state)  # doctest: +SKIP
        """
        if self.checkpointer is None:
            raise ValueError("Learner.save_best needs the Learner's directory")
        record = self._state(state.model, state.history, state.epoch, state.step)
        return self.checkpointer.save_best(record, name)

    def _restore(self, model: Any) -> tuple[Any, History, int, int, int, EpochAggregator | None]:
        if self.checkpointer is None:
            raise ValueError("Learner.fit(resume=True) needs the Learner's directory, where checkpoints are")
        newest = self.checkpointer.newest()
        state = self.checkpointer.load()
        iteration = int(state.get("iteration", 0))
        saved = int(state.get("grad_accumulation", 1))
        if iteration and saved != self.grad_accumulation:
            raise ValueError(
                f"Learner.fit(resume=True): the mid-epoch checkpoint was taken with grad_accumulation="
                f"{saved}, this learner has {self.grad_accumulation}: the rest of the epoch would not "
                f"match; use grad_accumulation={saved}"
            )
        model = model.load_record(state["model"])
        self.optimizer.load_record(state["optimizer"])
        self.scheduler.load_record(state["scheduler"])
        if self.grad_scaler is not None and state.get("grad_scaler") is not None:
            self.grad_scaler.load_record(state["grad_scaler"])
        self.backend.rng.bit_generator.state = json.loads(state["rng"])
        if self.early_stopping is not None and state.get("early_stopping") is not None:
            self.early_stopping.load_record(state["early_stopping"])
        if state.get("best_model") is not None:
            self._best_model = model.load_record(state["best_model"])
        # Saved states go to callbacks by class, in order: a resumed run may add or drop callbacks
        # (those without a saved state start afresh).
        states: dict[str, list[Any]] = {}
        for entry in state.get("callbacks") or []:
            if isinstance(entry, dict):
                states.setdefault(str(entry.get("type")), []).append(entry.get("state"))
        for callback in self.callbacks:
            queue = states.get(type(callback).__name__)
            if queue:
                callback.load_record(queue.pop(0))
        history = History.from_json(state["history"])
        aggregator = EpochAggregator.from_record(state["aggregator"]) if iteration else None
        epoch, step = state["epoch"], state["step"]
        assert newest is not None
        where = f"epoch {epoch}" if not iteration else f"epoch {epoch + 1}, batch {iteration}"
        print(
            f"resuming from {self.checkpointer.path(*newest)} ({where}, step {step})", file=self.stream
        )
        return model, history, epoch, step, iteration, aggregator

    def __repr__(self) -> str:
        return (
            f"Learner({type(self.model).__name__}, {self.optimizer!r}, {self.scheduler!r}, "
            f"num_epochs={self.num_epochs}, directory={self.directory})"
        )


# -- helpers --------------------------------------------------------------------------------------
PRECISIONS: dict[str, str | None] = {"32": None, "bf16-mixed": "bfloat16", "16-mixed": "float16"}
"""`Learner`'s precisions and the autocast dtype of each (None: no autocast)."""


def _make_loggers(loggers: Sequence[Logger | str] | None, directory: Path | None, plot: bool) -> list[Logger]:
    if loggers is None:
        return [CsvLogger(plot=plot)] if directory is not None else []
    if isinstance(loggers, (str, Logger)):
        raise TypeError(f"Learner: loggers must be a list, got {loggers!r}: write loggers=[{loggers!r}]")
    made: list[Logger] = []
    for item in loggers:
        if isinstance(item, str):
            logger = create_logger(item)
            if isinstance(logger, CsvLogger):
                logger.plot = plot
        elif isinstance(item, Logger):
            logger = item
        else:
            raise TypeError(
                f"Learner: loggers must be burn.train.Logger instances or logger names, got {item!r}"
            )
        if isinstance(logger, CsvLogger) and logger.directory is None and directory is None:
            raise ValueError("Learner: the csv logger needs a directory: pass directory=... to the Learner")
        made.append(logger)
    return made


def _call(logger: Logger, method: str, arg: Any) -> None:
    """``logger.method(arg)``; what it raises comes out as a `LoggerError` naming the logger."""
    try:
        getattr(logger, method)(arg)
    except Exception as exc:
        text = str(exc).strip().replace("\n", " ")
        raise LoggerError(
            f"logger {logger.label()!r} ({type(logger).__name__}) failed in {method}(): "
            f"{type(exc).__name__}: {text}"
        ) from exc


def _compiled_step(step_fn: StepFn, optimizer: Any) -> Any:
    """`step_fn` with the loss scaling of `_train_epoch`, compiled with `burn.compile.step`:
    ``((loss, loss_unscaled, output, targets, batch_size), model) = f(lr, model, batch, size,
    scale)`` with the update (inside the program where the optimizer allows), or ``(..., grads) =
    f.grads(model, batch, size, scale)`` without it, from the same traces. `size` (the
    accumulation group's) and `scale` (the `GradScaler`'s, or None) are arguments, so the trace
    never freezes them; the multiplications are those of the eager path, in its order."""
    from burn.capture.compiler import compile as compile_

    def train_step(model: Any, batch: Any, size: int, loss_scale: float | None) -> tuple[Any, ...]:
        output = _checked(step_fn(model, batch), "step_fn")
        loss = output.loss if size == 1 else output.loss * (1.0 / size)
        if loss_scale is not None:
            loss = loss * loss_scale  # GradScaler.scale
        return loss, output.loss, output.output, output.targets, output.batch_size

    train_step.__qualname__ = getattr(step_fn, "__qualname__", type(step_fn).__qualname__)
    return compile_.step(train_step, optimizer)


def _compile_summary(compiled: Any) -> str:
    s = compiled.stats()
    line = (
        f"compile: {s['traces']} trace(s), {s['replays']} replayed step(s), {s['fallbacks']} eager "
        f"step(s), {s['warmups']} warmup step(s), {s['fused_groups']} fused group(s), "
        f"{s['program_updates']} update(s) inside the program"
    )
    reasons = compiled.fallback_reasons()
    if reasons:
        line += " (eager: " + "; ".join(f"{n} x {r}" for r, n in reasons.items()) + ")"
    return line


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


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


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
