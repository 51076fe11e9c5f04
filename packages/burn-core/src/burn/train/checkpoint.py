"""`Checkpointer`: one file per epoch holding all training state, saved atomically, last K kept."""

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


class Checkpointer:
    """Saves and finds ``checkpoint-<epoch>`` files in a directory.

    Each file is one record (model params, optimizer and scheduler state, counters...) written
    atomically by the recorder: a crash mid-save leaves the previous checkpoints intact. After a
    save only the `keep` newest remain.

    Args:
        directory: where checkpoint files go (created on first save).
        keep: how many checkpoints to keep (at least 1).
        recorder: default `NamedMpkFileRecorder` with `KeepPrecisionSettings`, so every tensor
            (float64 moments included) is saved exactly and a resume is bit-identical.

    Example:
        >>> ckpt = Checkpointer("runs/digits/checkpoints", keep=2)  # doctest: +SKIP
        >>> ckpt.save(3, {"epoch": 3, ...}); ckpt.epochs()  # doctest: +SKIP
        [2, 3]
    """

    def __init__(self, directory: str | Path, keep: int = 2, recorder: Recorder | None = None) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"Checkpointer: keep must be a positive int, got {keep!r}")
        if recorder is not None and not isinstance(recorder, Recorder):
            raise TypeError(f"Checkpointer: recorder must be a burn.record.Recorder, got {recorder!r}")
        self.directory = Path(directory)
        self.keep = keep
        self.recorder = recorder if recorder is not None else NamedMpkFileRecorder(KeepPrecisionSettings())
        self._pattern = re.compile(r"checkpoint-(\d+)" + re.escape(self.recorder.extension) + "$")

    def path(self, epoch: int) -> Path:
        return self.recorder.file_path(self.directory / f"checkpoint-{epoch:05d}")

    def epochs(self) -> list[int]:
        """Epochs with a checkpoint on disk, oldest first."""
        if not self.directory.is_dir():
            return []
        found = (self._pattern.fullmatch(p.name) for p in self.directory.iterdir())
        return sorted(int(m.group(1)) for m in found if m is not None)

    def latest(self) -> int | None:
        epochs = self.epochs()
        return epochs[-1] if epochs else None

    def save(self, epoch: int, state: dict[str, Any]) -> Path:
        """Write `state` as the checkpoint of `epoch`, then delete all but the `keep` newest."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path: Path = self.recorder.record({"format": FORMAT, "version": VERSION, **state}, self.path(epoch))
        self.prune()
        return path

    def prune(self) -> list[int]:
        """Delete all but the `keep` newest checkpoints; returns the epochs deleted."""
        old = self.epochs()[: -self.keep]
        for epoch in old:
            self.path(epoch).unlink(missing_ok=True)
        return old

    def clear(self) -> None:
        """Delete every checkpoint (a fresh run starts over)."""
        for epoch in self.epochs():
            self.path(epoch).unlink(missing_ok=True)

    def load(self, epoch: int | None = None) -> dict[str, Any]:
        """The state saved at `epoch` (default: the latest).

        Raises:
            FileNotFoundError: no checkpoint (for that epoch) in the directory.
            RecordError: the file is not a burn.train checkpoint, or of a newer version.
        """
        if epoch is None:
            epoch = self.latest()
            if epoch is None:
                raise FileNotFoundError(f"no checkpoint to resume from in {self.directory}")
        path = self.path(epoch)
        if not path.exists():
            raise FileNotFoundError(f"no checkpoint for epoch {epoch}: {path} does not exist")
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
