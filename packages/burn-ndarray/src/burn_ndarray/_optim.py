"""Fused optimizer updates on NumPy arrays (the contract's `burn.backend.optim_ops`).

Adam in ten ``out=`` passes with one fresh array per step: the result is computed in a buffer
that starts as scratch and ends as the new param, and the new moments are written into the
handed-over moments when `_reuse._exclusive` proves nothing else sees them (burn's optimizers
hand them over once their state is theirs alone; see `burn.optim.transforms.adam_apply`). Each
pass is the default op's, in the same order, so the results are the same bits: fresh arrays for
every temporary cost more than the arithmetic (first-touch page faults above ~128 KiB).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from burn.backend.optim_ops import OptimOps as DefaultOptimOps
from burn_ndarray._dtypes import F32, F64
from burn_ndarray._reuse import OWNED, _exclusive

Array = Any
_rc = sys.getrefcount
_ndarray = np.ndarray


class OptimOps:
    """`burn.backend.OptimOps` for NumPy arrays."""

    def float_adam_step(
        self,
        param: Array,
        grad: Array,
        moment_1: Array | None,
        moment_2: Array | None,
        beta_1: float,
        beta_2: float,
        step_size: float,
        epsilon: float,
    ) -> tuple[Array, Array, Array]:
        if not _fusable(param, grad, moment_1, moment_2):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultOptimOps.float_adam_step(
                backend,
                param,
                grad,
                moment_1,
                moment_2,
                beta_1,
                beta_2,
                step_size,
                epsilon,
            )
        # The counts are checked here, where the moments are this call's arguments (see _reuse).
        m_in_place = moment_1 is not None and _rc(moment_1) == OWNED and _exclusive(moment_1, grad)
        v_in_place = moment_2 is not None and _rc(moment_2) == OWNED and _exclusive(moment_2, grad)
        out = np.multiply(grad, 1.0 - beta_1)  # scratch until the last pass makes it the new param
        if moment_1 is None:
            m, out = out, np.empty_like(out)
        else:
            m = np.multiply(moment_1, beta_1, out=moment_1 if m_in_place else None)
            m += out
        np.multiply(grad, grad, out=out)
        out *= 1.0 - beta_2
        if moment_2 is None:
            v, out = out, np.empty_like(out)
        else:
            v = np.multiply(moment_2, beta_2, out=moment_2 if v_in_place else None)
            v += out
        np.sqrt(v, out=out)
        out += epsilon
        np.divide(m, out, out=out)
        out *= step_size
        np.subtract(param, out, out=out)
        return out, m, v


def _fusable(param: Array, grad: Array, moment_1: Array | None, moment_2: Array | None) -> bool:
    """Whether every operand is an array of one float32/float64 dtype and shape (at least 1-D).

    Anything else (float16, a NumPy scalar, mixed dtypes, shapes that would broadcast) takes the
    default op, which handles them as the plain ops do.
    """
    if grad.__class__ is not _ndarray or param.__class__ is not _ndarray or not grad.ndim:
        return False
    dtype, shape = grad.dtype, grad.shape
    if (dtype is not F32 and dtype is not F64) or param.dtype is not dtype or param.shape != shape:
        return False
    for m in (moment_1, moment_2):
        if m is not None and (m.__class__ is not _ndarray or m.dtype is not dtype or m.shape != shape):
            return False
    return True
