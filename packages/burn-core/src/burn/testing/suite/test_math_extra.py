"""More element-wise math (trigonometric/hyperbolic, trunc, fmod, atan2), cumulative ops, int
matmul and bitwise ops (`burn.backend.math_ops`), and the Tensor methods composed from them.

Float ops run for every declared float dtype against NumPy in float64; int ops for every
declared int dtype against NumPy in the same dtype (bitwise results are exact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    check_bool,
    check_exact,
    check_float,
    f64,
    int_range,
    make,
    rand_float,
    rand_int,
    rand_nonzero,
)

Gen = Callable[[np.random.Generator, tuple[int, ...], DType], np.ndarray]


def uniform(low: float, high: float, specials: tuple[float, ...] = ()) -> Gen:
    """Uniform values, the first ones replaced by `specials` (as many as fit)."""

    def gen(rng: np.random.Generator, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
        values = rand_float(rng, shape, dtype, low, high).reshape(-1)
        n = min(len(specials), values.size)
        values[:n] = np.asarray(specials[:n]).astype(dtype.numpy)
        return values.reshape(shape)

    return gen


@dataclass(frozen=True)
class Unary:
    op: str
    call: Callable[[Any], Any]
    ref: Callable[[np.ndarray], np.ndarray]
    gen: Gen
    label: str = ""


UNARY = [
    Unary("float_tan", lambda t: t.tan(), np.tan, uniform(-1.2, 1.2, (0.0,))),
    Unary("float_sinh", lambda t: t.sinh(), np.sinh, uniform(-3, 3, (0.0,))),
    Unary("float_cosh", lambda t: t.cosh(), np.cosh, uniform(-3, 3, (0.0,))),
    Unary("float_asin", lambda t: t.asin(), np.arcsin, uniform(-0.99, 0.99, (1.0, -1.0, 0.0))),
    Unary("float_acos", lambda t: t.acos(), np.arccos, uniform(-0.99, 0.99, (1.0, -1.0, 0.0))),
    Unary("float_atan", lambda t: t.atan(), np.arctan, uniform(-5, 5, (0.0, 1.0, -1.0, 40.0, np.inf))),
    Unary("float_asinh", lambda t: t.asinh(), np.arcsinh, uniform(-5, 5, (0.0, 1e-3, -20.0))),
    Unary("float_acosh", lambda t: t.acosh(), np.arccosh, uniform(1, 6, (1.0, 1.001, 30.0))),
    Unary("float_atanh", lambda t: t.atanh(), np.arctanh, uniform(-0.9, 0.9, (0.0, 1e-3))),
    Unary("float_trunc", lambda t: t.trunc(), np.trunc, uniform(-5, 5, (-2.0, 2.0, -0.5, 0.5, -1.75))),
    Unary("float_fmod_scalar", lambda t: t.fmod(1.5), lambda x: np.fmod(x, 1.5), uniform(-5, 5, (-3.0,))),
    Unary(
        "float_fmod_scalar",
        lambda t: t.fmod_scalar(-1.5),
        lambda x: np.fmod(x, -1.5),
        uniform(-5, 5),
        "fmod_neg",
    ),
]

SHAPES = [(), (0, 3), (2, 3, 4)]


@covers(*(case.op for case in UNARY))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", UNARY, ids=lambda c: c.label or c.op)
def test_unary_math(backend: Any, float_dtype: DType, case: Unary, shape: tuple[int, ...], rng: Any) -> None:
    x = case.gen(rng, shape, float_dtype)
    out = case.call(make(backend, x, float_dtype))
    check_float(out, case.ref(f64(x)), float_dtype, what=case.op)


@covers("float_asin", "float_acos", "float_acosh", "float_atanh")
def test_inverse_functions_outside_their_domain_give_nan(backend: Any, float_dtype: DType) -> None:
    with np.errstate(invalid="ignore", divide="ignore"):  # NumPy-based backends may warn
        x = make(backend, np.array([1.5, -2.0]), float_dtype)
        for name in ("asin", "acos", "atanh"):
            check_float(getattr(x, name)(), [np.nan, np.nan], float_dtype, what=name)
        check_float(make(backend, np.array([0.5, -1.0]), float_dtype).acosh(), [np.nan, np.nan], float_dtype)
        check_float(make(backend, np.array([1.0, -1.0]), float_dtype).atanh(), [np.inf, -np.inf], float_dtype)


ATAN2_POINTS = np.array(
    [  # (y, x): every quadrant, the axes, both zeros, equal magnitudes, infinities
        [1.0, 1.0], [1.0, -1.0], [-1.0, -1.0], [-1.0, 1.0], [0.0, 1.0], [0.0, -1.0], [1.0, 0.0],
        [-1.0, 0.0], [0.0, 0.0], [3.0, 0.5], [-0.5, -3.0], [2.5, 2.5], [np.inf, 1.0], [1.0, np.inf],
        [np.inf, np.inf], [-2.0, -np.inf],
    ]
)


@covers("float_atan2")
def test_atan2_quadrants_axes_and_infinities(backend: Any, float_dtype: DType) -> None:
    y = ATAN2_POINTS[:, 0].astype(float_dtype.numpy)
    x = ATAN2_POINTS[:, 1].astype(float_dtype.numpy)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = make(backend, y, float_dtype).atan2(make(backend, x, float_dtype))
    check_float(out, np.arctan2(f64(y), f64(x)), float_dtype, what="atan2")


@covers("float_atan2")
@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((), (2, 2)), ((2, 1, 3), (4, 1))], ids=str)
def test_atan2_broadcasts(backend: Any, float_dtype: DType, shapes: Any, rng: Any) -> None:
    y = rand_float(rng, shapes[0], float_dtype, -3, 3)
    x = rand_float(rng, shapes[1], float_dtype, -3, 3)
    out = make(backend, y, float_dtype).atan2(make(backend, x, float_dtype))
    check_float(out, np.arctan2(f64(y), f64(x)), float_dtype, what="atan2")


FMOD_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2, 2)), ((0, 3), (1, 3))]


@covers("float_fmod", "float_fmod_scalar")
@pytest.mark.parametrize("shapes", FMOD_SHAPES, ids=str)
def test_fmod_takes_the_dividend_sign(backend: Any, float_dtype: DType, shapes: Any, rng: Any) -> None:
    a = rand_float(rng, shapes[0], float_dtype, -6, 6)
    d = rand_nonzero(rng, shapes[1], float_dtype, 0.5, 2.0)
    out = make(backend, a, float_dtype).fmod(make(backend, d, float_dtype))
    check_float(out, np.fmod(f64(a), f64(d)), float_dtype, what="fmod")
    exact = np.array([-3.5, 3.5, -4.0, 4.0, 0.5, -0.5]).astype(float_dtype.numpy)
    t = make(backend, exact, float_dtype)
    for divisor in (2.0, -2.0):
        check_float(t.fmod(divisor), np.fmod(f64(exact), divisor), float_dtype, what=f"fmod {divisor}")
        check_float(t.fmod(make(backend, np.array([divisor]), float_dtype)), np.fmod(f64(exact), divisor),
                    float_dtype, what=f"fmod tensor {divisor}")


@covers("float_fmod", "float_fmod_scalar")
def test_fmod_by_zero_is_nan(backend: Any, float_dtype: DType) -> None:
    with np.errstate(invalid="ignore", divide="ignore"):
        t = make(backend, np.array([1.0, -2.0]), float_dtype)
        check_float(t.fmod(0.0), [np.nan, np.nan], float_dtype, what="fmod(x, 0.0)")
        check_float(t.fmod(make(backend, np.zeros(2), float_dtype)), [np.nan, np.nan], float_dtype)


# -- cumulative ops ----------------------------------------------------------------------------
CUM_CASES = [((7,), 0), ((3, 4), 0), ((2, 3, 4), 2), ((0, 3), 0), ((1, 5), 1)]

FLOAT_CUM = [
    ("float_cumprod", lambda t, d: t.cumprod(d), lambda x, d: np.cumprod(x, axis=d)),
    ("float_cummax", lambda t, d: t.cummax(d), lambda x, d: np.maximum.accumulate(x, axis=d)),
    ("float_cummin", lambda t, d: t.cummin(d), lambda x, d: np.minimum.accumulate(x, axis=d)),
]


@covers(*(c[0] for c in FLOAT_CUM))
@pytest.mark.parametrize("case", CUM_CASES, ids=str)
@pytest.mark.parametrize("op", FLOAT_CUM, ids=lambda c: c[0])
def test_float_cumulative(backend: Any, float_dtype: DType, op: Any, case: Any, rng: Any) -> None:
    name, call, ref = op
    shape, dim = case
    # factors near 1 keep products in range; the sign flips exercise cumprod
    x = (rand_float(rng, shape, float_dtype, 0.6, 1.5) * np.where(rng.random(shape) < 0.3, -1, 1)).astype(
        float_dtype.numpy
    )
    out = call(make(backend, x, float_dtype), dim)
    check_float(out, ref(f64(x), dim), float_dtype, terms=max(1, shape[dim]), what=name)


@covers("float_cummax", "float_cummin")
def test_cummax_cummin_propagate_nan(backend: Any, float_dtype: DType) -> None:
    x = np.array([[3.0, 1.0, np.nan, 5.0, 0.5], [1.0, 2.0, 0.0, 3.0, -1.0]]).astype(float_dtype.numpy)
    t = make(backend, x, float_dtype)
    check_float(t.cummax(1), np.maximum.accumulate(f64(x), axis=1), float_dtype, what="cummax")
    check_float(t.cummin(1), np.minimum.accumulate(f64(x), axis=1), float_dtype, what="cummin")
    check_float(t.cummax(-2), np.maximum.accumulate(f64(x), axis=0), float_dtype, what="cummax dim -2")


INT_CUM = [
    ("int_cumprod", lambda t, d: t.cumprod(d), lambda x, d: np.cumprod(x, axis=d, dtype=x.dtype)),
    ("int_cummax", lambda t, d: t.cummax(d), lambda x, d: np.maximum.accumulate(x, axis=d)),
    ("int_cummin", lambda t, d: t.cummin(d), lambda x, d: np.minimum.accumulate(x, axis=d)),
]


@covers(*(c[0] for c in INT_CUM))
@pytest.mark.parametrize("case", [((6,), 0), ((3, 4), 1), ((2, 3, 2), 0), ((0, 3), 0)], ids=str)
@pytest.mark.parametrize("op", INT_CUM, ids=lambda c: c[0])
def test_int_cumulative(backend: Any, int_dtype: DType, op: Any, case: Any, rng: Any) -> None:
    name, call, ref = op
    shape, dim = case
    low = -2 if name == "int_cumprod" else -50
    x = rand_int(rng, shape, int_dtype, low, -low)  # |products| <= 2^6: in every dtype's range
    check_exact(call(make(backend, x, int_dtype), dim), ref(x, dim), int_dtype, what=name)


# -- int matmul --------------------------------------------------------------------------------
@covers("int_matmul")
@pytest.mark.parametrize(
    "shapes", [((2, 3), (3, 4)), ((2, 2, 3), (3, 2)), ((1, 2, 2, 3), (3, 1, 3, 2)), ((2, 0), (0, 3))], ids=str
)
def test_int_matmul(backend: Any, int_dtype: DType, shapes: Any, rng: Any) -> None:
    a = rand_int(rng, shapes[0], int_dtype, -3, 3)  # |sums| <= 27: in every dtype's range
    b = rand_int(rng, shapes[1], int_dtype, -3, 3)
    out = make(backend, a, int_dtype) @ make(backend, b, int_dtype)
    expected = np.matmul(a.astype(np.int64), b.astype(np.int64))
    check_exact(out, expected, int_dtype, what="int matmul")
    check_exact(make(backend, a, int_dtype).matmul(make(backend, b, int_dtype)), expected, int_dtype)


@covers("int_matmul")
def test_int_matmul_shape_errors(backend: Any) -> None:
    from burn.errors import ShapeError

    dtype = backend.int_dtype
    a = make(backend, np.ones((2, 3), dtype=np.int64), dtype)
    with pytest.raises(ShapeError, match="inner dims"):
        a @ a
    with pytest.raises(ShapeError, match="rank >= 2"):
        a @ make(backend, np.ones((3,), dtype=np.int64), dtype)


# -- bitwise ops -------------------------------------------------------------------------------
def _full_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    lo, hi = int_range(dtype, -(2**40), 2**40)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype.numpy)


BITWISE = [  # (op, operator, method, reference)
    ("int_bitwise_and", lambda a, b: a & b, lambda a, b: a.bitwise_and(b), np.bitwise_and),
    ("int_bitwise_or", lambda a, b: a | b, lambda a, b: a.bitwise_or(b), np.bitwise_or),
    ("int_bitwise_xor", lambda a, b: a ^ b, lambda a, b: a.bitwise_xor(b), np.bitwise_xor),
]
BIT_SHAPES = [((3, 4), (3, 4)), ((2, 3), (3,)), ((), (2, 3)), ((0, 3), (1, 3))]


@covers(*(c[0] for c in BITWISE))
@pytest.mark.parametrize("shapes", BIT_SHAPES, ids=str)
@pytest.mark.parametrize("case", BITWISE, ids=lambda c: c[0])
def test_bitwise_binary(backend: Any, int_dtype: DType, case: Any, shapes: Any, rng: Any) -> None:
    name, operator, method, ref = case
    a = _full_range(rng, shapes[0], int_dtype)
    b = _full_range(rng, shapes[1], int_dtype)
    ta, tb = make(backend, a, int_dtype), make(backend, b, int_dtype)
    check_exact(operator(ta, tb), ref(a, b), int_dtype, what=name)
    check_exact(method(ta, tb), ref(a, b), int_dtype, what=name)


@covers("int_bitwise_and_scalar", "int_bitwise_or_scalar", "int_bitwise_xor_scalar", "int_bitwise_not")
def test_bitwise_scalar_and_not(backend: Any, int_dtype: DType, rng: Any) -> None:
    a = _full_range(rng, (3, 5), int_dtype)
    t = make(backend, a, int_dtype)
    lo, hi = int_range(int_dtype, -100, 100)
    for s in (0, 5, lo, hi):
        typed = np.array(s, dtype=int_dtype.numpy)
        check_exact(t & s, a & typed, int_dtype, what=f"& {s}")
        check_exact(s & t, a & typed, int_dtype, what=f"{s} &")
        check_exact(t.bitwise_and_scalar(s), a & typed, int_dtype, what=f"and_scalar {s}")
        check_exact(t.bitwise_or_scalar(s), a | typed, int_dtype, what=f"or_scalar {s}")
        check_exact(t | s, a | typed, int_dtype, what=f"| {s}")
        check_exact(t.bitwise_xor_scalar(s), a ^ typed, int_dtype, what=f"xor_scalar {s}")
        check_exact(t ^ s, a ^ typed, int_dtype, what=f"^ {s}")
    check_exact(~t, np.invert(a), int_dtype, what="~")
    check_exact(t.bitwise_not(), np.invert(a), int_dtype, what="bitwise_not")


@covers("int_bitwise_left_shift", "int_bitwise_right_shift")
@pytest.mark.parametrize("shapes", BIT_SHAPES, ids=str)
def test_bitwise_shifts(backend: Any, int_dtype: DType, shapes: Any, rng: Any) -> None:
    bits = np.iinfo(int_dtype.numpy).bits
    a = _full_range(rng, shapes[0], int_dtype)
    s = rng.integers(0, bits, size=shapes[1]).astype(int_dtype.numpy)  # amounts in [0, bits)
    ta, ts = make(backend, a, int_dtype), make(backend, s, int_dtype)
    # bits shifted out of the left are lost (two's complement wrap); right shifts fill the sign
    check_exact(ta << ts, np.left_shift(a, s), int_dtype, what="<<")
    check_exact(ta.bitwise_left_shift(ts), np.left_shift(a, s), int_dtype, what="bitwise_left_shift")
    check_exact(ta >> ts, np.right_shift(a, s), int_dtype, what=">>")
    check_exact(ta.bitwise_right_shift(ts), np.right_shift(a, s), int_dtype, what="bitwise_right_shift")


@covers("int_bitwise_left_shift_scalar", "int_bitwise_right_shift_scalar")
def test_bitwise_shift_by_scalar(backend: Any, int_dtype: DType, rng: Any) -> None:
    bits = np.iinfo(int_dtype.numpy).bits
    a = _full_range(rng, (4, 3), int_dtype)
    t = make(backend, a, int_dtype)
    for s in (0, 1, 3, bits - 1):
        check_exact(t << s, np.left_shift(a, s), int_dtype, what=f"<< {s}")
        check_exact(t.bitwise_left_shift_scalar(s), np.left_shift(a, s), int_dtype, what=f"left {s}")
        check_exact(t >> s, np.right_shift(a, s), int_dtype, what=f">> {s}")
        check_exact(t.bitwise_right_shift_scalar(s), np.right_shift(a, s), int_dtype, what=f"right {s}")
    with pytest.raises(ValueError, match="negative shift"):
        t << -1


def test_bitwise_ops_refuse_float_and_bool(backend: Any) -> None:
    from burn.errors import KindError

    f = make(backend, np.ones(2), backend.float_dtype)
    with pytest.raises(KindError, match="bitwise_and: expects an Int tensor"):
        f.bitwise_and(f)
    with pytest.raises(KindError, match="bitwise_left_shift"):
        f << 1
    with pytest.raises(KindError, match="bool_not"):
        _ = ~f  # not an Int tensor: `~` is Bool logic, which Float tensors do not have
    with pytest.raises(KindError, match="bitwise_not"):
        make(backend, np.ones(2, dtype=bool), DType.BOOL).bitwise_not()


def test_bool_operators_stay_logical(backend: Any) -> None:
    m = make(backend, np.array([True, False, True]), DType.BOOL)
    n = make(backend, np.array([True, True, False]), DType.BOOL)
    check_bool(m & n, [True, False, False])
    check_bool(m | n, [True, True, True])
    check_bool(m ^ n, [False, True, True])
    check_bool(~m, [False, True, False])


# -- Tensor compositions: degrees, square, hypot, finiteness ------------------------------------
def test_deg2rad_rad2deg(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (2, 3), float_dtype, -360, 360)
    t = make(backend, x, float_dtype)
    check_float(t.deg2rad(), np.deg2rad(f64(x)), float_dtype, what="deg2rad")
    check_float(t.rad2deg(), np.rad2deg(f64(x)), float_dtype, what="rad2deg")


def test_square(backend: Any, float_dtype: DType, int_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (2, 3), float_dtype, -3, 3)
    check_float(make(backend, x, float_dtype).square(), f64(x) ** 2, float_dtype, what="square")
    i = rand_int(rng, (2, 3), int_dtype, -9, 9)
    check_exact(make(backend, i, int_dtype).square(), i.astype(np.int64) ** 2, int_dtype, what="int square")


def test_hypot(backend: Any, float_dtype: DType, rng: Any) -> None:
    a = rand_float(rng, (2, 3), float_dtype, -3, 3)
    b = rand_float(rng, (3,), float_dtype, -3, 3)
    ta = make(backend, a, float_dtype)
    check_float(ta.hypot(make(backend, b, float_dtype)), np.hypot(f64(a), f64(b)), float_dtype, what="hypot")
    check_float(ta.hypot(-1.5), np.hypot(f64(a), 1.5), float_dtype, what="hypot scalar")


def test_is_finite(backend: Any, float_dtype: DType, int_dtype: DType) -> None:
    x = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3.0]).astype(float_dtype.numpy)
    check_bool(make(backend, x, float_dtype).is_finite(), np.isfinite(f64(x)), what="is_finite")
    check_bool(make(backend, np.array([1, 0, 2]), int_dtype).is_finite(), [True, True, True], what="int")


def test_float_only_math_refuses_int(backend: Any) -> None:
    from burn.errors import KindError

    i = make(backend, np.array([1, 2]), backend.int_dtype)
    for name in ("tan", "atanh", "trunc", "deg2rad"):
        with pytest.raises(KindError, match=f"{name}: expects a Float tensor"):
            getattr(i, name)()
    with pytest.raises(KindError, match="fmod"):
        i.fmod(2)
    with pytest.raises(TypeError, match="atan2"):
        make(backend, np.ones(2), backend.float_dtype).atan2(1.0)
