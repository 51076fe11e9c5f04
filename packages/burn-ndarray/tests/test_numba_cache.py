"""`runtime.numba_cache`: numba's disk cache stays right when processes compile one kernel at once, and
an index that maps a signature to another signature's code (the damage that race leaves) is
compiled again and repaired instead of failing. Each case runs fresh Python processes on a cache
directory of its own (``NUMBA_CACHE_DIR``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

KERNEL = """
import numpy as np
from numba import njit

@njit(cache=True)
def total(x, y):
    if y is None:
        return x.sum()
    return (x * y).sum()
"""
DTYPES = ("float32", "float64", "int32", "int64")


def _python(tmp_path: Path, code: str, patched: bool) -> subprocess.CompletedProcess[str]:
    prelude = "from burn_ndarray.runtime import numba_cache; numba_cache.install()\n" if patched else ""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def _data_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").rglob("kernel.total-*.nbc"))


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    (tmp_path / "kernel.py").write_text(KERNEL)
    return tmp_path


def test_code_of_another_signature_is_recompiled_and_repaired(kernel: Path) -> None:
    calls = """
        import numpy as np, kernel
        x = np.arange(4.0)
        print(kernel.total(x, None), kernel.total(x, x), sum(kernel.total.stats.cache_hits.values()))
    """
    first = _python(kernel, calls, patched=False)
    assert first.returncode == 0 and first.stdout.split() == ["6.0", "14.0", "0"], first.stderr
    a, b = _data_files(kernel)  # two signatures: swap their code, as the race can
    a.rename(a.with_suffix(".swap"))
    b.rename(a)
    a.with_suffix(".swap").rename(b)
    damaged = _python(kernel, calls, patched=False)
    assert damaged.returncode != 0 and "can't unbox" in damaged.stderr  # numba alone fails
    repaired = _python(kernel, calls, patched=True)
    assert repaired.returncode == 0 and repaired.stdout.split() == ["6.0", "14.0", "0"], repaired.stderr
    again = _python(kernel, calls, patched=False)  # the entries were rewritten: plain numba loads them
    assert again.returncode == 0 and again.stdout.split() == ["6.0", "14.0", "2"], again.stderr


def test_processes_compiling_at_once_keep_every_signature(kernel: Path) -> None:
    """Four processes, one dtype each, released together: every signature ends in the index with
    its own code (a later process loads all four from disk, each giving its right answer)."""
    (kernel / "go").unlink(missing_ok=True)
    compile_one = """
        import os, sys, time, numpy as np, kernel
        while not os.path.exists("go"):
            time.sleep(0.001)
        print(kernel.total(np.arange(5, dtype=sys.argv[1]), None))
    """
    prelude = "from burn_ndarray.runtime import numba_cache; numba_cache.install()\n"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(kernel / "cache"), "PYTHONPATH": str(kernel)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", prelude + textwrap.dedent(compile_one), dtype],
            cwd=kernel, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for dtype in DTYPES
    ]
    (kernel / "go").touch()
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0 and float(out) == 10.0, err
    check = _python(
        kernel,
        f"""
        import numpy as np, kernel
        print(*[kernel.total(np.arange(5, dtype=d), None) for d in {DTYPES!r}])
        print(sum(kernel.total.stats.cache_hits.values()))
        """,
        patched=False,
    )
    assert check.returncode == 0, check.stderr
    values, hits = check.stdout.splitlines()
    assert [float(v) for v in values.split()] == [10.0] * 4
    assert int(hits) == 4  # all four on disk: none lost to another process's index


def test_install_is_idempotent() -> None:
    """A second install must not wrap numba's load again (each install makes a new wrapper)."""
    from numba.core import caching

    from burn_ndarray.runtime import numba_cache

    numba_cache.install()
    load, save = caching.Cache._load_overload, caching.IndexDataCacheFile.save
    assert save is numba_cache._save
    numba_cache.install()
    assert caching.Cache._load_overload is load and caching.IndexDataCacheFile.save is save


def test_a_file_system_without_locks_still_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from burn_ndarray.runtime import numba_cache

    if numba_cache.fcntl is None:
        pytest.skip("no fcntl here (Windows): saves are numba's own")

    def refuse(*args: object) -> None:
        raise OSError(37, "No locks available")

    monkeypatch.setattr(numba_cache.fcntl, "flock", refuse)
    entered = []
    with numba_cache._locked(str(tmp_path)):
        entered.append(True)
    with numba_cache._locked(str(tmp_path / "missing" / "dir")):  # the lock file cannot be made
        entered.append(True)
    assert entered == [True, True]
