"""The optim family (`burn.backend.ops.optim`) on NumPy arrays, the fused optimizer updates: Adam,
SGD with momentum, RMSProp.

Large updates after the first step run as one compiled pass on every thread
(`burn_ndarray.kernels.optim`: `adam`, `sgd_momentum`, `rmsprop`; the same bits; the last two
update the state in place, so a state the caller keeps is copied first; each writes the new param
over a gradient handed over to it, `burn.optim.transforms.take_grad`, when
`runtime.ownership.exclusive` proves that nothing else sees it: in training, the backward pass's
fresh gradient). The rest run as ``out=`` passes, each the default op's op in its order, into one
fresh array per step (and one for the decayed gradient with weight decay) and the handed-over
state. Adam's passes as follows; SGD's and RMSProp's the same way, without the blocks.
Adam in ten ``out=`` passes (`_adam_passes`) with one fresh array per step, and large updates
block by block so that the passes run in cache: the result is computed in a buffer
that starts as scratch and ends as the new param, and the new moments are written into the
handed-over moments when `runtime.ownership.exclusive` proves nothing else sees them (burn's
optimizers hand them over once their state is theirs alone; see
`burn.optim.transforms.adam_apply`). Each pass is the default op's, in the same order, so the
results are the same bits: fresh arrays for every temporary cost more than the arithmetic
(first-touch page faults above ~128 KiB).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from burn.backend.ops.optim import OptimOps as DefaultOptimOps
from burn_ndarray import kernels
from burn_ndarray.runtime import recycle, split
from burn_ndarray.runtime.dtypes import F32, F64
from burn_ndarray.runtime.ownership import OWNED, exclusive

Array = Any
_rc = sys.getrefcount
# Updates of at least this many elements run block by block; below, the whole
# arrays stay in this machine's caches between passes and one call per pass is cheaper.
BLOCKED_MIN_SIZE = 1 << 22
BLOCK = 1 << 16
# Updates of at least this many elements (after the first step, which creates the moments) run as
# one compiled pass (`kernels.optim`): below, the call costs as much as the ten NumPy passes; split
# between threads from `COMPILED_PER_THREAD` elements each (docs/benchmarks-log.md).
COMPILED_MIN_SIZE = 1 << 9
COMPILED_PER_THREAD = 1 << 19  # from 1M elements
NATIVE_COMPILED_PER_THREAD = 1 << 17  # on numba's TBB pool (`runtime.tbb`): from 256K
# SGD's few cheap passes beat the kernel's call up to about 8K elements, RMSProp's sixteen at no size; tiny
# params keep the passes so that small models never load numba (docs/benchmarks-log.md, burn-ndarray
# measurements).
SGD_COMPILED_MIN_SIZE = 1 << 13
RMSPROP_COMPILED_MIN_SIZE = 1 << 8
_ndarray = np.ndarray


class OptimOps:
    """The optim ops of `burn_ndarray.NdArray`."""

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
        # The counts are checked here, where the operands are this call's arguments (see runtime.ownership).
        # A gradient handed over too (`burn.optim.transforms.adam_apply`) may receive the new param.
        grad_owned = _rc(grad) == OWNED and exclusive(grad, None)
        m_in_place = moment_1 is not None and _rc(moment_1) == OWNED and exclusive(moment_1, grad)
        v_in_place = moment_2 is not None and _rc(moment_2) == OWNED and exclusive(moment_2, grad)
        grad, grad_owned = _c_order_owned(grad, grad_owned)
        scalars = (beta_1, beta_2, step_size, epsilon)
        m: Array
        v: Array
        if (
            moment_1 is not None
            and moment_2 is not None
            and grad.size >= COMPILED_MIN_SIZE
            and param.flags.c_contiguous
            and grad.flags.c_contiguous
            and moment_1.flags.c_contiguous
            and moment_2.flags.c_contiguous
        ):
            compiled = kernels.load("optim")
            if compiled is not None:  # one compiled pass, on every thread (`kernels.optim.adam`)
                in_place = m_in_place and v_in_place
                if in_place:
                    m, v = moment_1, moment_2
                else:  # the kernel for fresh moments must not see an aliased one
                    m, v = np.empty_like(grad), np.empty_like(grad)
                out, g, flat_out = _new_param(grad, in_place and grad_owned)
                compiled.adam(
                    _flat(param), g, _flat(moment_1), _flat(moment_2), flat_out,
                    _flat(m), _flat(v), scalars, _compiled_parts(grad.size), in_place,
                )  # fmt: skip
                return out, m, v
        m = moment_1 if m_in_place else np.empty_like(grad)
        v = moment_2 if v_in_place else np.empty_like(grad)
        # Scratch until the last pass makes it the new param; a large one in a recycled buffer.
        out = recycle.empty_like(grad)
        if grad.size < BLOCKED_MIN_SIZE or not _all_c_contiguous(param, grad, moment_1, moment_2):
            _adam_passes(param, grad, moment_1, moment_2, out, m, v, scalars)
            return out, m, v
        # Block by block, each block's operands stay in cache between the passes, so a large update reads
        # and writes memory about once instead of ten times (docs/benchmarks-log.md).
        # The flat views alias the arrays: all are C-contiguous.
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

    def float_sgd_momentum_step(
        self,
        param: Array,
        grad: Array,
        velocity: Array | None,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[Array, Array]:
        scalars = (momentum, dampening, nesterov, weight_decay, lr)
        if not _fusable(param, grad, velocity):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultOptimOps.float_sgd_momentum_step(backend, param, grad, velocity, *scalars)
        # The counts are checked here, where the operands are this call's arguments (see runtime.ownership).
        grad_owned = _rc(grad) == OWNED and exclusive(grad, None)
        in_place = velocity is not None and _rc(velocity) == OWNED and exclusive(velocity, grad)
        grad, grad_owned = _c_order_owned(grad, grad_owned)
        if (
            velocity is not None
            and grad.size >= SGD_COMPILED_MIN_SIZE
            and _all_c_contiguous(param, grad, velocity)
            and (compiled := kernels.load("optim")) is not None
        ):
            v = velocity if in_place else velocity.copy()  # the kernel updates it in place
            out, g, flat_out = _new_param(grad, grad_owned)
            compiled.sgd_momentum(_flat(param), g, _flat(v), flat_out, scalars, _compiled_parts(grad.size))
            return out, v
        out = recycle.empty_like(grad)  # scratch until the last pass makes it the new param
        v = velocity if in_place else None
        return out, _sgd_passes(param, grad, velocity, v, out, scalars)

    def float_rmsprop_step(
        self,
        param: Array,
        grad: Array,
        square_avg: Array | None,
        grad_avg: Array | None,
        momentum_buffer: Array | None,
        alpha: float,
        epsilon: float,
        centered: bool,
        momentum: float,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[Array, Array, Array | None, Array | None]:
        if not _fusable(param, grad, square_avg, grad_avg, momentum_buffer):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultOptimOps.float_rmsprop_step(
                backend, param, grad, square_avg, grad_avg, momentum_buffer,
                alpha, epsilon, centered, momentum, weight_decay, lr,
            )  # fmt: skip
        # States the options ignore are dropped first: they then count as absent.
        if not centered:
            grad_avg = None
        with_buffer = momentum > 0.0
        if not with_buffer:
            momentum_buffer = None
        # The counts are checked here, where the operands are this call's arguments (see runtime.ownership).
        grad_owned = _rc(grad) == OWNED and exclusive(grad, None)
        grad, grad_owned = _c_order_owned(grad, grad_owned)
        s_in_place = square_avg is not None and _rc(square_avg) == OWNED and exclusive(square_avg, grad)
        a_in_place = grad_avg is not None and _rc(grad_avg) == OWNED and exclusive(grad_avg, grad)
        b_in_place = (
            momentum_buffer is not None
            and _rc(momentum_buffer) == OWNED
            and exclusive(momentum_buffer, grad)
        )
        scalars = (alpha, epsilon, momentum, weight_decay, lr)
        if (
            square_avg is not None
            and (grad_avg is not None or not centered)
            and (momentum_buffer is not None or not with_buffer)
            and grad.size >= RMSPROP_COMPILED_MIN_SIZE
            and _all_c_contiguous(param, grad, square_avg, grad_avg, momentum_buffer)
            and (compiled := kernels.load("optim")) is not None
        ):
            # The kernel updates the states in place: those the caller keeps are copied first.
            s = square_avg if s_in_place else square_avg.copy()
            a = grad_avg if a_in_place or grad_avg is None else grad_avg.copy()
            b = momentum_buffer if b_in_place or momentum_buffer is None else momentum_buffer.copy()
            out, g, flat_out = _new_param(grad, grad_owned)
            compiled.rmsprop(
                _flat(param), g, _flat(s), None if a is None else _flat(a), None if b is None else _flat(b),
                flat_out, scalars, _compiled_parts(grad.size),
            )  # fmt: skip
            return out, s, a, b
        out = recycle.empty_like(grad)  # scratch until the last pass makes it the new param
        s = square_avg if s_in_place else np.empty_like(grad)
        a = None if not centered else grad_avg if a_in_place else np.empty_like(grad)
        b = None if not with_buffer else momentum_buffer if b_in_place else np.empty_like(grad)
        _rmsprop_passes(param, grad, (square_avg, grad_avg, momentum_buffer), out, s, a, b, scalars)
        return out, s, a, b


def _sgd_passes(
    param: Array,
    grad: Array,
    velocity: Array | None,
    v: Array | None,
    out: Array,
    scalars: tuple[float, float, bool, float | None, float],
) -> Array:
    """The default op's ops, in its order, into `out` (the new param) and `v` (`velocity` itself
    when handed over, else None: a fresh array); returns the new velocity. A `velocity` of None is
    the first step: the velocity is then the decayed gradient (`grad` itself without decay)."""
    momentum, dampening, nesterov, weight_decay, lr = scalars
    g = grad
    if weight_decay is not None:
        g = np.multiply(param, weight_decay)  # a fresh array: the first step keeps it as velocity
        np.add(grad, g, out=g)
    if velocity is None:
        v = g
    else:
        if v is None:
            v = np.empty_like(grad)
        np.multiply(g, 1.0 - dampening, out=out)
        np.multiply(velocity, momentum, out=v)
        np.add(v, out, out=v)
    if nesterov:
        np.multiply(v, momentum, out=out)
        np.add(g, out, out=out)
        np.multiply(out, lr, out=out)
    else:
        np.multiply(v, lr, out=out)
    np.subtract(param, out, out=out)
    return v


def _rmsprop_passes(
    param: Array,
    grad: Array,
    states: tuple[Array | None, Array | None, Array | None],
    out: Array,
    s: Array,
    a: Array | None,
    b: Array | None,
    scalars: tuple[float, float, float, float | None, float],
) -> None:
    """The default op's ops, in its order, into `out` (the new param) and the new states `s`,
    `a` (None: not centered), `b` (None: no momentum), which may be the old ones in `states`
    (square average, gradient average, momentum buffer; None: absent, the first step)."""
    square_avg, grad_avg, buffer = states
    alpha, epsilon, momentum, weight_decay, lr = scalars
    c = 1.0 - alpha
    g = grad
    if weight_decay is not None:
        g = recycle.empty_like(grad)
        np.multiply(param, weight_decay, out=g)
        np.add(grad, g, out=g)
    if square_avg is None:
        np.multiply(g, g, out=s)
        np.multiply(s, c, out=s)
    else:
        np.multiply(g, g, out=out)
        np.multiply(out, c, out=out)
        np.multiply(square_avg, alpha, out=s)
        np.add(s, out, out=s)
    avg = s
    if a is not None:
        if grad_avg is None:
            np.multiply(g, c, out=a)
        else:
            np.multiply(g, c, out=out)
            np.multiply(grad_avg, alpha, out=a)
            np.add(a, out, out=a)
        np.multiply(a, a, out=out)
        avg = np.subtract(s, out, out=out)
    np.sqrt(avg, out=out)
    np.add(out, epsilon, out=out)
    np.divide(g, out, out=out)  # the update
    if b is not None:
        if buffer is None:
            np.copyto(b, out)
        else:
            np.multiply(buffer, momentum, out=b)
            np.add(b, out, out=b)
        np.multiply(b, lr, out=out)
    else:
        np.multiply(out, lr, out=out)
    np.subtract(param, out, out=out)


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


def _compiled_parts(size: int) -> int:
    if size < 2 * min(COMPILED_PER_THREAD, NATIVE_COMPILED_PER_THREAD):
        return 1  # too small to split on either pool: no thread-count lookups (a small param's update)
    return split.compiled_parts(size, COMPILED_PER_THREAD, NATIVE_COMPILED_PER_THREAD)


def _flat(array: Array) -> Array:
    """A C-contiguous array as 1-D (itself when it is: a reshape costs 0.2 us a call)."""
    return array if array.ndim == 1 else array.reshape(-1)


def _c_order(grad: Array) -> Array:
    """`grad` in C order. A weight gradient may arrive as the transpose of a C array (the matmul
    backward's ``x^T @ g`` taken the other way round, `ops.float.FloatOps.float_matmul`): one copy here
    keeps the fused kernels and the new param, whose buffer takes the gradient's layout, in C order."""
    return grad if grad.flags.c_contiguous else np.ascontiguousarray(grad)


def _c_order_owned(grad: Array, owned: bool) -> tuple[Array, bool]:
    """`_c_order`'s gradient, and whether it is this call's to write the new param over: a
    handed-over one (`owned`), or the C-order copy made here."""
    c_grad = _c_order(grad)
    return c_grad, owned or c_grad is not grad


def _new_param(grad: Array, over_grad: bool) -> tuple[Array, Array, Array]:
    """A compiled pass's new param, the flat gradient and the flat new param: with `over_grad`
    the gradient itself (the pass writes over it, each element read first: one array fewer
    through memory, ~15% of a 25M-param Adam pass at 2 threads, and no param-sized buffer), its
    flat view then passed twice as the same object, which the kernels test; else a fresh buffer
    (recycled when large)."""
    g = _flat(grad)
    if over_grad:
        return grad, g, g
    out = recycle.empty_like(grad)
    return out, g, _flat(out)


def _all_c_contiguous(*arrays: Array | None) -> bool:
    return all(a is None or a.flags.c_contiguous for a in arrays)


def _fusable(param: Array, grad: Array, *states: Array | None) -> bool:
    """Whether every operand (a state may be None) is an array of one float32/float64 dtype and
    shape (at least 1-D).

    Anything else (float16, a NumPy scalar, mixed dtypes, shapes that would broadcast) takes the
    default op, which handles them as the plain ops do.
    """
    if grad.__class__ is not _ndarray or param.__class__ is not _ndarray or not grad.ndim:
        return False
    dtype, shape = grad.dtype, grad.shape
    if (dtype is not F32 and dtype is not F64) or param.dtype is not dtype or param.shape != shape:
        return False
    for m in states:
        if m is not None and (m.__class__ is not _ndarray or m.dtype is not dtype or m.shape != shape):
            return False
    return True
