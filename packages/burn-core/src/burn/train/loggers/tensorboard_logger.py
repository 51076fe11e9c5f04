"""`TensorBoardLogger`: TensorBoard event files written with tensorboardX (``burn-core[tensorboard]``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from burn.train.loggers.base import EndStatus, Logger, MetricsRecord, RunInfo, plain_value

TENSORBOARD_DIR = "tensorboard"
MISSING_TENSORBOARDX = "tensorboardX is not installed: pip install 'burn-core[tensorboard]'"


def tensorboardx_missing() -> str | None:
    """None when tensorboardX can be imported, else what to install."""
    return None if importlib.util.find_spec("tensorboardX") is not None else MISSING_TENSORBOARDX


class TensorBoardLogger(Logger):
    """Writes scalars and hyperparameters as TensorBoard event files (``tensorboard --logdir DIR``).

    Every scalar is plotted against the optimizer step: ``step/train/<metric>`` after each training
    step, ``epoch/<split>/<metric>`` (the epoch's means) at the step the epoch ended. The run's
    hyperparameters go to TensorBoard's HParams dashboard. Validation batches are not written (their
    means are, per epoch). A resumed run purges the events after its checkpoint's step, so an
    interrupted stretch is not drawn twice.

    Args:
        log_dir: the event files' folder; None: ``<Learner directory>/tensorboard``.
        flush_secs: how often the writer flushes to disk (it always does at the run's end).

    Raises:
        ImportError: at the run's start, when tensorboardX is not installed.

    Example:
        >>> logger = TensorBoardLogger("runs/a/tb")
        >>> logger.log_dir
        PosixPath('runs/a/tb')
        >>> # Learner(model, optimizer, step, loggers=[logger])  # or loggers=["tensorboard"]
    """

    name = "tensorboard"

    def __init__(self, log_dir: str | Path | None = None, *, flush_secs: int = 30) -> None:
        self.log_dir = None if log_dir is None else Path(log_dir)
        self.flush_secs = flush_secs
        self._writer: Any = None
        self._where: Path | None = None

    def start(self, run: RunInfo) -> None:
        missing = tensorboardx_missing()
        if missing:
            raise ImportError(missing)
        from tensorboardX import SummaryWriter
        from tensorboardX.summary import hparams

        where = self.log_dir
        if where is None:
            if run.directory is None:
                raise ValueError(
                    "TensorBoardLogger has no folder: give the Learner a directory or "
                    "TensorBoardLogger(log_dir=...)"
                )
            where = run.directory / TENSORBOARD_DIR
        where.mkdir(parents=True, exist_ok=True)
        # On a resume, events past the checkpoint's step came from the interrupted stretch: purge them.
        purge = run.start_step + 1 if run.resumed else None
        self._writer = SummaryWriter(str(where), purge_step=purge, flush_secs=self.flush_secs)
        self._where = where
        if not run.resumed:
            params = {k: plain_value(v) for k, v in run.hparams.items()}
            # The HParams plugin takes str, int, float and bool values; None becomes "None".
            params = {k: ("None" if v is None else v) for k, v in params.items()}
            experiment, session_start, _ = hparams(params, {})
            self._writer.file_writer.add_summary(experiment)
            self._writer.file_writer.add_summary(session_start)

    def log_step(self, record: MetricsRecord) -> None:
        if record.split != "train":
            return
        for metric, value in record.values.items():
            self._writer.add_scalar(f"step/train/{metric}", value, record.step)

    def log_epoch(self, record: MetricsRecord) -> None:
        for metric, value in record.values.items():
            self._writer.add_scalar(f"epoch/{record.split}/{metric}", value, record.step)

    def end(self, status: EndStatus) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def files(self) -> dict[str, Path]:
        return {} if self._where is None else {"tensorboard": self._where}
