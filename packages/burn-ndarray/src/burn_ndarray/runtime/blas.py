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

`set_threads`: the thread count of every BLAS library loaded (and of those loaded later), set by
`burn_ndarray.set_num_threads` / `burn.set_num_threads` and by ``BURN_NUM_THREADS`` when the backend
is made: without it, NumPy's BLAS keeps the count it read from ``OPENBLAS_NUM_THREADS`` /
``OMP_NUM_THREADS`` at start-up (every core), and a model on "one thread" still ran its matmuls on
all of them.

`configure`: once per process, when the backend is made, shortens that poll to 2^20 cycles
(about 0.3 ms), unless the user set ``OPENBLAS_THREAD_TIMEOUT`` (or ``BURN_NDARRAY_BLAS=system``):
long enough for the back-to-back GEMMs of a layer's forward and backward to find the workers
awake, short enough that they sleep while burn-ndarray's own threads work. Benchmark steps at 2
threads, two rounds each (docs/benchmarks-log.md): CNN 0.95-0.96 -> 0.76-0.80 x torch, transformer
1.12-1.13 -> 1.05-1.08, MLP, LSTM and GRU unchanged; 2^18 cycles cost the transformer and LSTM
steps wake-ups (up to 1.25 and 1.81).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy

# `configure`'s ``OPENBLAS_THREAD_TIMEOUT``: idle OpenBLAS threads poll for 2^20 cycles.
QUIET_TIMEOUT_EXPONENT = 20
# Idle OpenBLAS threads that poll for at most this many cycles (``OPENBLAS_THREAD_TIMEOUT`` of 20
# or less: 0.3 ms at 3.5 GHz) are taken to be asleep while burn-ndarray's threads work.
QUIET_POLL_CYCLES = 1 << QUIET_TIMEOUT_EXPONENT
# OpenBLAS's default poll, ``1 << THREAD_TIMEOUT`` (28) cycles, when the variable is unset.
_DEFAULT_POLL_EXPONENT = 28

_lock = threading.RLock()
_controller: Any = None
# The BLAS libraries loaded, and NumPy's among them (`_numpys`), found together: the second is asked at
# every Winograd-sized conv, and resolving its paths is not free (docs/benchmarks-log.md, burn-ndarray
# measurements).
_found: tuple[list[Any], list[Any]] = ([], [])
_modules_seen = 0  # len(sys.modules) when the libraries were found
_poll_cycles: dict[str, int] = {}  # per library file: fixed when the library was loaded
_wanted: int | None = None  # `set_threads`' count, given to libraries loaded later too
_set_on: set[str] = set()  # the library files `_wanted` was given to
_configured = False


def _after_fork() -> None:
    """In a forked child: a lock another thread of the parent held would never be released."""
    global _lock
    _lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _libraries() -> tuple[list[Any], list[Any]]:
    """threadpoolctl's controllers of the BLAS libraries loaded, and NumPy's among them: found
    again (milliseconds) when modules were imported since, which is how libraries come (numba's
    first compilation imports SciPy, with its own OpenBLAS)."""
    global _controller, _found, _modules_seen
    if _controller is None or len(sys.modules) != _modules_seen:
        # Without waiting once found: a conv holding the limit would block the check.
        if _lock.acquire(blocking=_controller is None):
            try:
                if _controller is None or len(sys.modules) != _modules_seen:
                    from threadpoolctl import ThreadpoolController

                    _controller = ThreadpoolController()
                    blas = [lib for lib in _controller.lib_controllers if lib.user_api == "blas"]
                    _found = (blas, _numpys(blas))
                    _modules_seen = len(sys.modules)
                    if _wanted is not None:  # libraries loaded since `set_threads` (numba's SciPy)
                        _apply(blas, only_new=True)
            finally:
                _lock.release()
    return _found


def _apply(libs: list[Any], *, only_new: bool) -> None:
    for lib in libs:
        if only_new and lib.filepath in _set_on:
            continue  # may be inside `single_threaded`'s limit now: leave its count alone
        lib.set_num_threads(_wanted)  # see `set_threads` on OpenBLAS and threads
        _set_on.add(lib.filepath)


def set_threads(count: int) -> None:
    """Run every BLAS library of the process, and those loaded later, on `count` threads.

    OpenBLAS (0.3.31 measured) keeps a count set this way from the main thread against later sets
    made from other threads: after it, `single_threaded` entered from a worker thread may leave the
    BLAS at this count (oversubscription in threaded Winograd convolutions, never a wrong value).

    Example:
        >>> from burn_ndarray.runtime import blas
        >>> before = blas.num_threads()
        >>> blas.set_threads(1)
        >>> blas.num_threads()
        1
        >>> blas.set_threads(before)
    """
    global _wanted
    with _lock:  # not while `single_threaded` holds the libraries at one thread
        _wanted = count
        _apply(_libraries()[0], only_new=False)


def num_threads() -> int:
    """The thread count of NumPy's BLAS (the largest, if NumPy's wheel carries several); 1 without
    a BLAS threadpoolctl knows."""
    return max((lib.num_threads for lib in _numpy_libraries()), default=1)


def _numpy_libraries() -> list[Any]:
    """NumPy's BLAS libraries (`_numpys` of those loaded)."""
    return _libraries()[1]


@contextmanager
def single_threaded() -> Iterator[None]:
    """BLAS calls made inside (from any thread) run on their calling thread alone; the BLAS
    libraries' thread counts are restored on the way out.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray.runtime import blas
        >>> with blas.single_threaded():
        ...     (np.ones((2, 2)) @ np.ones((2, 2))).tolist()
        [[2.0, 2.0], [2.0, 2.0]]
    """
    _libraries()
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


def _numpys(libs: list[Any]) -> list[Any]:
    """Those of `libs` that NumPy's wheel carries (in ``numpy.libs`` or inside ``numpy``), where
    burn-ndarray's GEMMs run; all of them if none is (a NumPy built on a system BLAS shares it
    with SciPy). Others are not called by burn-ndarray: SciPy's OpenBLAS, which numba imports."""
    root = os.path.dirname(os.path.realpath(numpy.__file__))
    folders = (root + os.sep, root + ".libs" + os.sep)
    own = [lib for lib in libs if os.path.realpath(lib.filepath).startswith(folders)]
    return own or libs


def idle_threads_poll() -> bool:
    """Whether NumPy's BLAS library runs several threads whose idle ones keep polling: any
    but OpenBLAS with ``OPENBLAS_THREAD_TIMEOUT`` of 20 or less (MKL's and BLIS's OpenMP threads
    spin too by default). Where NumPy's wheel carries its BLAS, other BLAS libraries in the
    process do not count: burn-ndarray makes no GEMM on them, so their threads stay asleep.

    Example:
        >>> from burn_ndarray.runtime import blas
        >>> isinstance(blas.idle_threads_poll(), bool)
        True
    """
    for lib in _numpy_libraries():
        if lib.num_threads <= 1:
            continue
        if lib.internal_api == "openblas" and _openblas_poll_cycles(lib) <= QUIET_POLL_CYCLES:
            continue
        return True
    return False


def configure() -> bool:
    """Once per process: make OpenBLAS's idle threads poll for 2^20 cycles instead of 2^28, by
    the library's own means (its ``OPENBLAS_THREAD_TIMEOUT``, read back with
    ``openblas_read_env``; its worker threads stopped with ``blas_thread_shutdown_``, as it does
    itself before every ``fork``, and restarted by the next GEMM with the new poll). True if it
    was applied; False after the first call and where it does not apply: the user set
    ``OPENBLAS_THREAD_TIMEOUT`` or ``BURN_NDARRAY_BLAS=system``, NumPy's BLAS is not a pthreads
    OpenBLAS with several threads, on Windows (its OpenBLAS's threads wait on events, they do
    not poll), or another Python thread is running (it could be inside a GEMM,
    whose workers must not be stopped). ``os.environ`` is left as it was.

    Example:
        >>> from burn_ndarray.runtime import blas
        >>> isinstance(blas.configure(), bool)  # False once the backend has made it
        True
    """
    global _configured
    if _configured:
        return False
    _configured = True
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ or os.environ.get("BURN_NDARRAY_BLAS", "").lower() == "system":
        return False
    if threading.active_count() > 1 or os.name != "posix":  # Windows' OpenBLAS threads wait on events
        return False
    applied = False
    for lib in _numpy_libraries():
        if lib.internal_api != "openblas" or lib.threading_layer != "pthreads" or lib.num_threads <= 1:
            continue
        dynlib = lib.dynlib
        read_env = getattr(dynlib, "openblas_read_env", None)
        shutdown = getattr(dynlib, "blas_thread_shutdown_", None)
        getter = getattr(dynlib, "openblas_thread_timeout", None)
        if read_env is None or shutdown is None or getter is None or getter() != 0:
            continue
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(QUIET_TIMEOUT_EXPONENT)
        try:
            read_env()  # every OPENBLAS_* variable again: the others are only read at start-up
        finally:
            del os.environ["OPENBLAS_THREAD_TIMEOUT"]
        shutdown()
        _poll_cycles[lib.filepath] = 1 << QUIET_TIMEOUT_EXPONENT
        applied = True
    return applied
