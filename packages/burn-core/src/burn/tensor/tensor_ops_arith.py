"""Arithmetic: binary ops with tensor or scalar operands, Python operators, unary math, clamps.

Binary ops are written out one by one (no generated code) because they are the hot path: one
isinstance check, two identity checks, the backend call, and `wrap`. Shapes, devices and dtypes
are only examined when the backend raises (see `burn.tensor._errors.binary_error`).

Named methods called on a temporary (``(a * 2).add(1)``, ``x.exp()``) may hand its buffer to the
backend (Burn's ownership trick, `burn.foundations.ownership`); Python operators never do.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.foundations.kind import Bool, Float, Int
from burn.foundations.ownership import TEMP as _TEMP
from burn.tensor import _owned_ops as _owned
from burn.tensor import autocast as _amp
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import binary_error, kind_error, matmul_problem, operand_error
from burn.tensor._scalars import scalar_operand
from burn.tensor.tensor_host import HostOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

_rc = sys.getrefcount
Operand = Any  # a burn.Tensor or a Python number (kept loose: mypy cannot see Tensor here)

_FLOAT = "a Float tensor"
_NUMERIC = "a Float or Int tensor"


class ArithOps(HostOps):
    """Arithmetic ops (mixin of `burn.Tensor`)."""

    __slots__ = ()

    # -- binary arithmetic --------------------------------------------------------------------
    def add(self, other: Operand) -> Tensor:
        """Elementwise ``self + other`` with broadcasting; `other` may be a Python number.

        Example:
            >>> (Tensor.from_data([1.0, 2.0]) + 1).tolist()  # doctest: +SKIP
            [2.0, 3.0]
        """
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise operand_error("add", self, other)
            if k is Float and b._reuse:
                xt = _rc(self) == _TEMP  # a temporary: see burn.foundations.ownership
                yt = _rc(other) == _TEMP
                if xt or yt:
                    return _owned.binary(b.float_add_owned, "add", self, other, xt, yt)
            try:
                p = b.float_add(self._p, other._p) if k is Float else b.int_add(self._p, other._p)
            except Exception as exc:
                raise binary_error("add", self, other, exc)  # noqa: B904 - keeps the backend error as cause
        else:
            s = scalar_operand("add", self, other)
            if k is Float and b._reuse and _rc(self) == _TEMP:
                return _owned.scalar(b.float_add_scalar_owned, self, s)
            p = b.float_add_scalar(self._p, s) if k is Float else b.int_add_scalar(self._p, s)
        return wrap(p, b, k)

    def sub(self, other: Operand) -> Tensor:
        """Elementwise ``self - other`` with broadcasting; `other` may be a Python number."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise operand_error("sub", self, other)
            if k is Float and b._reuse:
                xt = _rc(self) == _TEMP  # a temporary: see burn.foundations.ownership
                yt = _rc(other) == _TEMP
                if xt or yt:
                    return _owned.binary(b.float_sub_owned, "sub", self, other, xt, yt)
            try:
                p = b.float_sub(self._p, other._p) if k is Float else b.int_sub(self._p, other._p)
            except Exception as exc:
                raise binary_error("sub", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("sub", self, other)
            if k is Float and b._reuse and _rc(self) == _TEMP:
                return _owned.scalar(b.float_sub_scalar_owned, self, s)
            p = b.float_sub_scalar(self._p, s) if k is Float else b.int_sub_scalar(self._p, s)
        return wrap(p, b, k)

    def mul(self, other: Operand) -> Tensor:
        """Elementwise ``self * other`` with broadcasting; `other` may be a Python number."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise operand_error("mul", self, other)
            if k is Float and b._reuse:
                xt = _rc(self) == _TEMP  # a temporary: see burn.foundations.ownership
                yt = _rc(other) == _TEMP
                if xt or yt:
                    return _owned.binary(b.float_mul_owned, "mul", self, other, xt, yt)
            try:
                p = b.float_mul(self._p, other._p) if k is Float else b.int_mul(self._p, other._p)
            except Exception as exc:
                raise binary_error("mul", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("mul", self, other)
            if k is Float and b._reuse and _rc(self) == _TEMP:
                return _owned.scalar(b.float_mul_scalar_owned, self, s)
            p = b.float_mul_scalar(self._p, s) if k is Float else b.int_mul_scalar(self._p, s)
        return wrap(p, b, k)

    def div(self, other: Operand) -> Tensor:
        """Elementwise ``self / other``. As in Burn, Int division floors (Python's ``//``)."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise operand_error("div", self, other)
            if k is Float and b._reuse:
                xt = _rc(self) == _TEMP  # a temporary: see burn.foundations.ownership
                yt = _rc(other) == _TEMP
                if xt or yt:
                    return _owned.binary(b.float_div_owned, "div", self, other, xt, yt)
            try:
                p = b.float_div(self._p, other._p) if k is Float else b.int_div(self._p, other._p)
            except Exception as exc:
                raise binary_error("div", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("div", self, other)
            if k is Float and b._reuse and _rc(self) == _TEMP:
                return _owned.scalar(b.float_div_scalar_owned, self, s)
            p = b.float_div_scalar(self._p, s) if k is Float else b.int_div_scalar(self._p, s)
        return wrap(p, b, k)

    def remainder(self, other: Operand) -> Tensor:
        """Elementwise remainder with the divisor's sign (Python's ``%``)."""
        b = self._b
        k = self._k
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k or k is Bool:
                raise operand_error("remainder", self, other)
            try:
                p = b.float_remainder(self._p, other._p) if k is Float else b.int_remainder(self._p, other._p)
            except Exception as exc:
                raise binary_error("remainder", self, other, exc)  # noqa: B904
        else:
            s = scalar_operand("remainder", self, other)
            p = b.float_remainder_scalar(self._p, s) if k is Float else b.int_remainder_scalar(self._p, s)
        return wrap(p, b, k)

    def powf(self, other: Operand) -> Tensor:
        """Elementwise ``self ** other`` (Float only); `other` may be a Python number."""
        if _amp.active:
            self = _amp.full_precision("powf", self)  # noqa: PLW0642
        b = self._b
        if self._k is not Float:
            raise kind_error("powf", self, _FLOAT, "convert with .float() first")
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not Float:
                raise operand_error("powf", self, other)
            try:
                p = b.float_powf(self._p, other._p)
            except Exception as exc:
                raise binary_error("powf", self, other, exc)  # noqa: B904
        else:
            p = b.float_powf_scalar(self._p, scalar_operand("powf", self, other))
        return wrap(p, b, Float)

    def powf_scalar(self, exponent: float) -> Tensor:
        """Elementwise ``self ** exponent`` for a Python number (Float only)."""
        if _amp.active:
            self = _amp.full_precision("powf", self)  # noqa: PLW0642
        if self._k is not Float:
            raise kind_error("powf_scalar", self, _FLOAT, "convert with .float() first")
        return wrap(
            self._b.float_powf_scalar(self._p, scalar_operand("powf_scalar", self, exponent)), self._b, Float
        )

    def matmul(self, other: Tensor) -> Tensor:
        """Matrix product over the last two dims; leading (batch) dims broadcast. Float or Int
        (as Burn's int matmul), rank >= 2.

        Example:
            >>> a = Tensor.ones((2, 3)); b = Tensor.ones((3, 4))  # doctest: +SKIP
            >>> (a @ b).shape  # doctest: +SKIP
            (2, 4)
        """
        b = self._b
        k = self._k
        if not isinstance(other, TensorBase):
            raise TypeError(f"matmul: the right operand must be a burn.Tensor, got {type(other).__name__}")
        if other._b is not b or k is Bool or other._k is not k:
            if other._b is b and k is other._k:
                raise kind_error("matmul", self, "Float or Int tensors", "convert with .float() first")
            raise operand_error("matmul", self, other)
        if _amp.active and k is Float:
            self, other = _amp.low_precision("matmul", self, other)  # noqa: PLW0642
        try:
            p = b.float_matmul(self._p, other._p) if k is Float else b.int_matmul(self._p, other._p)
        except Exception as exc:
            if len(self.shape) < 2 or len(other.shape) < 2:
                raise ShapeError(matmul_problem(self.shape, other.shape)) from None
            raise binary_error("matmul", self, other, exc)  # noqa: B904
        # Checked on the result (one shape read instead of two): NumPy-like backends accept rank-1
        # operands with other semantics than Burn's and then return a result of rank < 2.
        if len(b.float_shape(p) if k is Float else b.int_shape(p)) < 2:
            raise ShapeError(matmul_problem(self.shape, other.shape))
        return wrap(p, b, k)

    # -- operators ----------------------------------------------------------------------------
    __add__ = add
    __radd__ = add
    __sub__ = sub
    __mul__ = mul
    __rmul__ = mul
    __truediv__ = div
    __mod__ = remainder
    __pow__ = powf
    __matmul__ = matmul

    def _full_like_scalar(self, value: Any, op: str) -> Any:
        """A rank-0 primitive holding `value` in this tensor's dtype and device (broadcasts)."""
        b = self._b
        s = scalar_operand(op, self, value)
        if self._k is Float:
            return b.float_full((), s, b.float_device(self._p), b.float_get_dtype(self._p))
        return b.int_full((), s, b.int_device(self._p), b.int_get_dtype(self._p))

    def __rsub__(self, other: Operand) -> Tensor:
        # s - x == (-x) + s exactly (negation is exact), and needs no extra tensor.
        b = self._b
        s = scalar_operand("sub", self, other)
        if self._k is Float:
            return wrap(b.float_add_scalar(b.float_neg(self._p), s), b, Float)
        return wrap(b.int_add_scalar(b.int_neg(self._p), s), b, Int)

    def __rtruediv__(self, other: Operand) -> Tensor:
        b = self._b
        full = self._full_like_scalar(other, "div")
        if self._k is Float:
            return wrap(b.float_div(full, self._p), b, Float)
        return wrap(b.int_div(full, self._p), b, Int)

    def __rmod__(self, other: Operand) -> Tensor:
        b = self._b
        full = self._full_like_scalar(other, "remainder")
        if self._k is Float:
            return wrap(b.float_remainder(full, self._p), b, Float)
        return wrap(b.int_remainder(full, self._p), b, Int)

    def __rpow__(self, other: Operand) -> Tensor:
        if self._k is not Float:
            raise kind_error("powf", self, _FLOAT, "convert with .float() first")
        return wrap(self._b.float_powf(self._full_like_scalar(other, "powf"), self._p), self._b, Float)

    def __floordiv__(self, other: Operand) -> Tensor:
        """``//``: Int floors (as `div`); Float gives ``floor(self / other)``."""
        out = self.div(other)
        if self._k is Float:
            return wrap(self._b.float_floor(out._p), self._b, Float)
        return out

    def __rfloordiv__(self, other: Operand) -> Tensor:
        out = self.__rtruediv__(other)
        if self._k is Float:
            return wrap(self._b.float_floor(out._p), self._b, Float)
        return out

    def __neg__(self) -> Tensor:
        return self.neg()

    def __pos__(self) -> Tensor:
        if self._k is Bool:
            raise kind_error("pos", self, _NUMERIC)
        return self  # type: ignore[return-value]

    def __abs__(self) -> Tensor:
        return self.abs()

    # -- unary ops on Float and Int -----------------------------------------------------------
    def neg(self) -> Tensor:
        """Elementwise ``-self``."""
        k = self._k
        if k is Float:
            b = self._b
            if b._reuse and _rc(self) == _TEMP:
                return _owned.unary(b.float_neg_owned, self)
            return wrap(b.float_neg(self._p), b, Float)
        if k is Int:
            return wrap(self._b.int_neg(self._p), self._b, Int)
        raise kind_error("neg", self, _NUMERIC, "use bool_not() (~) for Bool tensors")

    def abs(self) -> Tensor:
        """Elementwise absolute value."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_abs(self._p), self._b, Float)
        if k is Int:
            return wrap(self._b.int_abs(self._p), self._b, Int)
        raise kind_error("abs", self, _NUMERIC)

    def sign(self) -> Tensor:
        """Elementwise -1, 0 or 1 (in the tensor's kind)."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_sign(self._p), self._b, Float)
        if k is Int:
            return wrap(self._b.int_sign(self._p), self._b, Int)
        raise kind_error("sign", self, _NUMERIC)

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        """Elementwise clamp to ``[min, max]``; either bound may be None (unbounded).

        Raises:
            ValueError: ``min > max``.
        """
        if min is None:
            return self if max is None else self.clamp_max(max)  # type: ignore[return-value]
        if max is None:
            return self.clamp_min(min)
        lo = scalar_operand("clamp", self, min)
        hi = scalar_operand("clamp", self, max)
        if lo > hi:
            raise ValueError(f"clamp: min {min!r} is greater than max {max!r}")
        if self._k is Float:
            return wrap(self._b.float_clamp(self._p, lo, hi), self._b, Float)
        return wrap(self._b.int_clamp(self._p, lo, hi), self._b, Int)

    def clamp_min(self, min: float) -> Tensor:  # noqa: A002
        """Elementwise ``max(self, min)``."""
        lo = scalar_operand("clamp_min", self, min)
        if self._k is Float:
            return wrap(self._b.float_clamp_min(self._p, lo), self._b, Float)
        return wrap(self._b.int_clamp_min(self._p, lo), self._b, Int)

    def clamp_max(self, max: float) -> Tensor:  # noqa: A002
        """Elementwise ``min(self, max)``."""
        hi = scalar_operand("clamp_max", self, max)
        if self._k is Float:
            return wrap(self._b.float_clamp_max(self._p, hi), self._b, Float)
        return wrap(self._b.int_clamp_max(self._p, hi), self._b, Int)

    # -- unary math on Float ------------------------------------------------------------------
    def exp(self) -> Tensor:
        """Elementwise ``e ** self``."""
        if _amp.active:
            self = _amp.full_precision("exp", self)  # noqa: PLW0642
        if self._k is Float:
            b = self._b
            if b._reuse and _rc(self) == _TEMP:
                return _owned.unary(b.float_exp_owned, self)
            return wrap(b.float_exp(self._p), b, Float)
        raise kind_error("exp", self, _FLOAT, "convert with .float() first")

    def log(self) -> Tensor:
        """Elementwise natural logarithm."""
        if _amp.active:
            self = _amp.full_precision("log", self)  # noqa: PLW0642
        if self._k is Float:
            b = self._b
            if b._reuse and _rc(self) == _TEMP:
                return _owned.unary(b.float_log_owned, self)
            return wrap(b.float_log(self._p), b, Float)
        raise kind_error("log", self, _FLOAT, "convert with .float() first")

    def log1p(self) -> Tensor:
        """Elementwise ``log(1 + self)``."""
        if _amp.active:
            self = _amp.full_precision("log1p", self)  # noqa: PLW0642
        if self._k is Float:
            return wrap(self._b.float_log1p(self._p), self._b, Float)
        raise kind_error("log1p", self, _FLOAT, "convert with .float() first")

    def sqrt(self) -> Tensor:
        """Elementwise square root."""
        if self._k is Float:
            b = self._b
            if b._reuse and _rc(self) == _TEMP:
                return _owned.unary(b.float_sqrt_owned, self)
            return wrap(b.float_sqrt(self._p), b, Float)
        raise kind_error("sqrt", self, _FLOAT, "convert with .float() first")

    def recip(self) -> Tensor:
        """Elementwise ``1 / self``."""
        if self._k is Float:
            return wrap(self._b.float_recip(self._p), self._b, Float)
        raise kind_error("recip", self, _FLOAT, "convert with .float() first")

    def sin(self) -> Tensor:
        """Elementwise sine."""
        if self._k is Float:
            return wrap(self._b.float_sin(self._p), self._b, Float)
        raise kind_error("sin", self, _FLOAT, "convert with .float() first")

    def cos(self) -> Tensor:
        """Elementwise cosine."""
        if self._k is Float:
            return wrap(self._b.float_cos(self._p), self._b, Float)
        raise kind_error("cos", self, _FLOAT, "convert with .float() first")

    def tanh(self) -> Tensor:
        """Elementwise hyperbolic tangent."""
        if self._k is Float:
            b = self._b
            if b._reuse and _rc(self) == _TEMP:
                return _owned.unary(b.float_tanh_owned, self)
            return wrap(b.float_tanh(self._p), b, Float)
        raise kind_error("tanh", self, _FLOAT, "convert with .float() first")

    def erf(self) -> Tensor:
        """Elementwise error function."""
        if self._k is Float:
            return wrap(self._b.float_erf(self._p), self._b, Float)
        raise kind_error("erf", self, _FLOAT, "convert with .float() first")

    def round(self) -> Tensor:
        """Elementwise rounding, half to even."""
        if self._k is Float:
            return wrap(self._b.float_round(self._p), self._b, Float)
        raise kind_error("round", self, _FLOAT)

    def floor(self) -> Tensor:
        """Elementwise floor."""
        if self._k is Float:
            return wrap(self._b.float_floor(self._p), self._b, Float)
        raise kind_error("floor", self, _FLOAT)

    def ceil(self) -> Tensor:
        """Elementwise ceiling."""
        if self._k is Float:
            return wrap(self._b.float_ceil(self._p), self._b, Float)
        raise kind_error("ceil", self, _FLOAT)

    def is_nan(self) -> Tensor:
        """Bool tensor: where the values are NaN (never, for Int tensors)."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_is_nan(self._p), self._b, Bool)
        if k is Int:
            return wrap(self._b.bool_zeros(self.shape, self.device), self._b, Bool)
        raise kind_error("is_nan", self, _NUMERIC)

    def is_inf(self) -> Tensor:
        """Bool tensor: where the values are +inf or -inf (never, for Int tensors)."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_is_inf(self._p), self._b, Bool)
        if k is Int:
            return wrap(self._b.bool_zeros(self.shape, self.device), self._b, Bool)
        raise kind_error("is_inf", self, _NUMERIC)
