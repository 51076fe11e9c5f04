"""`ProfileSteps`: a `Callback` that profiles the first N optimizer steps of a `Learner.fit`.

Turned on with ``Learner(..., profile_steps=N)`` or ``callbacks=[ProfileSteps(N)]``. It opens a
`burn.profile` when ``fit`` starts and closes it after the N-th step (or when ``fit`` ends, if
fewer steps ran), then prints the table by op and by module to the learner's stream and, with a
learner directory, writes ``profile/trace.json`` (a Chrome trace) and ``profile/table.txt`` there.
Under `DataParallel` only the main rank reports. A batch loaded in the training thread is
profiled too (its ops are the loader's); validation is profiled when it runs inside those steps.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from burn.profiler import Profile, profile
from burn.train.callbacks import Callback, TrainState

__all__ = ["PROFILE_DIR", "ProfileSteps"]

PROFILE_DIR = "profile"  # in the learner's directory: trace.json and table.txt


class ProfileSteps(Callback):
    """Profile the first `steps` optimizer steps of each `fit` (see the module docs).

    Args:
        steps: how many optimizer steps to profile (a positive int).
        top: rows per table (None: all).
        sync: passed to `burn.profile`: sync the device after each op, inside its time.

    Attributes:
        profile: the last `Profile` taken (None before the first fit).
        trace: the Chrome trace written by the last fit (None without a learner directory).

    Example:
        >>> hook = ProfileSteps(3)
        >>> hook.steps, hook.profile is None
        (3, True)
        >>> # Learner(model, optimizer, step, directory="runs/x", callbacks=[hook]).fit(loader)
        >>> # -> prints the tables, writes runs/x/profile/trace.json
    """

    def __init__(self, steps: int, *, top: int | None = 20, sync: bool = True) -> None:
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"ProfileSteps: steps must be a positive int, got {steps!r}")
        if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
            raise ValueError(f"ProfileSteps: top must be a positive int or None, got {top!r}")
        self.steps = steps
        self.top = top
        self.sync = sync
        self.profile: Profile | None = None
        self.trace: Path | None = None
        self._done = 0

    def on_fit_start(self, state: TrainState) -> None:
        self._done = 0
        self.trace = None
        self.profile = profile(sync=self.sync).start()

    def on_step_end(self, state: TrainState) -> None:
        if self.profile is None or not self.profile.active:
            return
        self._done += 1
        if self._done >= self.steps:
            self._finish(state.learner)

    def on_fit_end(self, state: TrainState) -> None:
        if self.profile is not None and self.profile.active:
            self._finish(state.learner)

    def _finish(self, learner: Any) -> None:
        prof = self.profile
        assert prof is not None
        prof.stop()
        if learner is not None and not getattr(learner, "is_main", True):
            return
        text = (
            f"profile of {self._done} training step(s):\n{prof.table(by='op', top=self.top)}\n\n"
            f"{prof.table(by='module', top=self.top)}"
        )
        stream = getattr(learner, "stream", None) or sys.stdout
        directory = getattr(learner, "directory", None)
        if directory is not None:
            folder = Path(directory) / PROFILE_DIR
            self.trace = prof.export_chrome_trace(folder / "trace.json")
            (folder / "table.txt").write_text(text + "\n")
            text += f"\nChrome trace: {self.trace} (open in https://ui.perfetto.dev or chrome://tracing)"
        print(text, file=stream)
