"""`runtime.blas.configure`: OpenBLAS's idle threads made to sleep after 2^20 cycles, once per process,
when the backend is made; never against the user's own settings or under another thread.

Each case runs in a fresh interpreter: OpenBLAS reads its settings once per process, and pytest's
workers run other threads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Prints: configure()'s result, a second call's, the poll OpenBLAS reports, whether burn-ndarray
# takes its idle threads to poll, the environment variable afterwards, whether a 2-thread GEMM
# after it is right, and the states of the process's threads 50 ms after that GEMM.
_CHECK = """
import os, sys, time, threading
import numpy as np
from burn_ndarray.runtime import blas

if os.environ.get("EXTRA_THREAD"):
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
a = np.ones((512, 512), np.float32)
a @ a  # OpenBLAS's workers are running
first = blas.configure()
second = blas.configure()
libs = [lib for lib in blas._numpy_libraries() if lib.internal_api == "openblas"]
timeout = libs[0].dynlib.openblas_thread_timeout() if libs else -1
right = bool(((a @ a) == 512).all())
time.sleep(0.05)
states = []
for task in os.listdir("/proc/self/task"):
    with open(f"/proc/self/task/{task}/stat") as f:
        states.append(f.read().rsplit(")", 1)[1].split()[0])
print(first, second, timeout, blas.idle_threads_poll(), os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
      right, "".join(sorted(states)))
"""


def _openblas_with_pthreads() -> bool:
    from threadpoolctl import ThreadpoolController

    return any(
        lib.internal_api == "openblas" and lib.threading_layer == "pthreads"
        for lib in ThreadpoolController().lib_controllers
    )


needs_openblas = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not _openblas_with_pthreads(),
    reason="needs NumPy on a pthreads OpenBLAS (NumPy's Linux wheels) and /proc",
)


def _run(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "BURN_NDARRAY_BLAS")}
    run = subprocess.run(
        [sys.executable, "-c", _CHECK],
        env={**clean, "OPENBLAS_NUM_THREADS": "2", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


@needs_openblas
def test_applied_once_and_the_workers_sleep() -> None:
    first, second, timeout, polls, env, right, states = _run()
    assert (first, second, timeout, polls, env, right) == ("True", "False", "20", "False", "None", "True")
    # The worker went to sleep within 50 ms of its GEMM (the default poll is 80 ms); only the
    # thread reading /proc runs.
    assert states.count("R") == 1, states


@needs_openblas
def test_the_users_timeout_is_kept() -> None:
    first, _, timeout, polls, env, right, _ = _run(OPENBLAS_THREAD_TIMEOUT="28")
    assert (first, timeout, polls, env, right) == ("False", "28", "True", "28", "True")


@needs_openblas
@pytest.mark.parametrize(
    ("env", "polls"),
    [
        ({"BURN_NDARRAY_BLAS": "system"}, "True"),  # asked to leave OpenBLAS alone
        ({"EXTRA_THREAD": "1"}, "True"),  # another thread could be inside a GEMM
        ({"OPENBLAS_NUM_THREADS": "1"}, "False"),  # no workers: nothing to do
    ],
)
def test_left_alone(env: dict[str, str], polls: str) -> None:
    first, _, timeout, now_polls, *_ = _run(**env)
    assert (first, timeout, now_polls) == ("False", "0", polls)


@needs_openblas
def test_backend_applies_it() -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "BURN_NDARRAY_BLAS")}
    check = (
        "import burn; from burn_ndarray.runtime import blas; burn.backend('ndarray'); "
        "print(*[lib.dynlib.openblas_thread_timeout() for lib in blas._numpy_libraries()])"
    )
    run = subprocess.run(
        [sys.executable, "-c", check],
        env={**clean, "OPENBLAS_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["20"]
