"""The `Logger` interface: where a `Learner` sends its run's settings and metrics.

A logger sees a run as four calls, all made on the process that logs (rank 0 under
`DataParallel`): `Logger.start` once with the run's hyperparameters, `Logger.log_step` after every
optimizer step, `Logger.log_epoch` after each epoch's training and validation passes, and
`Logger.end` once (also when the run fails, with ``status="failed"``). This is the interface to
implement for an experiment tracker (Weights & Biases, Neptune, Comet, Aim...): map `start` to the
service's run creation with its config, the two ``log_*`` calls to its metric logging with the
record's step, and `end` to finishing the run; ship it by name through the ``burn.loggers``
entry-point group (`burn.train.loggers.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from burn.errors import BurnError

if TYPE_CHECKING:
    from burn.train.history import History

Split = Literal["train", "valid"]
EndStatus = Literal["finished", "stopped", "failed"]


class LoggerError(BurnError, RuntimeError):
    """A logger raised; the message names the logger and the call that failed (the cause is chained)."""


@dataclass
class RunInfo:
    """What `Logger.start` receives.

    Attributes:
        hparams: the run's settings: the Learner's own (``num_epochs``, ``optimizer``, ``lr``,
            ``grad_accumulation``, ``seed``, ``backend``, ``model``, ``num_params``) and the
            ``hparams=`` given to the `Learner` (which win on a clash). Plain values: str, int,
            float, bool or None.
        directory: the Learner's directory (None: the run keeps nothing on disk by default).
        resumed: this `fit` continues from a checkpoint (epochs before ``start_epoch`` were logged
            by an earlier `fit`).
        start_epoch: the epochs already completed when this `fit` began.
        start_step: the optimizer steps already done when this `fit` began.
        num_epochs: the epochs the run trains in total.
        history: every step and epoch recorded so far; restored from the checkpoint on a resume.
        stream: where the Learner prints (a logger's notices go there too).

    Example:
        >>> run = RunInfo(hparams={"lr": 0.001}, directory=None)
        >>> run.resumed, run.start_epoch
        (False, 0)
    """

    hparams: dict[str, Any]
    directory: Path | None
    resumed: bool = False
    start_epoch: int = 0
    start_step: int = 0
    num_epochs: int = 0
    history: History | None = None
    stream: TextIO | None = None


@dataclass(frozen=True)
class MetricsRecord:
    """One step's or one epoch's metrics.

    Attributes:
        split: ``"train"`` or ``"valid"``.
        epoch: the epoch, from 1.
        step: optimizer steps done since the run began (for a validation record: at the time of the
            validation pass); the x axis trackers plot step records against.
        values: metric name to value (``loss``, ``accuracy``, ``lr``...).
        iteration: for a step record, the batch within the epoch (from 1); 0 for an epoch record.

    Example:
        >>> r = MetricsRecord("train", epoch=1, step=10, values={"loss": 0.5}, iteration=10)
        >>> r.split, r.values["loss"]
        ('train', 0.5)
    """

    split: Split
    epoch: int
    step: int
    values: dict[str, float] = field(default_factory=dict)
    iteration: int = 0


class Logger:
    """Receives a `Learner` run's hyperparameters and metrics; subclass it and override what you need.

    Every method is a no-op here. The Learner calls them in order: `start`; then `log_step` after
    every training step (split ``"train"``, one record per optimizer step, with the mean of its
    micro-batches under gradient accumulation) and after every validation batch (split
    ``"valid"``); `log_epoch` after each epoch's training pass and validation pass; `end` last.
    An exception raised by a logger stops the run as a `LoggerError` that names the logger.

    Attributes:
        name: how messages name this logger (default: the class name).

    Example:
        >>> class PrintLogger(Logger):
        ...     def log_epoch(self, record: MetricsRecord) -> None:
        ...         print(record.split, record.epoch, record.values)
        >>> PrintLogger().log_epoch(MetricsRecord("valid", 1, 10, {"loss": 0.25}))
        valid 1 {'loss': 0.25}
        >>> # Learner(model, optimizer, step, loggers=[PrintLogger(), "csv"])
    """

    name: str = ""

    def start(self, run: RunInfo) -> None:
        """The run begins (after a resume's restore); `run` holds its hyperparameters."""

    def log_step(self, record: MetricsRecord) -> None:
        """One training step's (or validation batch's) metrics."""

    def log_epoch(self, record: MetricsRecord) -> None:
        """One epoch's means, for one split."""

    def end(self, status: EndStatus) -> None:
        """The run ends: ``"finished"`` (all epochs), ``"stopped"`` (early stopping or a callback)
        or ``"failed"`` (an exception is on its way out of `Learner.fit`)."""

    def files(self) -> dict[str, Path]:
        """Files this logger wrote, by name (they go into ``TrainingResult.files``)."""
        return {}

    def label(self) -> str:
        """``name`` if set, else the class name: how errors name the logger."""
        return self.name or type(self).__name__


def plain_value(value: Any) -> str | int | float | bool | None:
    """`value` as a type every tracker stores: str, int, float, bool or None (else its ``repr``).

    Example:
        >>> plain_value(3), plain_value(Path("a")), plain_value([1, 2])
        (3, 'a', '[1, 2]')
    """
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Path):
        return str(value)
    item = getattr(value, "item", None)  # NumPy scalars
    if callable(item) and getattr(value, "shape", None) == ():
        result = item()
        if isinstance(result, (int, float, bool)):
            return result
    return repr(value)
