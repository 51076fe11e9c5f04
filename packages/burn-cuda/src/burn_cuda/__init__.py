"""burn-cuda: the CuPy backend of burn for NVIDIA GPUs, selected with ``burn.backend("cuda")``.

`Cuda` is imported on first access, so that loading the plugin entry point never imports CuPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn_cuda.backend import Cuda

__all__ = ["Cuda"]


def __getattr__(name: str) -> Any:
    if name == "Cuda":
        from burn_cuda.backend import Cuda

        return Cuda
    raise AttributeError(f"module 'burn_cuda' has no attribute {name!r}")
