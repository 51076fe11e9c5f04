"""NumPy's BLAS on one thread while other processes hold the cores.

OpenBLAS splits a GEMM in fixed shares whose threads wait for each other (`runtime.gemm`); when
other processes keep every core busy, each wait lasts a time slice of the scheduler. On the shared
2-core machine (load average 10-11) ViT-tiny at batch 1 took 1118 ms at 2 threads against 124 ms
with NumPy's BLAS on one thread and burn's own kernels still at 2 (docs/benchmarks-log.md, "The
second core"). burn-ndarray's blocked GEMMs and TBB kernels hand work out as it is claimed, so
they need no such care; the BLAS calls of other ops (the convolutions' and attention's GEMMs) do.

`follow` (called by `float_matmul` on its large products): at most once a `PERIOD`, the cores
other processes use (the 1-minute load average less this process's own CPU use since the last
look) decide the BLAS's thread count: burn's count (or the count `blas.set_threads` set) while
burn's count of cores are free (to half a core), else one. A quiet machine keeps the count.
``BURN_NDARRAY_BLAS=system`` (the user manages the BLAS) turns it off; so should a container
pinned to a few of a busy host's cores, whose load average is the host's (Linux reports it
machine-wide): the check then sees others' work on cores this process cannot run on.
"""

from __future__ import annotations

import os
import threading
import time

from burn_ndarray.runtime import threads

# Seconds between looks: the load average moves over tens of seconds, a look costs microseconds.
PERIOD = 1.0
_main = threading.main_thread()
_state = {"at": -PERIOD, "cpu": 0.0}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def free_cores(load: float, own: float, cores: int) -> float:
    """Cores left to this process: `cores` less the load average `load` without this process's
    own share `own` (cores it used lately).

    Example:
        >>> from burn_ndarray.runtime.busy import free_cores
        >>> free_cores(load=2.0, own=2.0, cores=2)  # this process alone
        2.0
        >>> free_cores(load=9.0, own=0.5, cores=2)  # others hold both cores
        0.0
    """
    return max(0.0, cores - max(0.0, load - own))


def follow() -> None:
    """Set NumPy's BLAS to one thread while fewer cores are free than burn's thread count, back to
    that count once they are (see the module); nothing off the main thread, at one thread, within
    `PERIOD` of the last look, or where NumPy's BLAS is not an OpenBLAS `runtime.gemm` can set."""
    now = time.monotonic()
    if now - _state["at"] < PERIOD or threading.current_thread() is not _main:
        return
    count = threads.get_num_threads()
    times = os.times()
    cpu = times.user + times.system
    elapsed = now - _state["at"]
    own = (cpu - _state["cpu"]) / elapsed if elapsed < 10 * PERIOD else 0.0
    _state["at"], _state["cpu"] = now, cpu
    if count < 2 or os.environ.get("BURN_NDARRAY_BLAS", "").lower() == "system":
        return
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available on this system
        return
    from burn_ndarray.runtime import blas, gemm

    functions = gemm._functions()
    wanted = count if blas._wanted is None else blas._wanted  # the count set, else burn's
    if not functions or wanted < 2:
        return
    # Half a core of slack: a load average is never exactly the cores in use.
    target = 1 if free_cores(load, own, _cores()) < count - 0.5 else wanted
    if functions["get"]() != target:
        functions["set"](target)
