"""`EarlyStopping`: stop when a metric has not improved for `patience` epochs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from burn.record.errors import RecordError

MODES = ("min", "max")


class EarlyStopping:
    """Watches one epoch metric of one split and says when to stop.

    Args:
        metric: the metric's name (``"loss"``, ``"accuracy"``...).
        split: ``"valid"`` (default) or ``"train"``.
        mode: ``"min"`` when lower is better (loss), ``"max"`` when higher is (accuracy).
        patience: epochs without improvement before stopping.
        min_delta: how much better than the best a value must be to count as an improvement.
        restore_best: at the end of `Learner.fit`, give back the params of the best epoch (the
            learner keeps them, in memory and in its checkpoints) instead of the last epoch's.

    Example:
        >>> stop = EarlyStopping("loss", patience=2)
        >>> [stop.update(epoch, {"loss": v}) for epoch, v in enumerate([1.0, 0.5, 0.6, 0.55], start=1)]
        [False, False, False, True]
        >>> stop.best, stop.best_epoch
        (0.5, 2)
    """

    def __init__(
        self,
        metric: str = "loss",
        *,
        split: str = "valid",
        mode: str = "min",
        patience: int = 3,
        min_delta: float = 0.0,
        restore_best: bool = False,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"EarlyStopping: mode must be 'min' or 'max', got {mode!r}")
        if split not in ("train", "valid"):
            raise ValueError(f"EarlyStopping: split must be 'train' or 'valid', got {split!r}")
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise ValueError(f"EarlyStopping: patience must be a positive int, got {patience!r}")
        if min_delta < 0:
            raise ValueError(f"EarlyStopping: min_delta must be >= 0, got {min_delta!r}")
        self.metric, self.split, self.mode = metric, split, mode
        self.patience, self.min_delta = patience, float(min_delta)
        self.restore_best = bool(restore_best)
        self.best: float | None = None
        self.best_epoch: int | None = None
        self.bad_epochs = 0

    def update(self, epoch: int, metrics: Mapping[str, float]) -> bool:
        """Record `epoch`'s metrics (of the watched split); True when training should stop."""
        if self.metric not in metrics:
            have = ", ".join(metrics) or "none"
            raise KeyError(
                f"EarlyStopping watches {self.split} {self.metric!r}, but the {self.split} metrics of "
                f"epoch {epoch} are: {have}"
            )
        value = float(metrics[self.metric])
        if self._improved(value):
            self.best, self.best_epoch, self.bad_epochs = value, epoch, 0
            return False
        self.bad_epochs += 1
        return self.bad_epochs >= self.patience

    def _improved(self, value: float) -> bool:
        if self.best is None:
            return value == value  # NaN never improves
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def to_record(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "best": self.best,
            "best_epoch": self.best_epoch,
            "bad_epochs": self.bad_epochs,
        }

    def load_record(self, record: Mapping[str, Any]) -> EarlyStopping:
        """Restore the state saved by `to_record` (of a stopper watching the same metric)."""
        if not isinstance(record, Mapping) or record.get("metric") != self.metric:
            got = record.get("metric") if isinstance(record, Mapping) else type(record).__name__
            raise RecordError(f"early-stopping record watches {got!r}, not {self.metric!r}")
        best, best_epoch, bad = record.get("best"), record.get("best_epoch"), record.get("bad_epochs")
        if not (best is None or isinstance(best, (int, float))) or not isinstance(bad, int):
            raise RecordError(f"malformed early-stopping record: {dict(record)!r}")
        self.best = None if best is None else float(best)
        self.best_epoch = best_epoch if isinstance(best_epoch, int) else None
        self.bad_epochs = bad
        return self

    def __repr__(self) -> str:
        return (
            f"EarlyStopping({self.split} {self.metric!r}, mode={self.mode!r}, patience={self.patience}, "
            f"best={self.best!r} at epoch {self.best_epoch}"
            + (", restore_best=True)" if self.restore_best else ")")
        )
