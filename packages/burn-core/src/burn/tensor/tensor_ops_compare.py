"""Comparisons (giving Bool tensors), their operators, and Bool logic (``~ & | ^``)."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

from burn.foundations.kind import Bool, Float
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import binary_error, kind_error, operand_error
from burn.tensor._scalars import scalar_operand
from burn.tensor.tensor_ops_arith import ArithOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

Operand = Any

_ORDERED = "a Float or Int tensor (Bool tensors are not ordered)"


def _order_error(op: str, a: TensorBase, b: TensorBase) -> Exception:
    """Why an ordering comparison of two tensors was refused before reaching the backend."""
    return kind_error(op, a, _ORDERED) if a._k is Bool else operand_error(op, a, b)


class CompareOps(ArithOps):
    """Comparison and Bool-logic ops (mixin of `burn.Tensor`)."""

    __slots__ = ()

    # -- equality (every kind) ----------------------------------------------------------------
    def equal(self, other: Operand) -> Tensor:
        """Bool tensor of ``self == other`` (broadcasting); `other` may be a Python number.

        Example:
            >>> (Tensor.from_data([1, 2]) == 2).tolist()  # doctest: +SKIP
            [False, True]
        """
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k:
                raise operand_error("equal", self, other)
            try:
                if k is Float:
                    p = b.float_equal(self._p, other._p)
                elif k is Bool:
                    p = b.bool_equal(self._p, other._p)
                else:
                    p = b.int_equal(self._p, other._p)
            except Exception as exc:
                raise binary_error("equal", self, other, exc)  # noqa: B904
        elif k is Bool:
            return self._bool_equal_scalar("equal", other, True)
        else:
            s = scalar_operand("equal", self, other)
            p = b.float_equal_elem(self._p, s) if k is Float else b.int_equal_elem(self._p, s)
        return wrap(p, b, Bool)

    def not_equal(self, other: Operand) -> Tensor:
        """Bool tensor of ``self != other`` (broadcasting); `other` may be a Python number."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k:
                raise operand_error("not_equal", self, other)
            try:
                if k is Float:
                    p = b.float_not_equal(self._p, other._p)
                elif k is Bool:
                    p = b.bool_not_equal(self._p, other._p)
                else:
                    p = b.int_not_equal(self._p, other._p)
            except Exception as exc:
                raise binary_error("not_equal", self, other, exc)  # noqa: B904
        elif k is Bool:
            return self._bool_equal_scalar("not_equal", other, False)
        else:
            s = scalar_operand("not_equal", self, other)
            p = b.float_not_equal_elem(self._p, s) if k is Float else b.int_not_equal_elem(self._p, s)
        return wrap(p, b, Bool)

    def _bool_equal_scalar(self, op: str, value: Any, equal: bool) -> Tensor:
        # A Bool tensor equals True where it is true: no backend op needed for True, one for False.
        if not isinstance(value, (bool, numbers.Integral)) or value not in (0, 1):
            raise kind_error(op, self, "a bool (or 0/1) scalar for a Bool tensor", f"got {value!r}")
        if bool(value) is equal:
            return self  # type: ignore[return-value]
        return wrap(self._b.bool_not(self._p), self._b, Bool)

    # -- ordering (Float and Int) -------------------------------------------------------------
    def greater(self, other: Operand) -> Tensor:
        """Bool tensor of ``self > other``; `other` may be a Python number."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise _order_error("greater", self, other)
            try:
                p = b.float_greater(self._p, other._p) if k is Float else b.int_greater(self._p, other._p)
            except Exception as exc:
                raise binary_error("greater", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("greater", self, other)
            p = b.float_greater_elem(self._p, s) if k is Float else b.int_greater_elem(self._p, s)
        return wrap(p, b, Bool)

    def greater_equal(self, other: Operand) -> Tensor:
        """Bool tensor of ``self >= other``; `other` may be a Python number."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise _order_error("greater_equal", self, other)
            try:
                if k is Float:
                    p = b.float_greater_equal(self._p, other._p)
                else:
                    p = b.int_greater_equal(self._p, other._p)
            except Exception as exc:
                raise binary_error("greater_equal", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("greater_equal", self, other)
            p = b.float_greater_equal_elem(self._p, s) if k is Float else b.int_greater_equal_elem(self._p, s)
        return wrap(p, b, Bool)

    def lower(self, other: Operand) -> Tensor:
        """Bool tensor of ``self < other``; `other` may be a Python number."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise _order_error("lower", self, other)
            try:
                p = b.float_lower(self._p, other._p) if k is Float else b.int_lower(self._p, other._p)
            except Exception as exc:
                raise binary_error("lower", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("lower", self, other)
            p = b.float_lower_elem(self._p, s) if k is Float else b.int_lower_elem(self._p, s)
        return wrap(p, b, Bool)

    def lower_equal(self, other: Operand) -> Tensor:
        """Bool tensor of ``self <= other``; `other` may be a Python number."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise _order_error("lower_equal", self, other)
            try:
                p = (
                    b.float_lower_equal(self._p, other._p)
                    if k is Float
                    else b.int_lower_equal(self._p, other._p)
                )
            except Exception as exc:
                raise binary_error("lower_equal", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("lower_equal", self, other)
            p = b.float_lower_equal_elem(self._p, s) if k is Float else b.int_lower_equal_elem(self._p, s)
        return wrap(p, b, Bool)

    # Burn's names for the scalar forms; the methods above accept scalars already.
    equal_elem = equal
    not_equal_elem = not_equal
    greater_elem = greater
    greater_equal_elem = greater_equal
    lower_elem = lower
    lower_equal_elem = lower_equal

    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        if not isinstance(other, (TensorBase, numbers.Number)):
            return NotImplemented  # lets `t == None` and `t in [None, ...]` be False
        return self.equal(other)

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        if not isinstance(other, (TensorBase, numbers.Number)):
            return NotImplemented
        return self.not_equal(other)

    # Defining __eq__ would disable hashing: tensors hash by identity (usable as dict keys).
    __hash__ = object.__hash__
    __gt__ = greater
    __ge__ = greater_equal
    __lt__ = lower
    __le__ = lower_equal

    # -- Bool logic ---------------------------------------------------------------------------
    def bool_not(self) -> Tensor:
        """Elementwise logical not of a Bool tensor (``~t``)."""
        if self._k is not Bool:
            raise kind_error("bool_not", self, "a Bool tensor", "use t == 0 for Float/Int tensors")
        return wrap(self._b.bool_not(self._p), self._b, Bool)

    __invert__ = bool_not

    def _logic_operand(self, op: str, other: Any) -> Any:
        """The Bool primitive of `other`, or a Python bool for a scalar operand."""
        if self._k is not Bool:
            raise kind_error(op, self, "Bool tensors", "compare first, e.g. (t > 0)")
        if isinstance(other, TensorBase):
            if other._b is not self._b or other._k is not Bool:
                raise (
                    operand_error(op, self, other)
                    if other._b is not self._b
                    else kind_error(op, other, "Bool tensors")
                )
            return other
        if isinstance(other, bool) or (isinstance(other, numbers.Integral) and other in (0, 1)):
            return bool(other)
        raise TypeError(f"{op}: unsupported operand {other!r}; use a Bool tensor or a bool")

    def bool_and(self, other: Operand) -> Tensor:
        """Elementwise logical and (``&``); `other` is a Bool tensor or a bool."""
        o = self._logic_operand("bool_and", other)
        b = self._b
        if o is True:
            return self  # type: ignore[return-value]
        if o is False:
            return wrap(b.bool_zeros(self.shape, self.device), b, Bool)
        try:
            return wrap(b.bool_and(self._p, o._p), b, Bool)
        except Exception as exc:
            raise binary_error("bool_and", self, o, exc)  # noqa: B904

    def bool_or(self, other: Operand) -> Tensor:
        """Elementwise logical or (``|``); `other` is a Bool tensor or a bool."""
        o = self._logic_operand("bool_or", other)
        b = self._b
        if o is False:
            return self  # type: ignore[return-value]
        if o is True:
            return wrap(b.bool_ones(self.shape, self.device), b, Bool)
        try:
            return wrap(b.bool_or(self._p, o._p), b, Bool)
        except Exception as exc:
            raise binary_error("bool_or", self, o, exc)  # noqa: B904

    def bool_xor(self, other: Operand) -> Tensor:
        """Elementwise logical exclusive or (``^``); `other` is a Bool tensor or a bool."""
        o = self._logic_operand("bool_xor", other)
        b = self._b
        if o is False:
            return self  # type: ignore[return-value]
        if o is True:
            return wrap(b.bool_not(self._p), b, Bool)
        try:
            return wrap(b.bool_xor(self._p, o._p), b, Bool)
        except Exception as exc:
            raise binary_error("bool_xor", self, o, exc)  # noqa: B904

    __and__ = bool_and
    __rand__ = bool_and
    __or__ = bool_or
    __ror__ = bool_or
    __xor__ = bool_xor
    __rxor__ = bool_xor
