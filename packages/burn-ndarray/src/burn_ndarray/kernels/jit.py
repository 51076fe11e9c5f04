"""What every compiled kernel shares: numba's options, with its disk cache made safe for several
processes first (`burn_ndarray.runtime.numba_cache`), and the chunk of a split launcher.

Kernels come in pairs: a serial kernel over a range of elements, rows or images, and a launcher
that runs it on `parts` chunks in a ``prange`` on numba's TBB pool, the same cut as
`burn_ndarray.runtime.threads.split` (`bounds`), so that one element is computed by the same serial
code whichever thread takes its chunk: the bits are the serial kernel's at any thread count.
`burn_ndarray.runtime.split.run_ranges` / `run_chunks` pick the launcher, the Python pool or one
call. Options that may be None (RMSProp's averages) are pruned at compile time: numba compiles one
kernel per combination of None-ness (`part` keeps a None typed as None through a launcher).
"""

from __future__ import annotations

from typing import Any

from numba import njit, types
from numba.core.extending import overload

from burn_ndarray.runtime import numba_cache

numba_cache.install()  # before the first kernel loads or saves its cache: see numba_cache
Array = Any
# Compiled once per machine and cached on disk; ``error_model="numpy"`` drops Python's
# division-by-zero check, which would stop LLVM from vectorizing; the GIL is released.
jit = njit(cache=True, error_model="numpy", nogil=True)
jit_parallel = njit(cache=True, error_model="numpy", nogil=True, parallel=True)


@jit
def bounds(n: int, chunk: int, parts: int) -> tuple[int, int]:
    """Chunk `chunk` of ``range(n)`` cut in `parts`: sizes differ by at most one, larger first
    (as `threads.split`)."""
    step, extra = divmod(n, parts)
    start = chunk * step + min(chunk, extra)
    return start, start + step + (1 if chunk < extra else 0)


def part(a: Array | None, lo: int, hi: int) -> Array | None:
    """``a[lo:hi]``, or None for a None `a`: compiled (`_part`), the None stays typed as None, so
    the serial kernel called with it prunes its branches as when called directly."""
    return None if a is None else a[lo:hi]


@overload(part)
def _part(a: Any, lo: Any, hi: Any) -> Any:
    # numba wants the implementations' parameters, annotations included, to be the overload's.
    def nothing(a: Any, lo: Any, hi: Any) -> Any:
        return None

    def chunk(a: Any, lo: Any, hi: Any) -> Any:
        return a[lo:hi]

    return nothing if isinstance(a, types.NoneType) else chunk
