"""Compiled kernels of the optim family: the fused optimizer updates (`burn_ndarray.ops.optim`).

The serial kernels release the GIL (``nogil=True``); split, they run on contiguous chunks fixed by
the thread count (so the bits are too): on numba's TBB pool when it runs (the ``*_parallel``
launchers: a chunk handed over in about a microsecond), else on the Python pool (20-100 us a
hand-off), which then needs larger chunks (`burn_ndarray.runtime.split.run_chunks`).

- **Adam**: one pass over param, grad and moments instead of ten NumPy passes, each element
  computed with the same float operations in the same order as the contract's default op (the
  scalars are typed to the array's dtype, as NumPy does with a Python float), so the bits are the
  default op's at any thread count. ``error_model="numpy"`` drops Python's division-by-zero check,
  which would stop LLVM from vectorizing. Separate kernels for moments written in place and
  moments written to fresh arrays: an output that aliases an input defeats the vectorizer's
  overlap check. For the same reason the new param goes over a handed-over gradient through an
  `out` of None (each element of `g` read first), which numba compiles as a kernel of its own.
- **SGD with momentum, RMSProp**: the same, one kernel each, state updated in place (a state the
  caller keeps is copied first). Options enter as arguments that are None or a scalar (or an
  array): numba compiles one kernel per combination of None-ness and prunes the branches on the
  None ones, so each option costs nothing per element (a bool flag instead keeps the branches in
  the loop, and some combinations then do not vectorize: 7x slower here).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel, part
from burn_ndarray.runtime.split import run_chunks

Array = Any


@njit(inline="always", error_model="numpy")
def _adam_element(
    pi: Any, gi: Any, mi: Any, vi: Any, b1: Any, c1: Any, b2: Any, c2: Any, step: Any, eps: Any
) -> Any:
    """One element's ``(new param, m, v)`` from its param, gradient and moments."""
    m = mi * b1 + gi * c1
    v = vi * b2 + (gi * gi) * c2
    return pi - (m / (np.sqrt(v) + eps)) * step, m, v


@jit
def adam_in_place(
    p: Array, g: Array, m: Array, v: Array, out: Any,
    b1: Any, c1: Any, b2: Any, c2: Any, step: Any, eps: Any,
) -> None:  # fmt: skip
    """Moments `m`, `v` updated in place; the new param into `out` (all flat, same dtype), or
    over `g` for an `out` of None (a handed-over gradient: each element read first)."""
    for i in range(g.size):
        new, m[i], v[i] = _adam_element(p[i], g[i], m[i], v[i], b1, c1, b2, c2, step, eps)
        if out is None:
            g[i] = new
        else:
            out[i] = new


@jit
def adam_fresh(
    p: Array, g: Array, m_in: Array, v_in: Array, out: Array, m: Array, v: Array,
    b1: Any, c1: Any, b2: Any, c2: Any, step: Any, eps: Any,
) -> None:  # fmt: skip
    """Moments read from `m_in`, `v_in` and written to fresh `m`, `v`; the new param into `out`."""
    for i in range(g.size):
        out[i], m[i], v[i] = _adam_element(p[i], g[i], m_in[i], v_in[i], b1, c1, b2, c2, step, eps)


@jit
def sgd_momentum_in_place(
    p: Array, g: Array, v: Array, out: Any,
    decay: Any, look_ahead: Any, momentum: Any, damped: Any, lr: Any,
) -> None:  # fmt: skip
    """Velocity `v` updated in place, the new param into `out` (None: over `g`); `decay` (weight
    decay) and `look_ahead` (Nesterov's momentum) are None when off."""
    for i in range(g.size):
        gi = g[i]
        if decay is not None:
            gi = gi + p[i] * decay
        vi = v[i] * momentum + gi * damped
        v[i] = vi
        if look_ahead is not None:
            vi = gi + vi * look_ahead
        if out is None:
            g[i] = p[i] - vi * lr
        else:
            out[i] = p[i] - vi * lr


@jit
def rmsprop_in_place(
    p: Array, g: Array, s: Array, a: Any, b: Any, out: Any,
    decay: Any, alpha: Any, c: Any, eps: Any, momentum: Any, lr: Any,
) -> None:  # fmt: skip
    """Square average `s`, gradient average `a` (None: not centered) and momentum buffer `b`
    (None: no momentum) updated in place, the new param into `out` (None: over `g`); `decay` None
    when off."""
    for i in range(g.size):
        gi = g[i]
        if decay is not None:
            gi = gi + p[i] * decay
        si = s[i] * alpha + (gi * gi) * c
        s[i] = si
        avg = si
        if a is not None:
            ai = a[i] * alpha + gi * c
            a[i] = ai
            avg = si - ai * ai
        ui = gi / (np.sqrt(avg) + eps)
        if b is not None:
            ui = b[i] * momentum + ui
            b[i] = ui
        if out is None:
            g[i] = p[i] - ui * lr
        else:
            out[i] = p[i] - ui * lr


@jit_parallel
def adam_in_place_parallel(
    parts: int, p: Array, g: Array, m: Array, v: Array, out: Any, *scalars: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        adam_in_place(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], part(out, lo, hi), *scalars)


@jit_parallel
def adam_fresh_parallel(
    parts: int, p: Array, g: Array, m_in: Array, v_in: Array, out: Array, m: Array, v: Array, *scalars: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        adam_fresh(
            p[lo:hi], g[lo:hi], m_in[lo:hi], v_in[lo:hi], out[lo:hi], m[lo:hi], v[lo:hi], *scalars
        )


@jit_parallel
def sgd_momentum_in_place_parallel(
    parts: int, p: Array, g: Array, v: Array, out: Any, decay: Any, look_ahead: Any, *scalars: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        sgd_momentum_in_place(
            p[lo:hi], g[lo:hi], v[lo:hi], part(out, lo, hi), decay, look_ahead, *scalars
        )


@jit_parallel
def rmsprop_in_place_parallel(
    parts: int, p: Array, g: Array, s: Array, a: Any, b: Any, out: Any, decay: Any, *scalars: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        rmsprop_in_place(
            p[lo:hi], g[lo:hi], s[lo:hi], part(a, lo, hi), part(b, lo, hi), part(out, lo, hi), decay, *scalars
        )


def _over_grad(out: Array, g: Array) -> Array | None:
    """The kernels' `out`: None when it is `g` itself (a handed-over gradient takes the new
    param), for which numba compiles the kernel that writes over `g`."""
    return None if out is g else out


# Adam's scalars but the step size, in the arrays' dtype, by (beta_1, beta_2, epsilon, scalar type):
# the params of one step share them.
_ADAM_CONSTANTS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def adam(
    p: Array,
    g: Array,
    m_in: Array,
    v_in: Array,
    out: Array,
    m: Array,
    v: Array,
    scalars: tuple[float, ...],
    parts: int,
    in_place: bool,
) -> None:
    """The fused Adam step on flat C-contiguous arrays of one float dtype, on `parts` threads;
    `in_place`: `m` and `v` are `m_in` and `v_in` (else all seven are distinct arrays); `out`
    may then be `g` itself (a handed-over gradient)."""
    beta_1, beta_2, step_size, epsilon = scalars
    t = g.dtype.type
    key = (beta_1, beta_2, epsilon, t)
    constants = _ADAM_CONSTANTS.get(key)
    if constants is None:  # typed once per step for every param (epsilon carries the step's bias correction)
        if len(_ADAM_CONSTANTS) >= 64:
            _ADAM_CONSTANTS.clear()
        constants = (t(beta_1), t(1.0 - beta_1), t(beta_2), t(1.0 - beta_2), t(epsilon))
        _ADAM_CONSTANTS[key] = constants
    b1, c1, b2, c2, eps = constants
    typed = (b1, c1, b2, c2, t(step_size), eps)
    if in_place:
        run_chunks(adam_in_place, adam_in_place_parallel, (p, g, m, v, _over_grad(out, g)), typed, parts)
    else:
        run_chunks(adam_fresh, adam_fresh_parallel, (p, g, m_in, v_in, out, m, v), typed, parts)


def sgd_momentum(p: Array, g: Array, v: Array, out: Array, scalars: tuple[Any, ...], parts: int) -> None:
    """The fused SGD-with-momentum step on flat C-contiguous arrays of one float dtype, `v`
    updated in place, on `parts` threads; `scalars` is ``(momentum, dampening, nesterov,
    weight_decay, lr)`` (`burn.backend.ops.optim`)."""
    momentum, dampening, nesterov, weight_decay, lr = scalars
    t = g.dtype.type
    decay = None if weight_decay is None else t(weight_decay)
    look_ahead = t(momentum) if nesterov else None
    typed = (decay, look_ahead, t(momentum), t(1.0 - dampening), t(lr))
    arrays = (p, g, v, _over_grad(out, g))
    run_chunks(sgd_momentum_in_place, sgd_momentum_in_place_parallel, arrays, typed, parts)


def rmsprop(
    p: Array, g: Array, s: Array, a: Array | None, b: Array | None, out: Array,
    scalars: tuple[Any, ...], parts: int,
) -> None:  # fmt: skip
    """The fused RMSProp step on flat C-contiguous arrays of one float dtype, `s`, `a`, `b`
    updated in place (`a` None: not centered; `b` None: no momentum), on `parts` threads;
    `scalars` is ``(alpha, epsilon, momentum, weight_decay, lr)``."""
    alpha, epsilon, momentum, weight_decay, lr = scalars
    t = g.dtype.type
    decay = None if weight_decay is None else t(weight_decay)
    typed = (decay, t(alpha), t(1.0 - alpha), t(epsilon), t(momentum), t(lr))
    arrays = (p, g, s, a, b, _over_grad(out, g))
    run_chunks(rmsprop_in_place, rmsprop_in_place_parallel, arrays, typed, parts)
