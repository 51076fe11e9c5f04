"""Recycled buffers for very large results that are made again and again (the new param of each
optimizer step): a fresh array of hundreds of MB costs a page fault per page on first write, a
third of a 25M-param Adam step here, where a buffer whose last user is gone costs nothing.

`empty` returns a view of a cached buffer; the buffer is free again once no view of it (nor any
view of those views, whose ``base`` is the buffer too, nor any export) is alive, which its
reference count shows. At most `CAPACITY` buffers are kept, the least recently handed out
dropped first; buffers below `MIN_BYTES` are never cached (malloc recycles those itself).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

Array = Any
MIN_BYTES = 1 << 25  # 32 MiB: 8M float32 elements
CAPACITY = 4  # an update's old and new param, for two sizes of large params
_cache: list[np.ndarray] = []
_lock = threading.Lock()
_rc = sys.getrefcount
# A cached buffer that nothing else refers to, seen in `empty`'s loop: the list's reference, the
# loop variable and getrefcount's argument.
_FREE = 3


def empty_like(like: Array) -> Array:
    """An uninitialized C-contiguous array of `like`'s shape and dtype, in a recycled buffer when
    it is large (its ``base`` is then the buffer: it is not `ownership.exclusive`)."""
    if like.nbytes < MIN_BYTES:  # the common case costs one comparison
        return np.empty_like(like)
    return empty(like.shape, like.dtype)


def empty(shape: tuple[int, ...], dtype: Any) -> Array:
    """`empty_like` from a shape and dtype."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    with _lock:
        for i in range(len(_cache)):  # not enumerate: its reused tuple would hold a reference
            buf = _cache[i]
            if buf.nbytes == nbytes and _rc(buf) == _FREE:
                _cache.append(_cache.pop(i))  # most recently used last
                return buf.view(dtype).reshape(shape)
        buf = np.empty(nbytes, np.uint8)
        _cache.append(buf)
        if len(_cache) > CAPACITY:
            _cache.pop(0)
        return buf.view(dtype).reshape(shape)


def clear() -> None:
    """Drop every cached buffer (the memory of those still in use goes with their last view)."""
    with _lock:
        _cache.clear()
