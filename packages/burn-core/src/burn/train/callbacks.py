"""Learner events: `Callback` (no-op hooks to override), the `TrainState` they receive, and
`BestCheckpoint`, a callback that keeps the best epoch by a metric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from burn.record.errors import RecordError
from burn.train.checkpoint import check_best_name
from burn.train.early_stopping import EarlyStopping
from burn.train.history import History

if TYPE_CHECKING:
    from burn.train.learner import Learner


@dataclass
class TrainState:
    """What a `Callback` hook receives: one object per `Learner.fit`, updated before every event.

    Attributes:
        learner: the `Learner` running (``state.learner.optimizer``, ``.scheduler``...).
        model: the model now (after the step, epoch... that the event follows).
        epoch: the current epoch, from 1 (in ``on_fit_start``/``on_fit_end``: the epochs completed).
        step: optimizer steps done since the run began (resumed runs included).
        iteration: batches done in the current epoch (micro-batches, with gradient accumulation).
        metrics: the event's metrics: the step's in ``on_step_end`` (averaged over its
            micro-batches), the epoch's validation means in ``on_validation_end``, the epoch's
            training means in ``on_epoch_end``.
        history: every step's and epoch's metrics so far (``history.last("valid")``...).
        resumed: this `fit` resumed from a checkpoint.
        checkpoint: the checkpoint file just written (``on_checkpoint``), else the last one.
        stop: set it to True to stop training. From ``on_step_end`` the run stops after that
            step (writing a mid-epoch checkpoint, with a directory, so ``resume=True`` goes on
            from there); from another event, at the end of the current epoch (after its
            checkpoint). The result then says ``stopped_early``.

    Example:
        >>> state = TrainState(learner=None, model=None, epoch=1, step=0)
        >>> state.stop, state.metrics
        (False, {})
    """

    learner: Any  # Learner; Any so that hand-made states (tests, doctests) need none
    model: Any
    epoch: int
    step: int
    iteration: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    history: History = field(default_factory=History)
    resumed: bool = False
    checkpoint: Path | None = None
    stop: bool = False


class Callback:
    """Hooks into the `Learner`'s loop: subclass it and override the events you need (all are no-ops).

    Events, in order: ``on_fit_start``; then per epoch ``on_epoch_start``, ``on_step_end`` after
    every optimizer step, ``on_validation_end`` (with a validation loader), ``on_epoch_end``;
    ``on_checkpoint`` after every checkpoint written (epoch ends and every `checkpoint_every`
    steps); ``on_fit_end`` last (also after a stop). Set ``state.stop = True`` to end training.

    A callback with state of its own (counters, a best value) returns it from `to_record` and takes
    it back in `load_record`: the learner saves it in every checkpoint, so a resumed run goes on
    exactly. Under `DataParallel` every rank runs the callbacks; a stop decision must be the same
    on all of them (base it on the metrics, which are averaged over the ranks).

    Example:
        >>> class StopAtStep(Callback):
        ...     def __init__(self, last: int) -> None:
        ...         self.last = last
        ...     def on_step_end(self, state: TrainState) -> None:
        ...         state.stop = state.step >= self.last
        >>> hook = StopAtStep(2)
        >>> state = TrainState(learner=None, model=None, epoch=1, step=2)
        >>> hook.on_step_end(state); state.stop
        True
        >>> # Learner(model, optimizer, step_fn, callbacks=[StopAtStep(100)])
    """

    def on_fit_start(self, state: TrainState) -> None:
        """Before the first epoch (after a resume's restore)."""

    def on_epoch_start(self, state: TrainState) -> None:
        """Before an epoch's first training batch."""

    def on_step_end(self, state: TrainState) -> None:
        """After an optimizer step; ``state.metrics`` are the step's."""

    def on_validation_end(self, state: TrainState) -> None:
        """After an epoch's validation pass; ``state.metrics`` are its means."""

    def on_epoch_end(self, state: TrainState) -> None:
        """After an epoch (training, validation, early stopping), before its checkpoint."""

    def on_checkpoint(self, state: TrainState) -> None:
        """After a checkpoint is written; ``state.checkpoint`` is its file."""

    def on_fit_end(self, state: TrainState) -> None:
        """When `fit` is about to return (``state.model`` is the model it returns)."""

    def to_record(self) -> Any:
        """This callback's state, saved in checkpoints (plain values; default: none)."""
        return None

    def load_record(self, record: Any) -> Callback:
        """Take back the state `to_record` saved (a resumed run); returns self."""
        return self


class BestCheckpoint(Callback):
    """Keeps the best epoch by a metric: its model in memory, and with the learner's directory its
    whole training state in ``checkpoints/best.mpk`` (never pruned; resumable).

    Args:
        metric: the metric's name (``"loss"``, ``"accuracy"``...).
        split: ``"valid"`` (default) or ``"train"``.
        mode: ``"min"`` when lower is better, ``"max"`` when higher is.
        min_delta: how much better than the best a value must be to count.
        name: the file's name in ``checkpoints/`` (starting with ``best``): give each
            `BestCheckpoint` of a learner its own, e.g. ``"best-accuracy"``.

    Attributes:
        best: the best value so far (None before the first epoch).
        best_epoch: its epoch.
        model: the best epoch's model, when that epoch ran in this process (None after a resume
            until a better epoch; load ``path`` with `Checkpointer.read` then).
        path: the file of the best state (None without a directory).

    Example:
        >>> best = BestCheckpoint("accuracy", mode="max")
        >>> best.best is None
        True
        >>> # Learner(model, optimizer, step, directory="runs/x", callbacks=[best]).fit(train, valid)
        >>> # best.best_epoch, best.path   -> e.g. 7, runs/x/checkpoints/best.mpk
    """

    def __init__(
        self,
        metric: str = "loss",
        *,
        split: str = "valid",
        mode: str = "min",
        min_delta: float = 0.0,
        name: str = "best",
    ) -> None:
        # The improvement rule is early stopping's (without its patience).
        self._rule = EarlyStopping(metric, split=split, mode=mode, patience=1, min_delta=min_delta)
        self.name = check_best_name(name)
        self.model: Any = None
        self.path: Path | None = None

    @property
    def metric(self) -> str:
        return self._rule.metric

    @property
    def split(self) -> str:
        return self._rule.split

    @property
    def mode(self) -> str:
        return self._rule.mode

    @property
    def best(self) -> float | None:
        return self._rule.best

    @property
    def best_epoch(self) -> int | None:
        return self._rule.best_epoch

    def on_epoch_end(self, state: TrainState) -> None:
        self._rule.update(state.epoch, state.history.last(self.split))
        if self._rule.best_epoch != state.epoch:
            return
        self.model = state.model
        learner: Learner = state.learner
        if learner.checkpointer is not None and learner.is_main:
            self.path = learner.save_best(state, self.name)

    def to_record(self) -> dict[str, Any]:
        return {"rule": self._rule.to_record(), "path": None if self.path is None else str(self.path)}

    def load_record(self, record: Any) -> BestCheckpoint:
        if not isinstance(record, Mapping) or "rule" not in record:
            raise RecordError(f"malformed BestCheckpoint record: {record!r}")
        self._rule.load_record(record["rule"])
        path = record.get("path")
        self.path = None if path is None else Path(path)
        return self

    def __repr__(self) -> str:
        return (
            f"BestCheckpoint({self.split} {self.metric!r}, mode={self.mode!r}, best={self.best!r} "
            f"at epoch {self.best_epoch})"
        )
