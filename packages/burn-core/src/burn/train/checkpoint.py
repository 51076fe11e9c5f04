"""`Checkpointer`: one file per epoch (or mid-epoch step) holding all training state, saved atomically,
last K kept."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from burn.record.errors import RecordError
from burn.record.recorder import NamedMpkFileRecorder, Recorder
from burn.record.settings import KeepPrecisionSettings

FORMAT = "burn.train.checkpoint"
VERSION = 1
REQUIRED_KEYS = ("format", "version", "epoch", "step", "model", "optimizer", "scheduler")


def check_best_name(name: str) -> str:
    """`name` if it names a best checkpoint (``best``, ``best-accuracy``...), else a ValueError."""
    if not isinstance(name, str) or re.fullmatch(r"best[\w.-]*", name) is None:
        raise ValueError(
            f"a best checkpoint's name must start with 'best' and be a plain file name, got {name!r}"
        )
    return name


class Checkpointer:
    """Saves and finds ``checkpoint-<epoch>`` files in a directory.

    Each file is one record (model params, optimizer and scheduler state, counters...) written
    atomically by the recorder: a crash mid-save leaves the previous checkpoints intact. After a
    save only the `keep` newest remain. A checkpoint taken inside an epoch, after its `iteration`-th
    batch, is ``checkpoint-<epoch>-<iteration>``; it sorts after the end of the previous epoch and
    before the end of its own. ``best`` (`best_path`; ``best-<something>`` for other names) holds
    the best epoch's state, when a `BestCheckpoint` keeps one; it is never pruned.

    Args:
        directory: where checkpoint files go (created on first save).
        keep: how many checkpoints to keep (at least 1).
        recorder: default `NamedMpkFileRecorder` with `KeepPrecisionSettings`, so every tensor
            (float64 moments included) is saved exactly and a resume is bit-identical.

    Example:
        >>> ckpt = Checkpointer("runs/digits/checkpoints", keep=2)  # doctest: +SKIP
        >>> ckpt.save(3, {"epoch": 3, ...}); ckpt.epochs()  # doctest: +SKIP
        [2, 3]
        >>> ckpt.save(4, {"epoch": 3, "iteration": 10, ...}, iteration=10)  # doctest: +SKIP
        >>> ckpt.checkpoints(), ckpt.newest()  # doctest: +SKIP
        ([(3, 0), (4, 10)], (4, 10))
    """

    def __init__(self, directory: str | Path, keep: int = 2, recorder: Recorder | None = None) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"Checkpointer: keep must be a positive int, got {keep!r}")
        if recorder is not None and not isinstance(recorder, Recorder):
            raise TypeError(f"Checkpointer: recorder must be a burn.record.Recorder, got {recorder!r}")
        self.directory = Path(directory)
        self.keep = keep
        self.recorder = recorder if recorder is not None else NamedMpkFileRecorder(KeepPrecisionSettings())
        self._pattern = re.compile(r"checkpoint-(\d+)(?:-(\d+))?" + re.escape(self.recorder.extension) + "$")

    def path(self, epoch: int, iteration: int = 0) -> Path:
        """The file of `epoch`'s end, or of its `iteration`-th batch when `iteration` > 0."""
        name = f"checkpoint-{epoch:05d}" + (f"-{iteration:06d}" if iteration else "")
        return self.recorder.file_path(self.directory / name)

    def best_path(self, name: str = "best") -> Path:
        """The file a `BestCheckpoint` named `name` writes the best epoch's state to."""
        return self.recorder.file_path(self.directory / check_best_name(name))

    def checkpoints(self) -> list[tuple[int, int]]:
        """``(epoch, iteration)`` of every checkpoint on disk, oldest first (iteration 0: epoch end)."""
        if not self.directory.is_dir():
            return []
        found = (self._pattern.fullmatch(p.name) for p in self.directory.iterdir())
        keys = [(int(m.group(1)), int(m.group(2) or 0)) for m in found if m is not None]
        # An epoch's mid-epoch checkpoints come before its end: sort the end as iteration infinity.
        return sorted(keys, key=lambda k: (k[0], k[1] if k[1] else float("inf")))

    def epochs(self) -> list[int]:
        """Epochs with an end-of-epoch checkpoint on disk, oldest first."""
        return [epoch for epoch, iteration in self.checkpoints() if iteration == 0]

    def latest(self) -> int | None:
        """The newest epoch with an end-of-epoch checkpoint (None if none)."""
        epochs = self.epochs()
        return epochs[-1] if epochs else None

    def newest(self) -> tuple[int, int] | None:
        """``(epoch, iteration)`` of the newest checkpoint, mid-epoch ones included (None if none)."""
        keys = self.checkpoints()
        return keys[-1] if keys else None

    def save(self, epoch: int, state: dict[str, Any], iteration: int = 0) -> Path:
        """Write `state` as the checkpoint of `epoch` (its end, or its `iteration`-th batch), then
        delete all but the `keep` newest."""
        self.directory.mkdir(parents=True, exist_ok=True)
        record = {"format": FORMAT, "version": VERSION, **state}
        path: Path = self.recorder.record(record, self.path(epoch, iteration))
        self.prune()
        return path

    def save_best(self, state: dict[str, Any], name: str = "best") -> Path:
        """Write `state` to ``best_path(name)`` (never pruned; deleted by `clear`)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        record = {"format": FORMAT, "version": VERSION, **state}
        path: Path = self.recorder.record(record, self.best_path(name))
        return path

    def prune(self) -> list[int]:
        """Delete all but the `keep` newest checkpoints; returns the epochs deleted."""
        old = self.checkpoints()[: -self.keep]
        for epoch, iteration in old:
            self.path(epoch, iteration).unlink(missing_ok=True)
        return [epoch for epoch, _ in old]

    def clear(self) -> None:
        """Delete every checkpoint, the best one included (a fresh run starts over)."""
        for epoch, iteration in self.checkpoints():
            self.path(epoch, iteration).unlink(missing_ok=True)
        if self.directory.is_dir():
            for path in self.directory.glob("best*" + self.recorder.extension):
                path.unlink(missing_ok=True)

    def load(self, epoch: int | None = None, iteration: int = 0) -> dict[str, Any]:
        """The state saved at `epoch` (its end, or its `iteration`-th batch; default: the newest).

        Raises:
            FileNotFoundError: no checkpoint (for that epoch) in the directory.
            RecordError: the file is not a burn.train checkpoint, or of a newer version.
        """
        if epoch is None:
            newest = self.newest()
            if newest is None:
                raise FileNotFoundError(f"no checkpoint to resume from in {self.directory}")
            epoch, iteration = newest
        path = self.path(epoch, iteration)
        if not path.exists():
            raise FileNotFoundError(f"no checkpoint for epoch {epoch}: {path} does not exist")
        return self.read(path)

    def read(self, path: str | Path) -> dict[str, Any]:
        """The state in checkpoint file `path` (e.g. `best_path`), checked like `load`.

        Raises:
            FileNotFoundError: no such file.
            RecordError: the file is not a burn.train checkpoint, or of a newer version.
        """
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no checkpoint at {path}")
        state = self.recorder.load(path)
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise RecordError("not a burn.train checkpoint", source=str(path))
        version = state.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise RecordError(
                f"checkpoint version {version!r} is newer than this burn-core reads ({VERSION})",
                source=str(path),
            )
        missing = [key for key in REQUIRED_KEYS if key not in state]
        if missing:
            raise RecordError(f"checkpoint lacks {', '.join(missing)}", source=str(path))
        return state

    def __repr__(self) -> str:
        return f"Checkpointer({str(self.directory)!r}, keep={self.keep}, epochs={self.epochs()})"
