"""Calls of the backend's ``*_owned`` ops once an operand is proven a temporary (level 1 of the
ownership trick, described in `burn.tensor._ownership`).

The proof (``sys.getrefcount(t) == TEMP``) is made inline in the calling method, before anything
else refers to the tensor; these helpers then move the primitive out of each proven tensor
(``t._p = None``) so that the backend sees the array held by this one local only, and call the op.
If the backend raises, the primitives are put back so that the error message can describe them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from burn.tensor._base import wrap
from burn.tensor._errors import binary_error
from burn.tensor.kind import Float

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
    moves: tuple[bool, bool],
    scalars: tuple[float, float, float, float],
) -> tuple[Tensor, Tensor, Tensor]:
    """The backend's fused ``float_adam_step`` on inner tensors, with the primitive of each
    moment whose `moves` flag the caller proved (its tensor held by nothing else) handed over.

    Returns ``(new_param, moment_1, moment_2)``; `scalars` is ``(beta_1, beta_2, step_size,
    epsilon)``. If the backend raises, the moments get their primitives back.
    """
    p1 = None if moment_1 is None else moment_1._p
    p2 = None if moment_2 is None else moment_2._p
    if moves[0] and moment_1 is not None:
        moment_1._p = None
    if moves[1] and moment_2 is not None:
        moment_2._p = None
    b = param._b
    beta_1, beta_2, step_size, epsilon = scalars
    try:
        # No *args here: CPython would build a tuple holding the moments for the whole call.
        new, m, v = b.float_adam_step(param._p, grad._p, p1, p2, beta_1, beta_2, step_size, epsilon)
    except BaseException:
        if moment_1 is not None:
            moment_1._p = p1
        if moment_2 is not None:
            moment_2._p = p2
        raise
    return wrap(new, b, Float), wrap(m, b, Float), wrap(v, b, Float)
