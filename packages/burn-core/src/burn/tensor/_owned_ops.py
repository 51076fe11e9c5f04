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
