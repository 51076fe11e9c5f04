"""burn-ndarray: the NumPy backend of burn, selected with ``burn.backend("ndarray")``.

`NdArray` is imported on first access, so that loading the plugin entry point stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn_ndarray.backend import NdArray

__all__ = ["NdArray"]


def __getattr__(name: str) -> Any:
    if name == "NdArray":
        from burn_ndarray.backend import NdArray

        return NdArray
    raise AttributeError(f"module 'burn_ndarray' has no attribute {name!r}")
