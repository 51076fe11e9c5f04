"""NumPy's BLAS threads, as burn-ndarray's own threaded work needs to know and set them.

`single_threaded`: BLAS on one thread for a while, for work that burn-ndarray splits between its
own threads, each making its own small GEMMs (the Winograd convolution's blocks). OpenBLAS splits
every GEMM between its threads; for many small GEMMs made from several threads at once that
oversubscribes the cores and syncs its pool per call. threadpoolctl (the library scikit-learn uses
for the same purpose) sets the BLAS library's thread count. The setting is process-wide and
threadpoolctl lets one Python thread own OpenBLAS's at a time, so one limit is active at a time
here: a second thread waits for the first to leave.

`idle_threads_poll`: whether the BLAS library's idle worker threads keep polling for work after
a GEMM. OpenBLAS's do for 2^28 CPU cycles (about 80 ms) unless ``OPENBLAS_THREAD_TIMEOUT`` was set
when NumPy loaded it; inside a training step, where some GEMM runs every few milliseconds, they
never sleep and take a share of the cores from any other threads. burn-ndarray's threaded work
then runs slower than the same work left to BLAS's pool (the Winograd convolution's blocks: the
benchmark CNN step at 2 threads 14.7-15.5 ms with im2col + OpenBLAS's threads, 17.2 with the
blocks on burn's threads; 12.6-15.0 with the blocks when OpenBLAS's threads sleep at once).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Idle OpenBLAS threads that poll for at most this many cycles (``OPENBLAS_THREAD_TIMEOUT`` of 16
# or less: 20 us at 3.5 GHz) are taken to be asleep.
QUIET_POLL_CYCLES = 1 << 16
# OpenBLAS's default poll, ``1 << THREAD_TIMEOUT`` (28) cycles, when the variable is unset.
_DEFAULT_POLL_EXPONENT = 28

_lock = threading.RLock()
_controller: Any = None
_poll_cycles: dict[str, int] = {}  # per library file: fixed when the library was loaded


def _after_fork() -> None:
    """In a forked child: a lock another thread of the parent held would never be released."""
    global _lock
    _lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _blas_libraries() -> list[Any]:
    """threadpoolctl's controllers of the BLAS libraries loaded (found once: milliseconds)."""
    global _controller
    if _controller is None:  # no lock once found: a conv holding the limit would block the check
        with _lock:
            if _controller is None:
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
    return [lib for lib in _controller.lib_controllers if lib.user_api == "blas"]


@contextmanager
def single_threaded() -> Iterator[None]:
    """BLAS calls made inside (from any thread) run on their calling thread alone; the BLAS
    libraries' thread counts are restored on the way out.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray import _blas
        >>> with _blas.single_threaded():
        ...     (np.ones((2, 2)) @ np.ones((2, 2))).tolist()
        [[2.0, 2.0], [2.0, 2.0]]
    """
    _blas_libraries()
    with _lock, _controller.limit(limits=1, user_api="blas"):
        yield


def _openblas_poll_cycles(lib: Any) -> int:
    """How long `lib`'s idle threads poll, in cycles: ``2 ** OPENBLAS_THREAD_TIMEOUT`` (clamped
    to 4..30 as OpenBLAS does), or its default when unset or unreadable."""
    if lib.filepath not in _poll_cycles:
        getter = getattr(lib.dynlib, "openblas_thread_timeout", None)
        exponent = int(getter()) if getter is not None else 0  # 0: unset
        exponent = min(max(exponent, 4), 30) if exponent > 0 else _DEFAULT_POLL_EXPONENT
        _poll_cycles[lib.filepath] = 1 << exponent
    return _poll_cycles[lib.filepath]


def idle_threads_poll() -> bool:
    """Whether a BLAS library in the process runs several threads whose idle ones keep polling:
    any but OpenBLAS with ``OPENBLAS_THREAD_TIMEOUT`` of 16 or less (MKL's and BLIS's OpenMP
    threads spin too by default).

    Example:
        >>> from burn_ndarray import _blas
        >>> isinstance(_blas.idle_threads_poll(), bool)
        True
    """
    for lib in _blas_libraries():
        if lib.num_threads <= 1:
            continue
        if lib.internal_api == "openblas" and _openblas_poll_cycles(lib) <= QUIET_POLL_CYCLES:
            continue
        return True
    return False
