"""Math methods of `burn.Tensor` beyond the basics: trigonometric and hyperbolic functions,
rounding toward zero, ``fmod``, cumulative ops, bitwise ops, multi-dim and statistical
reductions, closeness tests.

Element-wise math, the cumulative ops and the bitwise ops call one backend op each (see
`burn.backend.ops.float`); the reductions over several dims, the statistics and the closeness
tests are compositions of other methods, so every backend and autodiff get them as they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.foundations.kind import Bool, Float, Int
from burn.tensor import autocast as _amp
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import binary_error, kind_error, operand_error
from burn.tensor._scalars import scalar_operand
from burn.tensor.tensor_autodiff import AutodiffOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

Operand = Any  # a burn.Tensor or a Python number

_FLOAT = "a Float tensor"
_INT = "an Int tensor"
_NUMERIC = "a Float or Int tensor"
_TO_FLOAT = "convert with .float() first"
_BITWISE_HINT = "bitwise ops work on Int tensors (use bool_and/bool_or/bool_xor/bool_not on Bool)"
_DEG = math.pi / 180.0


DEFAULT_RTOL = 1e-5
"""`is_close`'s relative tolerance when none is given (Burn's ``DEFAULT_RTOL``)."""
DEFAULT_ATOL = 1e-8
"""`is_close`'s absolute tolerance when none is given (Burn's ``DEFAULT_ATOL``)."""


class MathOps(AutodiffOps):
    """More math methods (mixin of `burn.Tensor`)."""

    __slots__ = ()

    # -- helpers ------------------------------------------------------------------------------
    def _float_unary(self, op: str) -> Tensor:
        """The backend's ``float_<op>`` on a Float tensor."""
        if self._k is not Float:
            raise kind_error(op, self, _FLOAT, _TO_FLOAT)
        b = self._b
        return wrap(getattr(b, "float_" + op)(self._p), b, Float)

    def _binary(self, op: str, other: Operand, kinds: tuple[Any, ...], expected: str, hint: str) -> Tensor:
        """The backend's ``<kind>_<op>`` (tensor operand) or ``<kind>_<op>_scalar`` (number)."""
        b = self._b
        k = self._k
        if k not in kinds:
            raise kind_error(op, self, expected, hint)
        if isinstance(other, TensorBase):
            if other._b is not b or other._k is not k:
                raise operand_error(op, self, other)
            try:
                p = getattr(b, k.prefix + op)(self._p, other._p)
            except Exception as exc:
                raise binary_error(op, self, other, exc)  # noqa: B904 - keeps the backend error as cause
        else:
            p = getattr(b, k.prefix + op + "_scalar")(self._p, scalar_operand(op, self, other))
        return wrap(p, b, k)

    def _numeric_dim_op(self, op: str, dim: int) -> Tensor:
        """The backend's ``<kind>_<op>(tensor, dim)`` on a Float or Int tensor."""
        if self._k is Bool:
            raise kind_error(op, self, _NUMERIC, "convert with .int() first")
        return wrap(getattr(self._b, self._k.prefix + op)(self._p, self._dim(dim, op)), self._b, self._k)

    # -- trigonometric and hyperbolic functions (Float) ---------------------------------------
    def tan(self) -> Tensor:
        """Element-wise tangent.

        Example:
            >>> Tensor.from_data([0.0, math.pi / 4]).tan().tolist()  # doctest: +SKIP
            [0.0, 1.0]
        """
        return self._float_unary("tan")

    def sinh(self) -> Tensor:
        """Element-wise hyperbolic sine."""
        return self._float_unary("sinh")

    def cosh(self) -> Tensor:
        """Element-wise hyperbolic cosine."""
        return self._float_unary("cosh")

    def asin(self) -> Tensor:
        """Element-wise arcsine, in ``[-pi/2, pi/2]``; NaN outside ``[-1, 1]``."""
        return self._float_unary("asin")

    def acos(self) -> Tensor:
        """Element-wise arccosine, in ``[0, pi]``; NaN outside ``[-1, 1]``."""
        return self._float_unary("acos")

    def atan(self) -> Tensor:
        """Element-wise arctangent, in ``(-pi/2, pi/2)``."""
        return self._float_unary("atan")

    def asinh(self) -> Tensor:
        """Element-wise inverse hyperbolic sine."""
        return self._float_unary("asinh")

    def acosh(self) -> Tensor:
        """Element-wise inverse hyperbolic cosine; NaN below 1."""
        return self._float_unary("acosh")

    def atanh(self) -> Tensor:
        """Element-wise inverse hyperbolic tangent; +-inf at +-1, NaN outside ``[-1, 1]``."""
        return self._float_unary("atanh")

    def atan2(self, other: Tensor) -> Tensor:
        """Element-wise angle of the point ``(x=other, y=self)``, in ``[-pi, pi]`` (broadcasting).

        Example:
            >>> y = Tensor.from_data([1.0, -1.0]); x = Tensor.from_data([-1.0, -1.0])  # doctest: +SKIP
            >>> y.atan2(x).tolist()  # [3 pi / 4, -3 pi / 4]  # doctest: +SKIP
            [2.356194496154785, -2.356194496154785]
        """
        if not isinstance(other, TensorBase):
            raise TypeError(f"atan2: the operand must be a burn.Tensor, got {type(other).__name__}")
        return self._binary("atan2", other, (Float,), _FLOAT, _TO_FLOAT)

    def deg2rad(self) -> Tensor:
        """Degrees to radians (``self * pi / 180``)."""
        if self._k is not Float:
            raise kind_error("deg2rad", self, _FLOAT, _TO_FLOAT)
        return self * _DEG

    def rad2deg(self) -> Tensor:
        """Radians to degrees (``self * 180 / pi``)."""
        if self._k is not Float:
            raise kind_error("rad2deg", self, _FLOAT, _TO_FLOAT)
        return self * (180.0 / math.pi)

    # -- rounding, powers, remainders ---------------------------------------------------------
    def trunc(self) -> Tensor:
        """Element-wise rounding toward zero (``-1.7 -> -1.0``)."""
        return self._float_unary("trunc")

    def square(self) -> Tensor:
        """Element-wise ``self * self`` (Float or Int)."""
        if self._k is Bool:
            raise kind_error("square", self, _NUMERIC, "convert with .int() or .float() first")
        return self * self

    def hypot(self, other: Operand) -> Tensor:
        """Element-wise ``sqrt(self^2 + other^2)`` (Float; `other` a tensor or a number).

        Computed as written: squares beyond the dtype's range overflow to inf.
        """
        if self._k is not Float:
            raise kind_error("hypot", self, _FLOAT, _TO_FLOAT)
        if isinstance(other, TensorBase):
            if other._b is not self._b or other._k is not Float:
                raise operand_error("hypot", self, other)
            return (self * self + other * other).sqrt()  # type: ignore[operator]
        s = scalar_operand("hypot", self, other)
        return (self * self + s * s).sqrt()

    def fmod(self, other: Operand) -> Tensor:
        """Element-wise remainder with the sign of the dividend, C's ``fmod``:
        ``self - trunc(self / other) * other``. NaN where `other` is 0. Float only.

        Unlike `remainder` (``%``), which takes the divisor's sign.

        Example:
            >>> Tensor.from_data([-3.0, 3.0]).fmod(2.0).tolist()  # doctest: +SKIP
            [-1.0, 1.0]
        """
        return self._binary("fmod", other, (Float,), _FLOAT, _TO_FLOAT)

    def fmod_scalar(self, other: float) -> Tensor:
        """`fmod` with a Python number."""
        if isinstance(other, TensorBase):
            raise TypeError("fmod_scalar: the operand must be a Python number; use fmod() for tensors")
        return self._binary("fmod", other, (Float,), _FLOAT, _TO_FLOAT)

    # -- cumulative ops (Float or Int; same shape) --------------------------------------------
    def cumprod(self, dim: int) -> Tensor:
        """Cumulative product along `dim`.

        Example:
            >>> Tensor.from_data([1, 2, 3, 4]).cumprod(0).tolist()  # doctest: +SKIP
            [1, 2, 6, 24]
        """
        if _amp.active:
            self = _amp.full_precision("cumprod", self)  # noqa: PLW0642
        return self._numeric_dim_op("cumprod", dim)

    def cummax(self, dim: int) -> Tensor:
        """Running maximum along `dim` (values only, as in Burn); a NaN propagates onward."""
        return self._numeric_dim_op("cummax", dim)

    def cummin(self, dim: int) -> Tensor:
        """Running minimum along `dim` (values only, as in Burn); a NaN propagates onward."""
        return self._numeric_dim_op("cummin", dim)

    # -- bitwise ops (Int, two's complement) --------------------------------------------------
    def bitwise_and(self, other: Operand) -> Tensor:
        """Element-wise bitwise and (``&`` on Int tensors); `other` a tensor or an int.

        Example:
            >>> (Tensor.from_data([12, -1]) & 10).tolist()  # doctest: +SKIP
            [8, 10]
        """
        return self._binary("bitwise_and", other, (Int,), _INT, _BITWISE_HINT)

    def bitwise_and_scalar(self, other: int) -> Tensor:
        """`bitwise_and` with a Python int."""
        return self._binary("bitwise_and", self._scalar_only("bitwise_and_scalar", other), (Int,), _INT, "")

    def bitwise_or(self, other: Operand) -> Tensor:
        """Element-wise bitwise or (``|`` on Int tensors); `other` a tensor or an int."""
        return self._binary("bitwise_or", other, (Int,), _INT, _BITWISE_HINT)

    def bitwise_or_scalar(self, other: int) -> Tensor:
        """`bitwise_or` with a Python int."""
        return self._binary("bitwise_or", self._scalar_only("bitwise_or_scalar", other), (Int,), _INT, "")

    def bitwise_xor(self, other: Operand) -> Tensor:
        """Element-wise bitwise exclusive or (``^`` on Int tensors); `other` a tensor or an int."""
        return self._binary("bitwise_xor", other, (Int,), _INT, _BITWISE_HINT)

    def bitwise_xor_scalar(self, other: int) -> Tensor:
        """`bitwise_xor` with a Python int."""
        return self._binary("bitwise_xor", self._scalar_only("bitwise_xor_scalar", other), (Int,), _INT, "")

    def bitwise_not(self) -> Tensor:
        """Element-wise bitwise not (``~`` on Int tensors): ``-x - 1`` for signed dtypes."""
        if self._k is not Int:
            raise kind_error("bitwise_not", self, _INT, _BITWISE_HINT)
        return wrap(self._b.int_bitwise_not(self._p), self._b, Int)

    def bitwise_left_shift(self, other: Operand) -> Tensor:
        """Element-wise ``self << other`` (Int); bits shifted out are lost.

        Shift amounts must be in ``[0, bits of the dtype)``: others are backend-dependent
        (as in Burn). A negative int `other` raises.
        """
        return self._binary("bitwise_left_shift", self._shift_amount(other), (Int,), _INT, _BITWISE_HINT)

    def bitwise_left_shift_scalar(self, other: int) -> Tensor:
        """`bitwise_left_shift` by a Python int."""
        amount = self._shift_amount(self._scalar_only("bitwise_left_shift_scalar", other))
        return self._binary("bitwise_left_shift", amount, (Int,), _INT, "")

    def bitwise_right_shift(self, other: Operand) -> Tensor:
        """Element-wise ``self >> other`` (Int): arithmetic (sign-filling) for signed dtypes.

        Shift amounts must be in ``[0, bits of the dtype)``, as for `bitwise_left_shift`.
        """
        return self._binary("bitwise_right_shift", self._shift_amount(other), (Int,), _INT, _BITWISE_HINT)

    def bitwise_right_shift_scalar(self, other: int) -> Tensor:
        """`bitwise_right_shift` by a Python int."""
        amount = self._shift_amount(self._scalar_only("bitwise_right_shift_scalar", other))
        return self._binary("bitwise_right_shift", amount, (Int,), _INT, "")

    def _scalar_only(self, op: str, value: Any) -> Any:
        if isinstance(value, TensorBase):
            raise TypeError(f"{op}: the operand must be a Python int; use {op.removesuffix('_scalar')}()")
        return value

    @staticmethod
    def _shift_amount(value: Any) -> Any:
        if not isinstance(value, TensorBase) and isinstance(value, int) and value < 0:
            raise ValueError(f"bitwise shift: negative shift amount {value}")
        return value

    # Python operators: bitwise on Int tensors, logical on Bool tensors (see CompareOps).
    def __and__(self, other: Operand) -> Tensor:
        return self.bitwise_and(other) if self._k is Int else self.bool_and(other)

    def __or__(self, other: Operand) -> Tensor:
        return self.bitwise_or(other) if self._k is Int else self.bool_or(other)

    def __xor__(self, other: Operand) -> Tensor:
        return self.bitwise_xor(other) if self._k is Int else self.bool_xor(other)

    def __rand__(self, other: Operand) -> Tensor:  # every one of these is commutative
        return self.__and__(other)

    def __ror__(self, other: Operand) -> Tensor:
        return self.__or__(other)

    def __rxor__(self, other: Operand) -> Tensor:
        return self.__xor__(other)

    def __invert__(self) -> Tensor:
        return self.bitwise_not() if self._k is Int else self.bool_not()

    def __lshift__(self, other: Operand) -> Tensor:
        return self.bitwise_left_shift(other)

    def __rshift__(self, other: Operand) -> Tensor:
        return self.bitwise_right_shift(other)

    # -- reductions over several dims (each kept with size 1) ---------------------------------
    def _over_dims(self, op: str, dims: Sequence[int] | int, one: str) -> Tensor:
        out: Tensor = self  # type: ignore[assignment]
        for d in self._dims(dims, op):
            out = getattr(out, one)(d)
        return out

    def sum_dims(self, dims: Sequence[int] | int) -> Tensor:
        """Sum over `dims` (negative dims count from the end), each kept with size 1.

        Example:
            >>> Tensor.ones((2, 3, 4)).sum_dims([0, -1]).shape  # doctest: +SKIP
            (1, 3, 1)
        """
        return self._over_dims("sum_dims", dims, "sum_dim")

    def mean_dims(self, dims: Sequence[int] | int) -> Tensor:
        """Mean over `dims`, each kept with size 1 (Int: floor at each step, as `mean_dim`)."""
        return self._over_dims("mean_dims", dims, "mean_dim")

    def prod_dims(self, dims: Sequence[int] | int) -> Tensor:
        """Product over `dims`, each kept with size 1."""
        return self._over_dims("prod_dims", dims, "prod_dim")

    def max_dims(self, dims: Sequence[int] | int) -> Tensor:
        """Largest values over `dims`, each kept with size 1."""
        return self._over_dims("max_dims", dims, "max_dim")

    def min_dims(self, dims: Sequence[int] | int) -> Tensor:
        """Smallest values over `dims`, each kept with size 1."""
        return self._over_dims("min_dims", dims, "min_dim")

    def max_abs(self) -> Tensor:
        """Largest absolute value, shape ``(1,)``."""
        return self.abs().max()

    def max_abs_dim(self, dim: int) -> Tensor:
        """Largest absolute values along `dim` (kept with size 1)."""
        return self.abs().max_dim(self._dim(dim, "max_abs_dim"))

    def max_abs_dims(self, dims: Sequence[int] | int) -> Tensor:
        """Largest absolute values over `dims`, each kept with size 1."""
        return self.abs()._over_dims("max_abs_dims", dims, "max_dim")

    # -- element-wise extrema of two tensors --------------------------------------------------
    def _pair(self, op: str, other: Operand, take_other: str) -> Tensor:
        if self._k is Bool:
            raise kind_error(op, self, _NUMERIC, "convert with .int() first")
        if not isinstance(other, TensorBase):
            s = scalar_operand(op, self, other)
            return self.clamp_min(s) if take_other == "lower" else self.clamp_max(s)
        if other._b is not self._b or other._k is not self._k:
            raise operand_error(op, self, other)
        take = getattr(self, take_other)(other)
        if self._k is Float:
            take = take.bool_or(other.is_nan())  # type: ignore[attr-defined]
        return self.mask_where(take, other)  # type: ignore[arg-type]

    def max_pair(self, other: Operand) -> Tensor:
        """Element-wise maximum of two tensors (broadcasting; `other` may be a number).

        A NaN in either operand gives NaN, as NumPy's ``maximum`` and PyTorch's ``maximum``.
        Under autodiff, ties send the gradient to `self`.
        """
        return self._pair("max_pair", other, "lower")

    def min_pair(self, other: Operand) -> Tensor:
        """Element-wise minimum of two tensors (broadcasting; `other` may be a number); NaN wins."""
        return self._pair("min_pair", other, "greater")

    # -- order statistics ---------------------------------------------------------------------
    def _median_along(self, op: str, dim: int | None) -> tuple[Tensor, Tensor]:
        if self._k is Bool:
            raise kind_error(op, self, _NUMERIC, "convert with .int() first")
        t: Tensor = self if dim is not None else self.reshape((-1,))  # type: ignore[assignment]
        d = t._dim(0 if dim is None else dim, op)
        n = t.shape[d]
        if n == 0:
            raise ShapeError(f"{op}: dim {d} of shape {t.shape} is empty; a median needs one element")
        values, indices = t.sort_with_indices(d)
        k = (n - 1) // 2  # the lower median, as PyTorch
        return values.narrow(d, k, 1), indices.narrow(d, k, 1)

    def median(self, dim: int | None = None) -> Tensor:
        """The lower median (the ``(n - 1) // 2``-th smallest, as PyTorch) along `dim`, kept with
        size 1; of all elements (shape ``(1,)``) when `dim` is None. NaNs sort last, so they
        count as the largest values.

        Example:
            >>> Tensor.from_data([[3.0, 1.0, 4.0, 2.0]]).median(1).tolist()  # doctest: +SKIP
            [[2.0]]

        Raises:
            ShapeError: the reduced dim is empty.
        """
        return self._median_along("median", dim)[0]

    def median_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        """``(values, indices)`` of the lower median along `dim` (kept with size 1)."""
        return self._median_along("median_with_indices", dim)

    # -- statistics (Float) -------------------------------------------------------------------
    def _var_mean(self, op: str, dim: int, correction: int) -> tuple[Tensor, Tensor]:
        if self._k is not Float:
            raise kind_error(op, self, _FLOAT, _TO_FLOAT)
        d = self._dim(dim, op)
        mean = self.mean_dim(d)
        centered = self - mean
        return (centered * centered).sum_dim(d) / (self.shape[d] - correction), mean

    def var_mean(self, dim: int) -> tuple[Tensor, Tensor]:
        """``(var, mean)`` along `dim` (both kept with size 1), the variance unbiased (``n - 1``),
        from one mean.

        Example:
            >>> var, mean = Tensor.from_data([[1.0, 2.0, 3.0]]).var_mean(1)  # doctest: +SKIP
            >>> var.tolist(), mean.tolist()  # doctest: +SKIP
            ([[1.0]], [[2.0]])
        """
        return self._var_mean("var_mean", dim, 1)

    def var_mean_bias(self, dim: int) -> tuple[Tensor, Tensor]:
        """``(var, mean)`` along `dim` with the biased (population, ``n``) variance."""
        return self._var_mean("var_mean_bias", dim, 0)

    def cov(self, dim: int, correction_factor: int = 1) -> Tensor:
        """Covariance matrices: of the last two dims, `dim` (one of them) indexes the
        observations and the other the variables; dims before them are a batch. ``[..., V,
        N].cov(-1)`` and ``[..., N, V].cov(-2)`` are both ``[..., V, V]`` (NumPy's ``cov(x)``
        and ``cov(x, rowvar=False)`` per batch entry). Divides by ``N - correction_factor``.

        Burn computes rank > 2 inputs with its 2-D formula, which does not batch; here the
        leading dims are a batch, and a `dim` before the last two is refused.

        Example:
            >>> x = Tensor.from_data([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])  # doctest: +SKIP
            >>> x.cov(1).tolist()  # doctest: +SKIP
            [[1.0, -1.0], [-1.0, 1.0]]
            >>> Tensor.zeros((4, 2, 6)).cov(-1).shape  # a batch of 4  # doctest: +SKIP
            (4, 2, 2)

        Raises:
            ShapeError: the tensor has rank < 2, or `dim` is not one of the last two dims.
        """
        if self._k is not Float:
            raise kind_error("cov", self, _FLOAT, _TO_FLOAT)
        rank = self.dims
        if rank < 2:
            raise ShapeError(
                f"cov: expects variables x observations in the last two dims, got shape {self.shape}"
            )
        d = self._dim(dim, "cov")
        if d < rank - 2:
            raise ShapeError(
                f"cov: dim {dim} must be one of the last two dims (observations); dims before "
                f"them are a batch (shape {self.shape})"
            )
        centered = self - self.mean_dim(d)
        if d == rank - 2:
            centered = centered.swap_dims(rank - 2, rank - 1)  # [..., V, N]
        return (centered @ centered.swap_dims(rank - 2, rank - 1)) / (self.shape[d] - correction_factor)

    # -- closeness and finiteness -------------------------------------------------------------
    def is_close(self, other: Operand, rtol: float | None = None, atol: float | None = None) -> Tensor:
        """Bool tensor: where ``|self - other| <= atol + rtol * |other|`` (broadcasting; `other`
        a tensor or a number). Equal infinities are close; NaN is close to nothing. Float only.

        `rtol` and `atol` left at None take Burn's ``DEFAULT_RTOL = 1e-5`` and ``DEFAULT_ATOL =
        1e-8``, the same for every float dtype (as Burn and NumPy; loosen them for float16).

        Example:
            >>> a = Tensor.from_data([1.0, 2.0])  # doctest: +SKIP
            >>> a.is_close(a + 1e-9).tolist()  # doctest: +SKIP
            [True, True]
            >>> a.is_close(a + 0.01, None, 0.1).tolist()  # rtol default, atol given  # doctest: +SKIP
            [True, True]
        """
        rtol = DEFAULT_RTOL if rtol is None else rtol
        atol = DEFAULT_ATOL if atol is None else atol
        if self._k is not Float:
            raise kind_error("is_close", self, _FLOAT, _TO_FLOAT)
        if isinstance(other, TensorBase):
            if other._b is not self._b or other._k is not Float:
                raise operand_error("is_close", self, other)
            # an infinite `other` makes the bound infinite: only equality may count there
            close = (self - other).abs().lower_equal(other.abs() * rtol + atol)  # type: ignore[attr-defined]
            close = close.bool_and(other.is_finite())  # type: ignore[attr-defined]
        else:
            other = scalar_operand("is_close", self, other)
            if not math.isfinite(other):
                return self.equal(other)
            close = (self - other).abs().lower_equal(abs(other) * rtol + atol)
        return close.bool_or(self.equal(other))  # equal infinities are close

    def all_close(self, other: Operand, rtol: float | None = None, atol: float | None = None) -> bool:
        """Whether every element `is_close` to `other` (a Python bool); tolerances left at
        None take `is_close`'s defaults.

        Example:
            >>> Tensor.from_data([1.0]).all_close(Tensor.from_data([1.0 + 1e-7]))  # doctest: +SKIP
            True
        """
        return bool(self.is_close(other, rtol, atol).all().into_scalar())

    def is_finite(self) -> Tensor:
        """Bool tensor: where the values are neither NaN nor infinite (always, for Int)."""
        k = self._k
        if k is Float:
            return (self.is_nan().bool_or(self.is_inf())).bool_not()
        if k is Int:
            return wrap(self._b.bool_ones(self.shape, self.device), self._b, Bool)
        raise kind_error("is_finite", self, _NUMERIC)
