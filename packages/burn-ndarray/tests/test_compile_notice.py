"""The first-compile notice of burn-ndarray: one line on stderr (logger ``burn.compile``) when a
process compiles numba kernels its cache does not hold, naming the cache folder; nothing when every
kernel loads from the cache, nothing for a user's own numba functions, and silenced through logging.
Each case runs fresh processes on an empty cache folder of its own (``NUMBA_CACHE_DIR``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

NOTICE = "burn-ndarray: compiling numba kernels on first use"
# Two of burn-ndarray's kernels, compiled lazily on their first call.
CALLS = """
    import numpy as np
    from burn_ndarray.kernels.activation import sigmoid_range
    from burn_ndarray.kernels.jit import bounds
    x, out = np.zeros(4, np.float32), np.empty(4, np.float32)
    sigmoid_range(0, 4, x, out)
    print(bounds(10, 1, 3), out.tolist())
"""


def _python(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def test_a_cold_cache_says_so_once_and_a_warm_one_says_nothing(tmp_path: Path) -> None:
    cold = _python(tmp_path, CALLS)
    assert cold.returncode == 0, cold.stderr
    lines = [line for line in cold.stderr.splitlines() if NOTICE in line]
    assert len(lines) == 1, cold.stderr  # two kernels compiled, one line
    assert f"cached in {tmp_path / 'cache'}" in lines[0] and "NUMBA_CACHE_DIR moves it" in lines[0]
    assert "logging.getLogger('burn.compile').setLevel(logging.ERROR)" in lines[0]
    warm = _python(tmp_path, CALLS)
    assert warm.returncode == 0 and warm.stdout == cold.stdout, warm.stderr
    assert NOTICE not in warm.stderr


def test_silenced_through_logging_and_quiet_for_user_kernels(tmp_path: Path) -> None:
    quiet = "import logging; logging.getLogger('burn.compile').setLevel(logging.ERROR)\n"
    silenced = _python(tmp_path, quiet + textwrap.dedent(CALLS))
    assert silenced.returncode == 0 and NOTICE not in silenced.stderr, silenced.stderr
    user_kernel = "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n"
    (tmp_path / "kernel.py").write_text(user_kernel)
    user = _python(tmp_path, """
        from burn_ndarray.runtime import numba_cache
        numba_cache.install()
        import kernel
        print(kernel.twice(21))
    """)  # fmt: skip
    assert user.returncode == 0 and user.stdout.strip() == "42" and NOTICE not in user.stderr, user.stderr
