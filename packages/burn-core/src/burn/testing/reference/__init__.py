"""Float64 NumPy references of the module ops of the contract, one module per op family
(`burn.backend.ops`): `conv`, `pool`, `sampling` and `activation`; `vjp_linear` gives the backward
reference of any op linear in the differentiated input.

Conventions are PyTorch's; written for clarity, not speed, and used only at the conformance
suite's small sizes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def vjp_linear(f: Callable[[np.ndarray], np.ndarray], shape: tuple[int, ...], grad: np.ndarray) -> np.ndarray:
    """``J^T grad`` for a function `f` linear in its input of `shape` (one basis vector at a time)."""
    out = np.zeros(int(np.prod(shape)))
    basis = np.zeros(out.size)
    for k in range(out.size):
        basis[k] = 1.0
        out[k] = np.sum(f(basis.reshape(shape)) * grad)
        basis[k] = 0.0
    return out.reshape(shape)
