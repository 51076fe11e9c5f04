"""Calls of the backend's ``*_owned`` ops once an operand is proven a temporary (level 1 of the
ownership trick, described in `burn.foundations.ownership`).

The proof (``sys.getrefcount(t) == TEMP``) is made inline in the calling method, before anything
else refers to the tensor; these helpers then move the primitive out of each proven tensor
(``t._p = None``) so that the backend sees the array held by this one local only, and call the op.
If the backend raises, the primitives are put back so that the error message can describe them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.tensor._errors import binary_error

if TYPE_CHECKING:
    from burn.tensor._base import TensorBase
    from burn.tensor.tensor import Tensor


def binary(
    op: Callable[[Any, Any], Any], name: str, x: TensorBase, y: TensorBase, x_moves: bool, y_moves: bool
) -> Tensor:
    """``op(x, y)`` with the primitives of the proven temporaries among `x`, `y` handed over."""
    xp = x._p
    yp = y._p
    if x_moves:
        x._p = None
    if y_moves:
        y._p = None
    try:
        p = op(xp, yp)
    except Exception as exc:
        x._p = xp
        y._p = yp
        raise binary_error(name, x, y, exc)  # noqa: B904 - keeps the backend error as cause
    return wrap(p, x._b, Float)


def scalar(op: Callable[[Any, float], Any], x: TensorBase, s: float) -> Tensor:
    """``op(x, s)`` with the primitive of the proven temporary `x` handed over."""
    xp = x._p
    x._p = None
    try:
        p = op(xp, s)
    except BaseException:
        x._p = xp
        raise
    return wrap(p, x._b, Float)


def unary(op: Callable[[Any], Any], x: TensorBase) -> Tensor:
    """``op(x)`` with the primitive of the proven temporary `x` handed over."""
    xp = x._p
    x._p = None
    try:
        p = op(xp)
    except BaseException:
        x._p = xp
        raise
    return wrap(p, x._b, Float)


def adam_step(
    param: Tensor,
    grad: Tensor,
    moment_1: Tensor | None,
    moment_2: Tensor | None,
    moves: tuple[bool, bool, bool],
    scalars: tuple[float, float, float, float],
) -> tuple[Tensor, Tensor, Tensor]:
    """The backend's fused ``float_adam_step`` on inner tensors, with the primitive of each
    moment, and of the gradient, whose `moves` flag the caller proved (its tensor held by nothing
    else) handed over.

    Returns ``(new_param, moment_1, moment_2)``; `scalars` is ``(beta_1, beta_2, step_size,
    epsilon)``. If the backend raises, the tensors get their primitives back.
    """
    p1 = None if moment_1 is None else moment_1._p
    p2 = None if moment_2 is None else moment_2._p
    gp = grad._p
    if moves[0] and moment_1 is not None:
        moment_1._p = None
    if moves[1] and moment_2 is not None:
        moment_2._p = None
    if moves[2]:
        grad._p = None
    b = param._b
    beta_1, beta_2, step_size, epsilon = scalars
    try:
        # No *args here: CPython would build a tuple holding the operands for the whole call.
        new, m, v = b.float_adam_step(param._p, gp, p1, p2, beta_1, beta_2, step_size, epsilon)
    except BaseException:
        if moment_1 is not None:
            moment_1._p = p1
        if moment_2 is not None:
            moment_2._p = p2
        grad._p = gp
        raise
    return wrap(new, b, Float), wrap(m, b, Float), wrap(v, b, Float)


def sgd_momentum_step(
    param: Tensor,
    grad: Tensor,
    velocity: Tensor | None,
    moves: tuple[bool, bool],
    momentum: float,
    dampening: float,
    nesterov: bool,
    weight_decay: float | None,
    lr: float,
) -> tuple[Tensor, Tensor]:
    """The backend's fused ``float_sgd_momentum_step`` on inner tensors, with the primitives of
    the velocity and the gradient handed over where `moves` says so (the caller proved the
    tensor held by nothing else).

    Returns ``(new_param, velocity)``. If the backend raises, the tensors get their primitives back.
    """
    pv = None if velocity is None else velocity._p
    gp = grad._p  # a local while the tensor keeps it too: the backend then sees a second holder
    if moves[0] and velocity is not None:
        velocity._p = None
    if moves[1]:
        grad._p = None
    b = param._b
    try:
        new, v = b.float_sgd_momentum_step(param._p, gp, pv, momentum, dampening, nesterov, weight_decay, lr)
    except BaseException:
        if velocity is not None:
            velocity._p = pv
        grad._p = gp
        raise
    return wrap(new, b, Float), wrap(v, b, Float)


def rmsprop_step(
    param: Tensor,
    grad: Tensor,
    square_avg: Tensor | None,
    grad_avg: Tensor | None,
    momentum_buffer: Tensor | None,
    moves: tuple[bool, bool, bool, bool],
    scalars: tuple[float, float, bool, float, float | None, float],
) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
    """The backend's fused ``float_rmsprop_step`` on inner tensors, with the primitive of each
    state tensor, and of the gradient (the last flag), whose `moves` flag the caller proved
    handed over.

    `scalars` is ``(alpha, epsilon, centered, momentum, weight_decay, lr)``. Returns
    ``(new_param, square_avg, grad_avg, momentum_buffer)``, the last two None where the op gives
    None. If the backend raises, the state tensors get their primitives back.
    """
    # One local per primitive, never a container: a list or tuple would be a second holder.
    ps = None if square_avg is None else square_avg._p
    pa = None if grad_avg is None else grad_avg._p
    pb = None if momentum_buffer is None else momentum_buffer._p
    gp = grad._p
    if moves[3]:
        grad._p = None
    if moves[0] and square_avg is not None:
        square_avg._p = None
    if moves[1] and grad_avg is not None:
        grad_avg._p = None
    if moves[2] and momentum_buffer is not None:
        momentum_buffer._p = None
    b = param._b
    alpha, epsilon, centered, momentum, weight_decay, lr = scalars
    try:
        new, s, a, m = b.float_rmsprop_step(
            param._p, gp, ps, pa, pb, alpha, epsilon, centered, momentum, weight_decay, lr
        )
    except BaseException:
        grad._p = gp
        if square_avg is not None:
            square_avg._p = ps
        if grad_avg is not None:
            grad_avg._p = pa
        if momentum_buffer is not None:
            momentum_buffer._p = pb
        raise
    return (
        wrap(new, b, Float),
        wrap(s, b, Float),
        None if a is None else wrap(a, b, Float),
        None if m is None else wrap(m, b, Float),
    )
