"""`CsvLogger`: ``metrics.csv`` and ``metrics.json`` after every epoch, ``metrics.png`` at the end."""

from __future__ import annotations

from pathlib import Path

from burn.train.history import History
from burn.train.loggers.base import EndStatus, Logger, MetricsRecord, RunInfo
from burn.train.plot import MISSING_MATPLOTLIB, PLOT_NAME, plot_history


class CsvLogger(Logger):
    """Writes the run's metrics as files: the `Learner`'s default logger when it has a directory.

    After every epoch: ``metrics.csv`` (one row per epoch and split) and ``metrics.json`` (every
    step and epoch), both rewritten whole and atomically from the run's `History` (so a resumed
    run's files hold the epochs before the resume too). At the end of a run that did not fail:
    ``metrics.png``, one panel per metric, when matplotlib is installed (``burn-core[plot]``;
    without it a line says so).

    Args:
        directory: where the files go; None: the Learner's directory.
        plot: write ``metrics.png`` at the end.

    Example:
        >>> from burn.train import Learner
        >>> logger = CsvLogger(plot=False)
        >>> logger.files()
        {}
        >>> # Learner(model, optimizer, step, directory="runs/a", loggers=[CsvLogger(plot=False)])
    """

    name = "csv"

    def __init__(self, directory: str | Path | None = None, *, plot: bool = True) -> None:
        self.directory = None if directory is None else Path(directory)
        self.plot = plot
        self._run: RunInfo | None = None
        self._where: Path | None = None
        self._files: dict[str, Path] = {}

    def start(self, run: RunInfo) -> None:
        where = self.directory if self.directory is not None else run.directory
        if where is None:
            raise ValueError(
                "CsvLogger has no directory: give the Learner a directory or CsvLogger(directory=...)"
            )
        if run.history is None:
            raise ValueError("CsvLogger needs the run's history (RunInfo.history)")
        self._run, self._where, self._files = run, where, {}

    def log_epoch(self, record: MetricsRecord) -> None:
        history, where = self._started()
        self._files["csv"], self._files["json"] = history.write(where)

    def end(self, status: EndStatus) -> None:
        history, where = self._started()
        if status == "failed" or not self.plot or not len(history):
            return
        path = plot_history(history, where / PLOT_NAME)
        if path is None:
            print(MISSING_MATPLOTLIB, file=self._run.stream if self._run else None)
        else:
            self._files["plot"] = path

    def files(self) -> dict[str, Path]:
        return dict(self._files)

    def _started(self) -> tuple[History, Path]:
        if self._run is None or self._run.history is None or self._where is None:
            raise RuntimeError("CsvLogger: start() was not called")
        return self._run.history, self._where
