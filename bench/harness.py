"""Shared benchmark plumbing: timing, machine description, side-by-side tables.

Every benchmark runs burn, PyTorch (CPU) and a hand-written NumPy floor in one process, on the same
data, with the same thread count and warm-up, and prints times and ratios to torch.
"""

from __future__ import annotations

import gc
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def threads() -> int:
    """Thread count used for every library in a run (BURN_BENCH_THREADS, default: all cores)."""
    return int(os.environ.get("BURN_BENCH_THREADS", os.cpu_count() or 1))


def setup_torch():  # type: ignore[no-untyped-def]
    """Import torch pinned to `threads()` threads, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads())
    return torch


def time_call(fn: Callable[[], object], *, min_time: float = 0.2, repeats: int = 5, warmup: int = 3) -> float:
    """Best-of-`repeats` seconds per call; each repeat loops until it lasts `min_time`."""
    for _ in range(warmup):
        fn()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time / 4 or number >= 1 << 24:
            break
        number *= 4
    number = max(1, int(number * (min_time / max(elapsed, 1e-9)) / 4)) if elapsed < min_time else number
    best = float("inf")
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best = min(best, (time.perf_counter() - start) / number)
    finally:
        if gc_was_enabled:
            gc.enable()
    return best


def machine() -> str:
    """One line describing this machine and the library versions."""
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


@dataclass
class Row:
    """One benchmark case: seconds per call for each contender (None = not run)."""

    case: str
    burn: float | None
    torch: float | None
    numpy: float | None
    unit: str = "us"

    def scaled(self, value: float | None) -> str:
        if value is None:
            return "-"
        factor = {"us": 1e6, "ms": 1e3, "s": 1.0}[self.unit]
        return f"{value * factor:.2f}"

    @property
    def ratio_torch(self) -> str:
        return f"{self.burn / self.torch:.2f}" if self.burn and self.torch else "-"

    @property
    def ratio_numpy(self) -> str:
        return f"{self.burn / self.numpy:.2f}" if self.burn and self.numpy else "-"


def print_table(title: str, rows: list[Row]) -> str:
    """Print (and return) a Markdown table of `rows`."""
    unit = rows[0].unit if rows else "us"
    lines = [
        f"### {title}",
        "",
        f"| case | burn ({unit}) | torch ({unit}) | numpy ({unit}) | burn/torch | burn/numpy |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.case} | {r.scaled(r.burn)} | {r.scaled(r.torch)} | {r.scaled(r.numpy)} "
            f"| {r.ratio_torch} | {r.ratio_numpy} |"
        )
    text = "\n".join(lines)
    print(text, flush=True)
    print()
    return text
