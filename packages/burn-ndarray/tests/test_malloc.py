"""burn-ndarray's malloc settings (`runtime.malloc`): applied once per process on glibc, never with
``BURN_NDARRAY_MALLOC=system``."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

_CHECK = """
from burn_ndarray.runtime import malloc
first = malloc.configure()
print(first, malloc.configure())
"""


def _run(env: dict[str, str]) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", _CHECK], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="needs glibc"
)
def test_applied_once_on_glibc() -> None:
    assert _run({"BURN_NDARRAY_MALLOC": ""}) == ["True", "False"]


def test_left_alone_when_asked() -> None:
    assert _run({"BURN_NDARRAY_MALLOC": "system"}) == ["False", "False"]
