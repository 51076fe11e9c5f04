"""Python scalars as operands of tensor ops: which numbers a kind accepts, converted once."""

from __future__ import annotations

import numbers
from typing import Any

from burn.errors import KindError
from burn.foundations.kind import Float, Int
from burn.tensor._base import TensorBase
from burn.tensor._errors import describe


def scalar_operand(op: str, t: TensorBase, value: Any) -> Any:
    """`value` as the element type of `t`'s kind: a `float` for Float, an `int` for Int.

    Raises:
        KindError: `t` is Bool, or an Int tensor meets a non-integral number.
        TypeError: `value` is not a number (a host array, a string...).
    """
    k = t._k
    cls = value.__class__
    if k is Float:
        if cls is float:
            return value
        if cls is int or isinstance(value, numbers.Real):  # `int` first: ABC checks are slow
            return float(value)
    elif k is Int:
        if cls is int:
            return value
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            raise KindError(
                f"{op}: an Int tensor and the float scalar {value!r}; convert the tensor with "
                f".float() or pass an int (got a {describe(t)})"
            )
    else:
        raise KindError(
            f"{op}: not defined for Bool tensors (got a {describe(t)}); convert with .int() or .float()"
        )
    if isinstance(value, TensorBase):  # a tensor reaching a scalar path: a subclass or a bug
        raise TypeError(f"{op}: unexpected tensor operand {value!r}")
    raise TypeError(
        f"{op}: unsupported operand of type {type(value).__name__}; use a burn.Tensor or a Python "
        "number (wrap host arrays with Tensor.from_data(array, device=t.device))"
    )
