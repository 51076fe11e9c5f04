"""burn-ndarray: the NumPy backend of burn, selected with ``burn.backend("ndarray")``.

`NdArray` and the thread settings are imported on first access, so that loading the plugin entry
point stays cheap.
`get_num_threads` / `set_num_threads` set how many threads its threaded kernels, numba's pool and
NumPy's BLAS use (default: ``BURN_NUM_THREADS``, else ``OMP_NUM_THREADS``, else every core);
``burn.set_num_threads`` calls it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn_ndarray.backend import NdArray
    from burn_ndarray.runtime.threads import get_num_threads, set_num_threads

__all__ = ["NdArray", "get_num_threads", "set_num_threads"]


def __getattr__(name: str) -> Any:
    if name == "NdArray":
        from burn_ndarray.backend import NdArray

        return NdArray
    if name in ("get_num_threads", "set_num_threads"):  # lazy too: the thread pool module
        from burn_ndarray.runtime import threads

        return getattr(threads, name)
    raise AttributeError(f"module 'burn_ndarray' has no attribute {name!r}")
