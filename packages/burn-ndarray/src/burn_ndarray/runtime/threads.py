"""How many threads burn-ndarray's threaded kernels use, and the pool that runs NumPy on them.

The count comes from, in order: `set_num_threads`, ``BURN_NUM_THREADS``, ``OMP_NUM_THREADS`` (and
``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS``, the variables users already set for NumPy's BLAS),
else every core this process may run on, as PyTorch does. The compiled kernels (`burn_ndarray.kernels`,
numba) get the same count, and so does NumPy's BLAS (matmul, the GEMMs of convolutions) when the count
was set here or by ``BURN_NUM_THREADS`` (`blas.set_threads`); the other variables are the BLAS's own.
At one thread every op takes its single-threaded path: nothing is started.

NumPy releases the GIL inside its loops, so ufuncs called on disjoint chunks of an array from
several threads run in parallel; `run` hands chunks to a small pool and runs one itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on first use: the plugin entry point loads this module
    from concurrent.futures import Future, ThreadPoolExecutor

ENV_VARS = ("BURN_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _from_env() -> int:
    """The first of `ENV_VARS` that holds a positive integer (OpenMP's ``4,2`` lists: the first),
    else the number of usable cores."""
    for var in ENV_VARS:
        raw = os.environ.get(var, "").split(",")[0].strip()
        if raw.isdigit() and int(raw) > 0:
            return int(raw)
    return _cores()


_count = _from_env()
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
# Called with the new count by `set_num_threads` (the numba kernels and the op bindings listen).
_listeners: list[Callable[[int], None]] = []


def get_num_threads() -> int:
    """The number of threads burn-ndarray's threaded kernels use.

    Example:
        >>> import burn_ndarray
        >>> burn_ndarray.get_num_threads() >= 1
        True
    """
    return _count


def set_num_threads(count: int) -> None:
    """Use `count` threads for burn-ndarray's threaded kernels (1: every op single-threaded).

    Overrides ``BURN_NUM_THREADS`` / ``OMP_NUM_THREADS``, and sets numba's pool and NumPy's BLAS
    (matmul) to the same count: one setting for every pool burn-ndarray's ops run on
    (``burn.set_num_threads`` calls this). Results are the same bits for the same inputs and
    count; reductions may differ across counts by rounding.

    Args:
        count: a positive number of threads.

    Example:
        >>> import burn_ndarray
        >>> before = burn_ndarray.get_num_threads()
        >>> burn_ndarray.set_num_threads(1)
        >>> burn_ndarray.get_num_threads()
        1
        >>> burn_ndarray.set_num_threads(before)
    """
    global _count, _pool
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"set_num_threads: count must be a positive int, got {count!r}")
    with _lock:
        _count = count
        if _pool is not None:
            _pool.shutdown(wait=True)
            _pool = None
    from burn_ndarray.runtime import blas, tbb  # imported here: the plugin entry point loads this module

    blas.set_threads(count)
    tbb.set_num_threads(count)
    for listener in _listeners:
        listener(count)


def env_count() -> int | None:
    """``BURN_NUM_THREADS`` when it holds a positive integer, else None."""
    raw = os.environ.get("BURN_NUM_THREADS", "").split(",")[0].strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


_env_applied = False


def apply_env() -> None:
    """Once per process, when the backend is made: ``BURN_NUM_THREADS`` sets NumPy's BLAS too (the
    BLAS reads only its own variables), unless `set_num_threads` has set it already."""
    global _env_applied
    if _env_applied:
        return
    _env_applied = True
    count = env_count()
    if count is not None:
        from burn_ndarray.runtime import blas

        if blas._wanted is None:
            blas.set_threads(count)


def _forget_pool() -> None:
    """In a forked child: the parent's pool threads do not exist there; start a new pool."""
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _get_pool() -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor

    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(_count - 1, 1), thread_name_prefix="burn-ndarray")
        return _pool


def parts(size: int, per_thread: int) -> int:
    """How many threads an op over `size` elements uses: one per `per_thread` elements (below
    that, handing work to a thread costs more than it saves), at most the count."""
    return max(1, min(_count, size // per_thread))


def split(length: int, parts: int) -> list[slice]:
    """`parts` contiguous slices of ``range(length)`` of near-equal size (fewer when short)."""
    parts = max(1, min(parts, length))
    step, extra = divmod(length, parts)
    bounds = [0]
    for i in range(parts):
        bounds.append(bounds[-1] + step + (i < extra))
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def run(task: Callable[[slice], object], chunks: Sequence[slice]) -> None:
    """Run ``task(chunk)`` for every chunk, each once, on this thread and the pool's.

    Each thread claims the next chunk not yet claimed, this one included, until none is left: a
    pool thread that has not started (another process holds its core) takes no chunk, and this
    thread runs what is left instead of waiting for that thread's next time slice; this thread
    then waits only for the chunks already begun. Tasks write disjoint parts of a preallocated
    result, so which thread runs a chunk does not change the bits. An exception in any task is
    raised here (the first chunk's, in chunk order), after every claimed task has finished.
    """
    if len(chunks) == 1:
        task(chunks[0])
        return
    pool = _get_pool()
    claims = iter(range(len(chunks)))
    claim_lock = threading.Lock()  # one claim at a time, also without the GIL
    errors: list[tuple[int, BaseException]] = []

    def claim_all() -> None:
        while True:
            with claim_lock:
                index = next(claims, None)
            if index is None:
                return
            try:
                task(chunks[index])
            except BaseException as error:  # raised in the caller below, after every task
                errors.append((index, error))

    helpers = min(len(chunks) - 1, max(_count - 1, 1))  # the pool's size
    futures: list[Future[None]] = [pool.submit(claim_all) for _ in range(helpers)]
    claim_all()
    for future in futures:
        # A helper no pool thread has picked up yet is dropped: every chunk is done by now.
        if not future.cancel():
            future.result()  # claim_all returns once no chunk is left and its own task is done
    if errors:
        raise min(errors, key=lambda found: found[0])[1]
