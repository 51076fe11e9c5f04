"""The kernel whose first launch starts numba's threading layer on TBB (`tbb.ready`).

A module of its own, imported by `tbb` when it starts the layer: it loads numba, which `tbb`
itself must not (every op asks it whether the TBB pool runs).
"""

from __future__ import annotations

from numba import njit, prange

from burn_ndarray.runtime import numba_cache

numba_cache.install()  # before the kernel below loads or saves its cache: see numba_cache


@njit(cache=True, error_model="numpy", nogil=True, parallel=True)
def count_parts(parts: int) -> int:
    """Runs `parts` empty chunks on the pool: starts it (see `tbb.ready`)."""
    total = 0
    for _ in prange(parts):
        total += 1
    return total
