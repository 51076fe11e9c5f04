"""NumPy's BLAS on one thread for a while: for work that burn-ndarray splits between its own
threads, each making its own small GEMMs (the Winograd convolution's blocks).

OpenBLAS splits every GEMM between its threads; for many small GEMMs made from several threads
at once that oversubscribes the cores and syncs its pool per call. threadpoolctl (the library
scikit-learn uses for the same purpose) sets the BLAS library's thread count. The setting is
process-wide and threadpoolctl lets one Python thread own OpenBLAS's at a time, so one limit is
active at a time here: a second thread waits for the first to leave.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.RLock()
_controller: Any = None


@contextmanager
def single_threaded() -> Iterator[None]:
    """BLAS calls made inside (from any thread) run on their calling thread alone; the BLAS
    libraries' thread counts are restored on the way out.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray import _blas
        >>> with _blas.single_threaded():
        ...     (np.ones((2, 2)) @ np.ones((2, 2))).tolist()
        [[2.0, 2.0], [2.0, 2.0]]
    """
    global _controller
    with _lock:
        if _controller is None:  # finds the loaded BLAS libraries once (milliseconds)
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
        with _controller.limit(limits=1, user_api="blas"):
            yield
