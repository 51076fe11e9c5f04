"""Shared benchmark plumbing: thread pinning, side-by-side timing, machine description, tables.

Every section runs burn, PyTorch (CPU) and a hand-written NumPy floor in one process, on the same
data, with the same thread count and warm-up, and prints times and ratios to torch and to NumPy.
"""

from __future__ import annotations

import gc
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "POCL_CPU_MAX_CU_NUM")


def pin_threads(n: int) -> None:
    """Give every library `n` threads; call before NumPy, torch or pyopencl is imported."""
    os.environ["BURN_BENCH_THREADS"] = str(n)
    for var in THREAD_VARS:
        os.environ[var] = str(n)


def threads() -> int:
    """Thread count used for every library in a run (BURN_BENCH_THREADS, default: all cores)."""
    return int(os.environ.get("BURN_BENCH_THREADS", os.cpu_count() or 1))


def setup_torch() -> Any:
    """Import torch pinned to `threads()` threads, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads())
    return torch


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (the machine may be shared)."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


@dataclass
class Settings:
    """How long to time each case: a batch of calls lasts at least `min_time` seconds, and each
    contender keeps its best batch out of `repeats` rounds."""

    quick: bool = False
    min_time: float = 0.2
    repeats: int = 5

    @classmethod
    def make(cls, quick: bool) -> Settings:
        return cls(quick, 0.03, 3) if quick else cls(False, 0.2, 7)


Fn = Callable[[], object]


def _calibrate(fn: Fn, min_time: float) -> int:
    """How many calls of `fn` make a batch of at least `min_time` seconds.

    A single call that takes that long is timed again before it sets a batch of one: a one-off
    cost in it (a kernel compiled or loaded from numba's cache on the first large call) would
    otherwise leave every round timing one call, whose best of a few is noise (a 0.25 ms Adam step
    read as 1.1 ms that way)."""
    number, confirmed = 1, False
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if number == 1 and elapsed >= min_time and not confirmed:
            confirmed = True
            continue
        if elapsed >= min_time or number >= 1 << 22:
            return number
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-7) * 1.2))


def time_side_by_side(
    fns: dict[str, Fn | None], settings: Settings, *, warmup: int = 2, min_time: float | None = None,
    settle: float = 0.0,
) -> dict[str, float | None]:
    """Best seconds per call of each function, their rounds interleaved so that a change of load
    on the machine hits every contender alike. None entries are not run.

    `settle`: seconds of sleep, untimed, before each contender's round, so that the thread pools
    of the one timed before it have gone idle (onnxruntime's and torch's workers keep spinning on
    the cores for a while after a call, and the next contender's threads would wait for them):
    each engine is timed as if it ran alone, as a user runs it."""
    target = settings.min_time if min_time is None else min_time
    live = {k: f for k, f in fns.items() if f is not None}
    numbers = {}
    for name, fn in live.items():
        for _ in range(warmup):
            fn()
        numbers[name] = _calibrate(fn, target)
    best: dict[str, float | None] = {k: None for k in fns}
    for _ in range(settings.repeats):
        for name, fn in live.items():
            gc.collect()
            if settle:
                time.sleep(settle)
            start = time.perf_counter()
            for _ in range(numbers[name]):
                fn()
            elapsed = (time.perf_counter() - start) / numbers[name]
            current = best[name]
            best[name] = elapsed if current is None else min(current, elapsed)
    return best


def machine() -> str:
    """One line describing this machine and the library versions."""
    import numpy as np

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    parts = [cpu, f"{os.cpu_count()} cores", f"Python {platform.python_version()}", f"NumPy {np.__version__}"]
    torch = setup_torch()
    if torch is not None:
        parts.append(f"torch {torch.__version__}")
    parts.append(f"{threads()} threads")
    return ", ".join(parts)


_FACTORS = {"us": 1e6, "ms": 1e3, "s": 1.0, "MiB": 1 / 2**20, "GFLOP/s": 1e-9}


@dataclass
class Row:
    """One case: a value per contender (seconds, or bytes for MiB; None = not run)."""

    case: str
    burn: float | None
    torch: float | None
    numpy: float | None
    unit: str = "us"

    def scaled(self, value: float | None) -> str:
        if value is None:
            return "-"
        return f"{value * _FACTORS[self.unit]:.2f}"

    @staticmethod
    def _ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:.2f}" if a and b else "-"

    @property
    def ratio_torch(self) -> str:
        return self._ratio(self.burn, self.torch)

    @property
    def ratio_numpy(self) -> str:
        return self._ratio(self.burn, self.numpy)


@dataclass
class Table:
    """A titled table; `labels` names the contender columns (default burn, torch, numpy), in the
    order of a row's `burn`, `torch`, `numpy` fields; two labels leave the third out."""

    title: str
    rows: list[Row]
    labels: tuple[str, ...] = ("burn", "torch", "numpy")
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        unit = self.rows[0].unit if self.rows else "us"
        if len(self.labels) == 2:  # two contenders: the third column and its ratio are left out
            a, b = self.labels
            head = f"| case | {a} ({unit}) | {b} ({unit}) | {a}/{b} |"
            lines = [f"### {self.title}", "", head, "|---|---:|---:|---:|"]
            for r in self.rows:
                lines.append(f"| {r.case} | {r.scaled(r.burn)} | {r.scaled(r.torch)} | {r.ratio_torch} |")
        else:
            a, b, c = self.labels
            lines = [
                f"### {self.title}",
                "",
                f"| case | {a} ({unit}) | {b} ({unit}) | {c} ({unit}) | {a}/{b} | {a}/{c} |",
                "|---|---:|---:|---:|---:|---:|",
            ]
            for r in self.rows:
                lines.append(
                    f"| {r.case} | {r.scaled(r.burn)} | {r.scaled(r.torch)} | {r.scaled(r.numpy)} "
                    f"| {r.ratio_torch} | {r.ratio_numpy} |"
                )
        if self.notes:
            lines.append("")
            lines.extend(f"- {note}" for note in self.notes)
        return "\n".join(lines)


def timed_row(case: str, fns: dict[str, Fn | None], settings: Settings, unit: str, **kw: Any) -> Row:
    """Time burn/torch/numpy side by side and make a row of the result."""
    t = time_side_by_side(fns, settings, **kw)
    return Row(case, t.get("burn"), t.get("torch"), t.get("numpy"), unit=unit)
