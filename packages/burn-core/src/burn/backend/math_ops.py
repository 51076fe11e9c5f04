"""More math ops of the contract: trigonometric and hyperbolic functions, rounding toward zero,
C's ``fmod``, cumulative products and extrema, int matmul and bitwise ops (Burn's full op set).

Every op here is a `@default` written with the ops of `float_ops`/`int_ops`/`bool_ops`, so any
backend has them; conventions are those of `burn.backend.float_ops`. The defaults favour being
exact over being fast (a backend with a native kernel overrides them: burn-ndarray maps each onto
one NumPy call):

- the inverse trigonometric functions start from a small polynomial for ``atan`` on ``[0, 1]``
  and refine it with two Newton steps that use only ``sin``/``cos`` (each step cubes the error),
  then unfold the octant; ``asin``/``acos`` go through ``atan2``;
- the cumulative ops are a log-step scan (``ceil(log2 n)`` combine steps of slices and ``cat``);
- the bitwise ops on ints take the bits apart with floor division and remainder by 2 (which is
  exact in two's complement for negative values too) and put them back with Horner's rule, so
  no intermediate leaves the dtype's range.

Bitwise shifts by an amount outside ``[0, bits)`` are not part of the contract (as in Burn);
the defaults and burn-ndarray give 0 (left) and 0 or -1 (right) for amounts ``>= bits``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from burn.backend.contract import default
from burn.tensor.dtype import DType

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any  # an opaque primitive
Shape = tuple[int, ...]

_HALF_PI = math.pi / 2


def _ops(backend: object) -> Backend:
    """`backend` seen as a whole `Backend` (this mixin calls the other families' ops)."""
    return cast("Backend", backend)


def _scan(b: Backend, x: P, dim: int, combine: Callable[[P, P], P], shape: Shape, cat: Any, slc: Any) -> P:
    """Inclusive scan along `dim` (Hillis-Steele): ``out[i] = combine(x[i], out[i - 1])``.

    `combine(later, earlier)` must be associative. ``ceil(log2 n)`` steps, each one combine of
    two slices and a ``cat``; `cat`/`slc` are the kind's ``*_cat``/``*_slice`` ops.
    """
    n = shape[dim]
    full = [slice(0, m, 1) for m in shape]

    def part(start: int, stop: int) -> tuple[slice, ...]:
        region = list(full)
        region[dim] = slice(start, stop, 1)
        return tuple(region)

    step = 1
    while step < n:
        head = slc(x, part(0, step))
        tail = combine(slc(x, part(step, n)), slc(x, part(0, n - step)))
        x = cat([head, tail], dim)
        step *= 2
    return x


def _int_info(dtype: DType) -> tuple[int, bool]:
    """``(bits, signed)`` of an int dtype."""
    info = np.iinfo(dtype.numpy)
    return info.bits, info.min < 0


class MathOps:
    """Math, cumulative and bitwise ops (``float_*`` and ``int_*``); all `@default`."""

    # -- trigonometric and hyperbolic functions ----------------------------------------------
    @default
    def float_tan(self, tensor: P) -> P:
        b = _ops(self)
        return b.float_div(b.float_sin(tensor), b.float_cos(tensor))

    @default
    def float_sinh(self, tensor: P) -> P:
        b = _ops(self)
        return b.float_mul_scalar(b.float_sub(b.float_exp(tensor), b.float_exp(b.float_neg(tensor))), 0.5)

    @default
    def float_cosh(self, tensor: P) -> P:
        b = _ops(self)
        return b.float_mul_scalar(b.float_add(b.float_exp(tensor), b.float_exp(b.float_neg(tensor))), 0.5)

    def _atan_unit(self, t: P) -> P:
        """``atan(t)`` for ``0 <= t <= 1`` (NaN stays NaN) from ``sin``/``cos`` only."""
        b = _ops(self)
        # Start within 4e-3 rad: atan t ~ t (pi/4 + 0.273 (1 - t)).
        a = b.float_mul(t, b.float_add_scalar(b.float_mul_scalar(t, -0.273), math.pi / 4 + 0.273))
        for _ in range(2):
            # a + tan(atan t - a) exactly is atan t; tan(d) = d + O(d^3), so each step cubes the error.
            s, c = b.float_sin(a), b.float_cos(a)
            r = b.float_div(b.float_sub(b.float_mul(t, c), s), b.float_add(c, b.float_mul(t, s)))
            a = b.float_add(a, r)
        return a

    @default
    def float_atan2(self, lhs: P, rhs: P) -> P:
        """``atan2(lhs, rhs)``: the angle of the point ``(x=rhs, y=lhs)``, in ``[-pi, pi]``."""
        b = _ops(self)
        y, x = lhs, rhs
        ay, ax = b.float_abs(y), b.float_abs(x)
        steep = b.float_greater(ay, ax)  # |y| > |x|: take atan of |x|/|y| and reflect
        t = b.float_mask_where(b.float_div(ay, ax), steep, b.float_div(ax, ay))
        # equal magnitudes (both infinite included) give pi/4 exactly; both zero give 0
        t = b.float_mask_fill(t, b.float_equal(ay, ax), 1.0)
        t = b.float_mask_fill(t, b.bool_and(b.float_equal_elem(ay, 0.0), b.float_equal_elem(ax, 0.0)), 0.0)
        a = self._atan_unit(t)
        a = b.float_mask_where(a, steep, b.float_add_scalar(b.float_neg(a), _HALF_PI))
        a = b.float_mask_where(a, b.float_lower_elem(x, 0.0), b.float_add_scalar(b.float_neg(a), math.pi))
        return b.float_mask_where(a, b.float_lower_elem(y, 0.0), b.float_neg(a))

    @default
    def float_atan(self, tensor: P) -> P:
        b = _ops(self)
        one = b._float_scalar_like(tensor, 1.0)
        return b.float_atan2(tensor, one)

    def _float_sqrt_one_minus_square(self, x: P) -> P:
        """``sqrt(1 - x^2)`` as ``sqrt((1 - x)(1 + x))``: no cancellation near ``|x| = 1``."""
        b = _ops(self)
        return b.float_sqrt(b.float_mul(b.float_add_scalar(b.float_neg(x), 1.0), b.float_add_scalar(x, 1.0)))

    @default
    def float_asin(self, tensor: P) -> P:
        """NaN outside ``[-1, 1]``."""
        b = _ops(self)
        return b.float_atan2(tensor, self._float_sqrt_one_minus_square(tensor))

    @default
    def float_acos(self, tensor: P) -> P:
        """NaN outside ``[-1, 1]``."""
        b = _ops(self)
        return b.float_atan2(self._float_sqrt_one_minus_square(tensor), tensor)

    @default
    def float_asinh(self, tensor: P) -> P:
        b = _ops(self)
        # asinh|x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))): no cancellation near 0; odd in x.
        ax = b.float_abs(tensor)
        sq = b.float_mul(ax, ax)
        root = b.float_add_scalar(b.float_sqrt(b.float_add_scalar(sq, 1.0)), 1.0)
        out = b.float_log1p(b.float_add(ax, b.float_div(sq, root)))
        return b.float_mask_where(out, b.float_lower_elem(tensor, 0.0), b.float_neg(out))

    @default
    def float_acosh(self, tensor: P) -> P:
        """NaN below 1."""
        b = _ops(self)
        # acosh x = log1p(t + sqrt(t (t + 2))) with t = x - 1 (exact near 1).
        t = b.float_sub_scalar(tensor, 1.0)
        return b.float_log1p(b.float_add(t, b.float_sqrt(b.float_mul(t, b.float_add_scalar(t, 2.0)))))

    @default
    def float_atanh(self, tensor: P) -> P:
        """NaN outside ``[-1, 1]``, +-inf at +-1."""
        b = _ops(self)
        # atanh x = log1p(2x / (1 - x)) / 2
        ratio = b.float_div(b.float_mul_scalar(tensor, 2.0), b.float_add_scalar(b.float_neg(tensor), 1.0))
        return b.float_mul_scalar(b.float_log1p(ratio), 0.5)

    # -- rounding toward zero, C's fmod -------------------------------------------------------
    @default
    def float_trunc(self, tensor: P) -> P:
        """Round toward zero."""
        b = _ops(self)
        negative = b.float_lower_elem(tensor, 0.0)
        return b.float_mask_where(b.float_floor(tensor), negative, b.float_ceil(tensor))

    def _fmod_from_remainder(self, lhs: P, rem: P, sub_divisor: Callable[[P], P]) -> P:
        # remainder has the divisor's sign, fmod the dividend's: they differ by one divisor
        # where the remainder is nonzero and its sign is not the dividend's.
        b = _ops(self)
        wrong_sign = b.bool_not_equal(b.float_lower_elem(rem, 0.0), b.float_lower_elem(lhs, 0.0))
        fix = b.bool_and(b.float_not_equal_elem(rem, 0.0), wrong_sign)
        return b.float_mask_where(rem, fix, sub_divisor(rem))

    @default
    def float_fmod(self, lhs: P, rhs: P) -> P:
        """Remainder with the dividend's sign (C's ``fmod``, ``x - trunc(x / y) * y``); NaN for
        ``y == 0``. `float_remainder` has the divisor's sign instead."""
        b = _ops(self)
        return self._fmod_from_remainder(lhs, b.float_remainder(lhs, rhs), lambda r: b.float_sub(r, rhs))

    @default
    def float_fmod_scalar(self, lhs: P, rhs: float) -> P:
        b = _ops(self)
        rem = b.float_remainder_scalar(lhs, rhs)
        return self._fmod_from_remainder(lhs, rem, lambda r: b.float_sub_scalar(r, rhs))

    # -- cumulative ops (the dim keeps its size) ----------------------------------------------
    @default
    def float_cumprod(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        return _scan(b, tensor, dim, b.float_mul, b.float_shape(tensor), b.float_cat, b.float_slice)

    def _float_pick(self, later: P, earlier: P, better: Callable[[P, P], P]) -> P:
        # `earlier` wins where it is better, or NaN (NaN propagates, as in NumPy and PyTorch)
        b = _ops(self)
        take = b.bool_or(better(earlier, later), b.float_is_nan(earlier))
        return b.float_mask_where(later, take, earlier)

    @default
    def float_cummax(self, tensor: P, dim: int) -> P:
        """Running maximum along `dim`; a NaN propagates to the end."""
        b = _ops(self)
        combine = lambda later, earlier: self._float_pick(later, earlier, b.float_greater)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.float_shape(tensor), b.float_cat, b.float_slice)

    @default
    def float_cummin(self, tensor: P, dim: int) -> P:
        """Running minimum along `dim`; a NaN propagates to the end."""
        b = _ops(self)
        combine = lambda later, earlier: self._float_pick(later, earlier, b.float_lower)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.float_shape(tensor), b.float_cat, b.float_slice)

    @default
    def int_cumprod(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        return _scan(b, tensor, dim, b.int_mul, b.int_shape(tensor), b.int_cat, b.int_slice)

    @default
    def int_cummax(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        combine = lambda later, earlier: b.int_mask_where(later, b.int_greater(earlier, later), earlier)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.int_shape(tensor), b.int_cat, b.int_slice)

    @default
    def int_cummin(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        combine = lambda later, earlier: b.int_mask_where(later, b.int_lower(earlier, later), earlier)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.int_shape(tensor), b.int_cat, b.int_slice)

    # -- int matmul ---------------------------------------------------------------------------
    @default
    def int_matmul(self, lhs: P, rhs: P) -> P:
        """Matrix product over the last two dims (ranks >= 2; batch dims broadcast), in the int
        dtype (overflow wraps or is undefined, as for `int_mul`)."""
        b = _ops(self)
        sa, sb = b.int_shape(lhs), b.int_shape(rhs)
        if len(sa) < 2 or len(sb) < 2 or sa[-1] != sb[-2]:
            raise ValueError(f"int_matmul: shapes {sa} and {sb} do not multiply")
        # [..., m, k, 1] * [..., 1, k, n] summed over k: exact, and k m n products of memory.
        prod = b.int_mul(b.int_reshape(lhs, (*sa, 1)), b.int_reshape(rhs, (*sb[:-2], 1, *sb[-2:])))
        out = b.int_sum_dim(prod, len(b.int_shape(prod)) - 2)
        shape = b.int_shape(out)
        return b.int_reshape(out, (*shape[:-2], shape[-1]))

    # -- bitwise ops on ints (two's complement) -----------------------------------------------
    def _int_bits(self, tensor: P, bits: int) -> list[P]:
        """The `bits` low bits of `tensor` as 0/1 ints, least significant first."""
        b = _ops(self)
        out = []
        for _ in range(bits):
            out.append(b.int_remainder_scalar(tensor, 2))  # 0 or 1: the divisor's sign
            tensor = b.int_div_scalar(tensor, 2)  # floor: an arithmetic shift
        return out

    def _int_from_bits(self, bits: list[P], signed: bool) -> P:
        """Horner's rule from the top bit (weight -2^(n-1) when signed): stays in range."""
        b = _ops(self)
        out = b.int_neg(bits[-1]) if signed else bits[-1]
        for bit in reversed(bits[:-1]):
            out = b.int_add(b.int_mul_scalar(out, 2), bit)
        return out

    def _int_bitwise(self, lhs: P, rhs: P, combine: Callable[[P, P], P]) -> P:
        b = _ops(self)
        dtype = DType.from_any(np.promote_types(b.int_get_dtype(lhs).numpy, b.int_get_dtype(rhs).numpy))
        bits, signed = _int_info(dtype)
        pairs = zip(self._int_bits(lhs, bits), self._int_bits(rhs, bits), strict=True)
        return self._int_from_bits([combine(x, y) for x, y in pairs], signed)

    @default
    def int_bitwise_and(self, lhs: P, rhs: P) -> P:
        b = _ops(self)
        return self._int_bitwise(lhs, rhs, b.int_mul)

    @default
    def int_bitwise_or(self, lhs: P, rhs: P) -> P:
        b = _ops(self)
        return self._int_bitwise(lhs, rhs, lambda x, y: b.int_sub(b.int_add(x, y), b.int_mul(x, y)))

    @default
    def int_bitwise_xor(self, lhs: P, rhs: P) -> P:
        b = _ops(self)
        return self._int_bitwise(lhs, rhs, lambda x, y: b.int_remainder_scalar(b.int_add(x, y), 2))

    @default
    def int_bitwise_and_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        return b.int_bitwise_and(lhs, b._int_scalar_like(lhs, rhs))

    @default
    def int_bitwise_or_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        return b.int_bitwise_or(lhs, b._int_scalar_like(lhs, rhs))

    @default
    def int_bitwise_xor_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        return b.int_bitwise_xor(lhs, b._int_scalar_like(lhs, rhs))

    @default
    def int_bitwise_not(self, tensor: P) -> P:
        b = _ops(self)
        bits, signed = _int_info(b.int_get_dtype(tensor))
        if signed:
            return b.int_sub_scalar(b.int_neg(tensor), 1)  # ~x == -x - 1
        return b.int_sub(b._int_scalar_like(tensor, (1 << bits) - 1), tensor)  # ~x == max - x

    def _int_shift(self, lhs: P, rhs: P, step: Callable[[P], P]) -> P:
        # One conditional step per bit: where rhs > s, shift once more.
        b = _ops(self)
        bits, _ = _int_info(b.int_get_dtype(lhs))
        for s in range(bits):
            lhs = b.int_mask_where(lhs, b.int_greater_elem(rhs, s), step(lhs))
        return lhs

    @default
    def int_bitwise_left_shift(self, lhs: P, rhs: P) -> P:
        """``lhs << rhs`` element-wise; bits shifted out are lost."""
        b = _ops(self)
        return self._int_shift(lhs, rhs, lambda x: b.int_mul_scalar(x, 2))

    @default
    def int_bitwise_right_shift(self, lhs: P, rhs: P) -> P:
        """``lhs >> rhs`` element-wise: arithmetic (sign-filling) for signed dtypes."""
        b = _ops(self)
        return self._int_shift(lhs, rhs, lambda x: b.int_div_scalar(x, 2))

    @default
    def int_bitwise_left_shift_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        bits, _ = _int_info(b.int_get_dtype(lhs))
        for _ in range(min(rhs, bits)):
            lhs = b.int_mul_scalar(lhs, 2)
        return lhs

    @default
    def int_bitwise_right_shift_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        bits, _ = _int_info(b.int_get_dtype(lhs))
        for _ in range(min(rhs, bits)):
            lhs = b.int_div_scalar(lhs, 2)
        return lhs
