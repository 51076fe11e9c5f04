"""The one-line notice a backend logs when it compiles kernels that its disk cache does not hold yet.

A first run can spend seconds (numba) to minutes (a cold OpenCL driver) compiling before the first
result, with nothing on screen; the notice says what is happening and where the compiled kernels
are kept, so the wait is explained and the cache can be found, moved or cleared. Each backend logs
it at most once per process, and only on a real cache miss where the backend can tell cheaply.

It goes through `logging`, logger ``burn.compile``, at WARNING level: Python prints it to stderr
without any logging setup, and it follows an application's own configuration. To silence it::

    import logging
    logging.getLogger("burn.compile").setLevel(logging.ERROR)
"""

from __future__ import annotations

import logging
import os
import threading

COMPILE_LOGGER = "burn.compile"
"""The logger the notices go through (`logging.getLogger(COMPILE_LOGGER)`)."""

_logger = logging.getLogger(COMPILE_LOGGER)
_lock = threading.Lock()
_said: set[str] = set()


def compile_notice(package: str, what: str, cache: str | os.PathLike[str] | None, setting: str = "") -> bool:
    """Log, once per process for `package`, that it is compiling `what` into `cache`.

    Args:
        package: the backend package, e.g. ``"burn-ndarray"``; the once-per-process key.
        what: what is compiled, e.g. ``"numba kernels"``.
        cache: the folder the compiled kernels are kept in (None: not cached on disk).
        setting: how to move the cache, e.g. ``"NUMBA_CACHE_DIR"`` (an environment variable).

    Returns:
        whether the notice was logged now (False: `package` already said it in this process).

    Example:
        >>> compile_notice("burn-doc", "doc kernels", "/tmp/doc-cache", "DOC_CACHE_DIR")  # logs
        True
        >>> compile_notice("burn-doc", "doc kernels", "/tmp/doc-cache")  # said already
        False
    """
    with _lock:
        if package in _said:
            return False
        _said.add(package)
    if cache is None:
        where = "they are not cached on disk: every process compiles them"
    else:
        moved = f"; {setting} moves it" if setting else ""
        where = f"cached in {os.fspath(cache)}{moved}; later runs load them from there"
    _logger.warning(
        "%s: compiling %s on first use (%s) [silence: logging.getLogger(%r).setLevel(logging.ERROR)]",
        package,
        what,
        where,
        COMPILE_LOGGER,
    )
    return True
