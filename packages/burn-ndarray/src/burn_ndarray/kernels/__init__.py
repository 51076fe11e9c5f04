"""burn-ndarray's compiled kernels (numba), one module per op family that has them (`float`,
`activation`, `conv`, `pool`, `loss`, `norm`, `rnn`, `optim`), `winograd` (the Winograd convolution's
transforms), `grouped` (direct depthwise and grouped convolutions) and `gemm` (the blocked GEMM's
launcher, `burn_ndarray.runtime.gemm`), with what they share
(`jit`: numba's options and the chunks of a ``prange``); and `erf`, the NumPy error function
whose float32 fits the compiled GELU evaluates too.

This module imports nothing heavy: an op imports a kernels module (`load`) the first time a
tensor is large enough for it, so importing the backend and running small models never load
numba. Compiled once per machine and cached on disk (``cache=True``, made safe for several
processes by `burn_ndarray.runtime.numba_cache`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

# The element-wise ops of `float.binary_flat` and `float.binary_rows`, by number (tested outside
# their loops, so that each loop vectorizes): here, so that the ops name them without numba.
ADD, SUB, MUL, DIV = 0, 1, 2, 3

_loaded: dict[str, ModuleType | None] = {}


def load(name: str) -> ModuleType | None:
    """The kernels module `name` (``"float"``, ``"optim"``...), imported on first use; None when
    numba is not installed (the ops then take their NumPy paths).

    Example:
        >>> from burn_ndarray import kernels
        >>> kernels.load("float") is None or callable(kernels.load("float").row_sums)
        True
    """
    try:
        return _loaded[name]
    except KeyError:
        pass
    try:
        module: ModuleType | None = importlib.import_module(f"{__name__}.{name}")
    except ImportError:  # numba is not installed
        module = None
    _loaded[name] = module
    return module
