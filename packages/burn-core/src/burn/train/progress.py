"""Progress display: a tqdm bar on a terminal, one plain line per epoch otherwise."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any, Literal, Protocol, TextIO

ProgressMode = Literal["auto", "bar", "plain", "none"]
PROGRESS_MODES = ("auto", "bar", "plain", "none")


class Progress(Protocol):
    """What the learner tells the display: an epoch of a split starts, a step ends, it ends."""

    def start(self, split: str, epoch: int, num_epochs: int, total: int) -> None: ...

    def step(self, values: dict[str, float]) -> None: ...

    def end(self, summary: str) -> None: ...


class PlainProgress:
    """Prints the summary line of each epoch and split (for logs, CI and pipes)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def start(self, split: str, epoch: int, num_epochs: int, total: int) -> None:
        return None

    def step(self, values: dict[str, float]) -> None:
        return None

    def end(self, summary: str) -> None:
        print(summary, file=self.stream or sys.stdout, flush=True)


class SilentProgress(PlainProgress):
    """Shows nothing."""

    def end(self, summary: str) -> None:
        return None


class BarProgress:
    """A tqdm bar per epoch and split, showing the running metrics; the summary stays printed."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]

        self._tqdm = tqdm
        self.stream = stream
        self._bar: Any = None

    def start(self, split: str, epoch: int, num_epochs: int, total: int) -> None:
        self._bar = self._tqdm(
            total=total,
            desc=f"epoch {epoch}/{num_epochs} {split}",
            file=self.stream or sys.stdout,
            leave=False,
            dynamic_ncols=True,
            unit="batch",
        )

    def step(self, values: dict[str, float]) -> None:
        if self._bar is not None:
            self._bar.set_postfix({k: f"{v:.4g}" for k, v in values.items()}, refresh=False)
            self._bar.update(1)

    def end(self, summary: str) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._tqdm.write(summary, file=self.stream or sys.stdout)


def tqdm_available() -> bool:
    return importlib.util.find_spec("tqdm") is not None


def make_progress(mode: str = "auto", stream: TextIO | None = None) -> Progress:
    """The display for `mode`: ``"bar"`` (tqdm), ``"plain"`` (a line per epoch), ``"none"``, or
    ``"auto"``: a bar when `stream` (default stdout) is a terminal and tqdm is installed, else plain.

    Example:
        >>> type(make_progress("plain")).__name__
        'PlainProgress'
    """
    if mode not in PROGRESS_MODES:
        raise ValueError(f"progress must be one of {', '.join(PROGRESS_MODES)}; got {mode!r}")
    if mode == "none":
        return SilentProgress(stream)
    if mode == "plain":
        return PlainProgress(stream)
    if mode == "bar":
        if not tqdm_available():
            raise ImportError("progress='bar' needs tqdm: pip install tqdm")
        return BarProgress(stream)
    target = stream if stream is not None else sys.stdout
    isatty = getattr(target, "isatty", None)
    if tqdm_available() and callable(isatty) and isatty():
        return BarProgress(stream)
    return PlainProgress(stream)
