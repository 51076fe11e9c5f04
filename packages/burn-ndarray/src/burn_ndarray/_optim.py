"""Fused optimizer updates on NumPy arrays (the contract's `burn.backend.optim_ops`).

Large updates after the first step run as one compiled pass on every thread (`_kernels.adam`,
the same bits); the rest as follows.
Adam in ten ``out=`` passes (`_adam_passes`) with one fresh array per step, and large updates
block by block so that the passes run in cache: the result is computed in a buffer
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
from burn_ndarray import _parallel, _recycle, _threads
from burn_ndarray._dtypes import F32, F64
from burn_ndarray._reuse import OWNED, _exclusive

Array = Any
_rc = sys.getrefcount
# Updates of at least this many elements run block by block; below, the whole
# arrays stay in this machine's caches between passes and one call per pass is cheaper.
BLOCKED_MIN_SIZE = 1 << 22
BLOCK = 1 << 16
# Updates of at least this many elements (after the first step, which creates the moments) run as
# one compiled pass (`_kernels`); below, the call costs more than the ten NumPy passes. The pass
# is split between threads once each gets `COMPILED_PER_THREAD` elements (tools/bench_thresholds.py).
COMPILED_MIN_SIZE = 1 << 12
COMPILED_PER_THREAD = 1 << 16
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
        # Scratch until the last pass makes it the new param; a large one in a recycled buffer.
        out = _recycle.empty_like(grad)
        m: Array = moment_1 if m_in_place else np.empty_like(grad)
        v: Array = moment_2 if v_in_place else np.empty_like(grad)
        scalars = (beta_1, beta_2, step_size, epsilon)
        if (
            grad.size >= COMPILED_MIN_SIZE
            and moment_1 is not None
            and moment_2 is not None
            and _all_c_contiguous(param, grad, moment_1, moment_2)
        ):
            kernels = _parallel.kernels()
            if kernels is not None:  # one compiled pass, on every thread (`_kernels.adam`)
                in_place = m_in_place and v_in_place
                if not in_place:  # the kernel for fresh moments must not see an aliased one
                    m, v = np.empty_like(grad), np.empty_like(grad)
                flat = (a.reshape(-1) for a in (param, grad, moment_1, moment_2, out, m, v))
                kernels.adam(*flat, scalars, _threads.parts(grad.size, COMPILED_PER_THREAD), in_place)
                return out, m, v
        if grad.size < BLOCKED_MIN_SIZE or not _all_c_contiguous(param, grad, moment_1, moment_2):
            _adam_passes(param, grad, moment_1, moment_2, out, m, v, scalars)
            return out, m, v
        # Block by block, each block's operands stay in cache between the passes, so a large
        # update reads and writes memory about once instead of ten times (25M float32 params at
        # one thread: 118 -> 89 ms). The flat views alias the arrays: all are C-contiguous.
        p, g, o, mo, vo = (a.reshape(-1) for a in (param, grad, out, m, v))
        m_src = None if moment_1 is None else moment_1.reshape(-1)
        v_src = None if moment_2 is None else moment_2.reshape(-1)
        for start in range(0, g.size, BLOCK):
            b = slice(start, start + BLOCK)
            _adam_passes(
                p[b], g[b], None if m_src is None else m_src[b], None if v_src is None else v_src[b],
                o[b], mo[b], vo[b], scalars,
            )  # fmt: skip
        return out, m, v


def _adam_passes(
    param: Array,
    grad: Array,
    moment_1: Array | None,
    moment_2: Array | None,
    out: Array,
    m: Array,
    v: Array,
    scalars: tuple[float, float, float, float],
) -> None:
    """The default op's ops, in its order, into `out` (the new param), `m` and `v` (which may be
    `moment_1` and `moment_2` themselves). A moment of None is zero: it is the first step."""
    beta_1, beta_2, step_size, epsilon = scalars
    np.multiply(grad, 1.0 - beta_1, out=out)
    if moment_1 is None:
        np.copyto(m, out)
    else:
        np.multiply(moment_1, beta_1, out=m)
        m += out
    np.multiply(grad, grad, out=out)
    out *= 1.0 - beta_2
    if moment_2 is None:
        np.copyto(v, out)
    else:
        np.multiply(moment_2, beta_2, out=v)
        v += out
    np.sqrt(v, out=out)
    out += epsilon
    np.divide(m, out, out=out)
    out *= step_size
    np.subtract(param, out, out=out)


def _all_c_contiguous(*arrays: Array | None) -> bool:
    return all(a is None or a.flags.c_contiguous for a in arrays)


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
