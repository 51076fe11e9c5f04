"""burn-fusion: the ``fusion`` backend decorator, running chains of element-wise ops as one kernel.

    >>> import burn  # doctest: +SKIP
    >>> B = burn.backend("fusion(opencl)")  # doctest: +SKIP
    >>> x = burn.Tensor.ones((4, 4), backend=B)  # doctest: +SKIP
    >>> y = (x * 2.0 + 1.0).exp()  # three ops recorded, none run  # doctest: +SKIP
    >>> y.to_data().shape, B.stats.kernels  # one fused kernel  # doctest: +SKIP
    ((4, 4), 1)

The names below load on first access, so that burn's plugin discovery, which imports
`burn_fusion.plugin` (and with it this package), does not import the backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn_fusion._version import __version__

if TYPE_CHECKING:
    from burn_fusion.backend import Fusion
    from burn_fusion.errors import FusionError
    from burn_fusion.stream import FusionStats
    from burn_fusion.tensor import FusionTensor

__all__ = ["Fusion", "FusionError", "FusionStats", "FusionTensor", "__version__"]

_LAZY = {
    "Fusion": "burn_fusion.backend",
    "FusionError": "burn_fusion.errors",
    "FusionStats": "burn_fusion.stream",
    "FusionTensor": "burn_fusion.tensor",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'burn_fusion' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
