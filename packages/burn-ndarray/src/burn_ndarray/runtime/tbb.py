"""numba's TBB threading layer: the native pool that runs burn-ndarray's parallel kernels.

A task handed to a sleeping Python thread costs 20-100 us on the machines measured (the wake-up
of an idle core; more in a VM), so the Python pool (`threads`) only pays from about a million
elements. A native pool whose workers stay awake between back-to-back ops hands a chunk over in
well under a microsecond (a 1M float32 add: 0.075 ms on two threads against 0.15 on one).

numba offers three such pools. TBB's is the one that is safe both in a forked child and with
several Python threads calling kernels at once (burn's thread-rank data-parallel tests do);
GNU OpenMP's aborts a forked child, the ``workqueue`` one aborts concurrent callers. So the
parallel kernels run only on TBB: `ready` loads it and says whether it is numba's layer; when it
is not (no ``tbb`` package, another layer chosen by the user or already started), the Python
pool runs the same serial kernels instead.

pip's ``tbb`` wheel puts ``libtbb`` in the environment's ``lib`` folder, which the dynamic loader
does not search, so numba's TBB module cannot link it by name; it is loaded here first, from the
path the wheel's own file list gives.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import Any

_LIBRARIES = ("libtbb.so.12", "libtbb.12.dylib", "tbb12.dll")
_state: bool | None = None
_lock = threading.Lock()
_set_chunk_size: Any = None


def _preload() -> None:
    """Load the ``tbb`` wheel's shared library globally, so that numba's TBB module links it."""
    from importlib import metadata

    try:
        files = metadata.files("tbb") or []
    except metadata.PackageNotFoundError:
        return
    for file in files:
        if file.name in _LIBRARIES:
            path = str(file.locate())
            if sys.platform == "win32":
                os.add_dll_directory(os.path.dirname(path))
            ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
            return


def _start() -> bool:
    """Start numba's threading layer on TBB if nothing has started one; True if TBB runs it."""
    # numba is imported on the first op large enough for a compiled kernel, never with the backend.
    import numba
    from numba.core import config as numba_config

    config: Any = numba_config  # its settings are attributes made at import

    try:
        return bool(numba.threading_layer() == "tbb")  # already started (by us or the user)
    except ValueError:
        pass  # not started yet
    try:
        _preload()
    except OSError:
        return False
    chosen = config.THREADING_LAYER
    if chosen not in ("default", "safe", "tbb"):
        return False  # the user asked numba for another layer: honour it, use the Python pool
    config.THREADING_LAYER = "tbb"  # never fall back silently to a fork-unsafe layer
    try:
        from burn_ndarray.runtime.tbb_start import count_parts  # a numba kernel: loaded here only

        count_parts(1)  # the first parallel kernel starts numba's threading layer
    except (ValueError, ImportError, OSError):
        config.THREADING_LAYER = chosen  # numba's own choice stays open to the user's code
        return False
    return bool(numba.threading_layer() == "tbb")


def set_num_threads(count: int) -> None:
    """Cap numba's pool at `count` threads for kernels launched from this thread (numba's setting
    is per calling thread, at most ``NUMBA_NUM_THREADS``); nothing before the pool has started,
    since asking numba then would start a layer of its own choosing."""
    if not _state:
        return
    import numba
    from numba.core import config as numba_config

    most: int = getattr(numba_config, "NUMBA_NUM_THREADS", 1)  # made at import: no stub knows it
    numba.set_num_threads(max(1, min(count, most)))


def ready() -> bool:
    """Whether the parallel kernels can run on numba's TBB pool (decided once, on first use).

    Example:
        >>> from burn_ndarray.runtime import tbb
        >>> isinstance(tbb.ready(), bool)
        True
    """
    global _state
    if _state is None:
        with _lock:
            if _state is None:
                try:
                    _state = _start()
                except ImportError:  # numba missing
                    _state = False
                if _state:
                    from burn_ndarray.runtime import threads

                    set_num_threads(threads.get_num_threads())
    return _state


def chunk_size_setter() -> Any:
    """numba's setter of the calling thread's parallel chunk size (returning the old size): the C
    function its public `numba.set_parallel_chunksize` checks its argument for and calls, 4.5x
    cheaper (a set and restore: 9 us against 42 at load average 10 on the 2-core machine, 0.9 us
    at load 2); the public one where numba has no such attribute. Call it once `ready` is True."""
    global _set_chunk_size
    if _set_chunk_size is None:
        import numba
        from numba.np.ufunc import parallel

        _set_chunk_size = getattr(parallel, "_set_parallel_chunksize", None) or numba.set_parallel_chunksize
    return _set_chunk_size


def launch(parallel_fn: Any, parts: int, *args: Any) -> None:
    """``parallel_fn(parts, *args)``, a kernel whose ``prange(parts)`` loop runs one chunk per
    iteration, with numba's chunk size 1 on this thread for the call: numba's scheduler then
    hands the iterations out one at a time, so that a worker that is not running (another process
    holds its core) takes none that is not started and the caller runs the rest, where numba's
    default (0) cuts the loop in one fixed share per thread that the caller waits for. The chunk
    size is numba's per-thread setting, so it cannot be set in the (disk-cached) kernels: numba
    refuses to cache a function with ``numba.parallel_chunksize`` inside. Restored on return, so
    that a user's own parallel numba code keeps its chunk size.

    Example:
        >>> from burn_ndarray.runtime import tbb
        >>> if tbb.ready():
        ...     from burn_ndarray.runtime.tbb_start import count_parts
        ...     tbb.launch(count_parts, 4)
    """
    setter = chunk_size_setter()
    before = setter(1)
    try:
        parallel_fn(parts, *args)
    finally:
        setter(before)
