"""glibc's malloc settings for a process that computes on large NumPy arrays.

Every op result is a fresh array. By default glibc maps each allocation above a threshold that
grows only as memory is freed (128 KiB at first) with a fresh ``mmap``, and returns freed memory
at the top of the heap to the system beyond 128 KiB, so a fresh result of a few MB is often
memory the kernel must fault in and zero page by page on first write: 1 ms for the 5.5 MB output
of a conv layer here. A CNN training step (bench/workloads/cnn.py, batch 64, 2-core AVX-512 EPYC
VM) spent 8 of its 28 ms so (28 -> 19.5 ms with the settings below).

`configure` keeps allocations below 32 MiB in the heap, where freed blocks are reused, and lets
up to 256 MiB of free memory stay with the process: its resident size then follows its peak use
per step instead of shrinking between ops (the caching that PyTorch's and Burn's allocators do).
Larger arrays are still mapped fresh (the optimizer recycles its own, see `recycle`).
``BURN_NDARRAY_MALLOC=system`` leaves malloc as it is. Other C libraries (musl, macOS, Windows)
are left alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

MMAP_THRESHOLD = 32 << 20  # glibc's largest accepted value on 64-bit (2 x its 16 MiB default max)
TRIM_THRESHOLD = 256 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # <malloc.h>
_done = False


def configure() -> bool:
    """Apply the settings once per process (no-op after the first call); True if glibc took them.

    Example:
        >>> from burn_ndarray.runtime import malloc
        >>> isinstance(malloc.configure(), bool)
        True
    """
    global _done
    if _done:
        return False
    _done = True
    if os.environ.get("BURN_NDARRAY_MALLOC", "").lower() == "system" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # glibc only: musl has no such symbol  # noqa: B018
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mapped = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    return bool(mapped) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
