"""`History`: the metrics of every step and epoch, written as CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from burn.record._io import atomic_write

CSV_NAME = "metrics.csv"
JSON_NAME = "metrics.json"


class History:
    """Metrics per step and per epoch, for the ``train`` and ``valid`` splits.

    Epochs are numbered from 1; ``step`` counts training steps over the whole run.

    Example:
        >>> h = History()
        >>> h.add_epoch("train", 1, {"loss": 0.5})
        >>> h.add_epoch("valid", 1, {"loss": 0.7, "accuracy": 0.9})
        >>> h.series("loss", "valid"), h.last("valid")
        ([(1, 0.7)], {'loss': 0.7, 'accuracy': 0.9})
    """

    def __init__(self) -> None:
        self.epochs: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []

    def add_step(self, split: str, epoch: int, iteration: int, step: int, values: dict[str, float]) -> None:
        self.steps.append({"split": split, "epoch": epoch, "iteration": iteration, "step": step, **values})

    def add_epoch(self, split: str, epoch: int, values: dict[str, float]) -> None:
        self.epochs.append({"split": split, "epoch": epoch, **values})

    def metric_names(self) -> list[str]:
        """Every metric name in first-seen order."""
        names: dict[str, None] = {}
        for row in self.epochs:
            for key in row:
                if key not in ("split", "epoch"):
                    names[key] = None
        return list(names)

    def series(self, name: str, split: str = "train") -> list[tuple[int, float]]:
        """``(epoch, value)`` of one metric of one split."""
        return [(row["epoch"], row[name]) for row in self.epochs if row["split"] == split and name in row]

    def last(self, split: str = "train") -> dict[str, float]:
        """The latest epoch's metrics of `split` (empty if none)."""
        for row in reversed(self.epochs):
            if row["split"] == split:
                return {k: v for k, v in row.items() if k not in ("split", "epoch")}
        return {}

    # -- persistence --------------------------------------------------------------------------
    def to_json(self) -> str:
        # NaN is not JSON: write it as null.
        return json.dumps({"epochs": _clean(self.epochs), "steps": _clean(self.steps)}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> History:
        try:
            data = json.loads(text)
            epochs, steps = data["epochs"], data["steps"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"not a burn.train metrics history: {exc}") from exc
        if not isinstance(epochs, list) or not isinstance(steps, list):
            raise ValueError("not a burn.train metrics history: 'epochs' and 'steps' must be lists")
        history = cls()
        history.epochs, history.steps = epochs, steps
        return history

    def to_csv(self) -> str:
        """One row per epoch and split: ``epoch, split, <metric>...``."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        names = self.metric_names()
        writer.writerow(["epoch", "split", *names])
        for row in self.epochs:
            writer.writerow([row["epoch"], row["split"], *(_cell(row.get(name)) for name in names)])
        return buffer.getvalue()

    def write(self, directory: str | Path) -> tuple[Path, Path]:
        """Write ``metrics.csv`` and ``metrics.json`` into `directory` (atomically); returns their paths."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = directory / CSV_NAME, directory / JSON_NAME
        for path, text in zip(paths, (self.to_csv(), self.to_json()), strict=True):
            data = text.encode()
            atomic_write(path, lambda f, data=data: f.write(data))  # type: ignore[misc]
        return paths

    def __len__(self) -> int:
        return len(self.epochs)

    def __repr__(self) -> str:
        return f"History({len(self.epochs)} epoch rows, {len(self.steps)} step rows)"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _clean(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()} for row in rows
    ]
