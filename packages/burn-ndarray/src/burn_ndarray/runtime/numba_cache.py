"""numba's on-disk cache (``cache=True``) made safe for several processes compiling at once.

numba saves a compiled kernel by reading the function's index file, picking the first free data
file name for the new signature, and writing both files, with no lock between processes. Two
processes that compile different signatures of one kernel at the same time (a data-parallel job's
first run, parallel test workers, a sweep of runs) can both pick the same name: the index then
maps one signature to the other's machine code. Every later run loads it, and the kernel fails
with "can't unbox array from PyObject" or crashes (numba/numba#10128 is the same race between a
gufunc's files; straxen saw this error from it). Seen here under pytest-xdist.

`install` (run when the kernels are first imported) changes two steps of numba's cache for this
process, for every numba function in it:

- a save holds an exclusive lock on a file in the cache directory, re-reads the index under it and
  writes the data before the index entry that names it, so no two processes claim one name;
- a load whose machine code was compiled for another signature (an index damaged before this fix,
  or by a process without it) counts as a miss: numba compiles again and overwrites the entry.

Without ``fcntl`` (Windows) the saves stay numba's own; the load check still applies.

A load that misses for one of burn-ndarray's kernels means numba is about to compile it: the first
miss of the process logs `burn.backend.compile_notice` (once; nothing when every kernel comes from
the cache), naming the cache folder (numba's ``__pycache__`` beside the kernels, or
``NUMBA_CACHE_DIR``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator
from typing import Any

from burn.backend.compile_notice import compile_notice

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "burn-ndarray-numba-cache.lock"
_installed = False


@contextlib.contextmanager
def _locked(directory: str) -> Iterator[None]:
    """An exclusive inter-process lock on `LOCK_NAME` in `directory` (released on close); none
    where the file cannot be made or the file system refuses locks (some network mounts): the save
    then goes on unlocked, as numba's own would."""
    try:
        lock = open(os.path.join(directory, LOCK_NAME), "a")  # noqa: SIM115 - closed below
    except OSError:
        yield
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError:
            pass
        yield


def _save(cache_file: Any, key: Any, data: Any) -> None:
    """`IndexDataCacheFile.save` under the lock, data before index."""
    with _locked(cache_file._cache_path):
        overloads = cache_file._load_index()  # under the lock: other processes' entries kept
        name = overloads.get(key)
        if name is None:
            taken = set(overloads.values())
            name = next(n for n in map(cache_file._data_name, itertools.count(1)) if n not in taken)
        cache_file._save_data(name, data)
        overloads[key] = name
        cache_file._save_index(overloads)


def _compiled_for(cres: Any, sig: Any) -> bool:
    """Whether a loaded compile result is for `sig` (results without a signature pass)."""
    from numba.core import sigutils  # numba: loaded already, by the kernel being loaded

    loaded = getattr(getattr(cres, "signature", None), "args", None)
    if loaded is None:
        return True
    args, _ = sigutils.normalize_signature(sig)
    return tuple(loaded) == tuple(args)


NUMBA_SETTING = "NUMBA_CACHE_DIR"


def _ours(cache: Any) -> bool:
    """Whether a numba cache belongs to one of burn-ndarray's functions (the patch sees every
    function of the process with ``cache=True``: a user's own must not speak for burn-ndarray)."""
    module = getattr(getattr(cache, "_py_func", None), "__module__", None) or ""
    return module.split(".")[0] == "burn_ndarray" and getattr(cache, "_enabled", True)


def install() -> None:
    """Patch numba's cache classes once per process (idempotent); a numba without the expected
    internals is left as it is."""
    global _installed
    if _installed:
        return
    _installed = True
    from numba.core import caching  # numba: imported when the kernels load, not with this module

    cache_file_class: Any = getattr(caching, "IndexDataCacheFile", None)
    cache_class: Any = getattr(caching, "Cache", None)
    needed = ("_load_index", "_save_index", "_save_data", "_data_name", "save")
    if fcntl is not None and all(hasattr(cache_file_class, name) for name in needed):
        cache_file_class.save = _save
    load = getattr(cache_class, "_load_overload", None)
    if load is not None:

        def checked_load(self: Any, sig: Any, target_context: Any) -> Any:
            cres = load(self, sig, target_context)
            if cres is not None and not _compiled_for(cres, sig):
                cres = None
            if cres is None and _ours(self):
                where = getattr(self, "_cache_path", None)
                compile_notice("burn-ndarray", "numba kernels", where, NUMBA_SETTING)
            return cres

        cache_class._load_overload = checked_load
