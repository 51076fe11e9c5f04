"""Element-wise float ops with one tensor operand (and scalar ops), for every declared float dtype:
arithmetic with a scalar, exp/log/sqrt, rounding, clamps, trigonometric and hyperbolic functions
and their inverses (NaN outside their domain), ``trunc``, ``fmod`` by a scalar, and the Tensor
methods composed from them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, f64, make, rand_float, rand_nonzero

Gen = Callable[[np.random.Generator, tuple[int, ...], DType], np.ndarray]


def uniform(low: float, high: float) -> Gen:
    return lambda rng, shape, dtype: rand_float(rng, shape, dtype, low, high)


def nonzero(low: float, high: float) -> Gen:
    return lambda rng, shape, dtype: rand_nonzero(rng, shape, dtype, low, high)


def with_specials(gen: Gen, specials: list[float]) -> Gen:
    """`gen`'s values with the first elements replaced by `specials` (as many as fit)."""

    def make_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
        values = gen(rng, shape, dtype).reshape(-1)
        n = min(len(specials), values.size)
        values[:n] = np.asarray(specials[:n]).astype(dtype.numpy)
        return values.reshape(shape)

    return make_values


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.copy()


@dataclass(frozen=True)
class Unary:
    op: str
    call: Callable[[Any], Any]
    ref: Callable[[np.ndarray], np.ndarray]
    gen: Gen
    label: str = ""


HALVES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -3.5]


UNARY = [
    Unary("float_exp", lambda t: t.exp(), np.exp, uniform(-4, 4)),
    Unary("float_log", lambda t: t.log(), np.log, uniform(0.1, 10)),
    Unary("float_log1p", lambda t: t.log1p(), np.log1p, uniform(-0.5, 5)),
    Unary("float_sqrt", lambda t: t.sqrt(), np.sqrt, uniform(0, 10)),
    Unary("float_abs", lambda t: t.abs(), np.abs, uniform(-3, 3)),
    Unary("float_neg", lambda t: -t, np.negative, uniform(-3, 3)),
    Unary("float_recip", lambda t: t.recip(), lambda x: 1.0 / x, nonzero(0.25, 4)),
    Unary("float_sin", lambda t: t.sin(), np.sin, uniform(-4, 4)),
    Unary("float_cos", lambda t: t.cos(), np.cos, uniform(-4, 4)),
    Unary("float_tanh", lambda t: t.tanh(), np.tanh, uniform(-4, 4)),
    Unary("float_erf", lambda t: t.erf(), _erf, uniform(-3, 3)),
    Unary("float_round", lambda t: t.round(), np.round, with_specials(uniform(-10, 10), HALVES)),
    Unary("float_floor", lambda t: t.floor(), np.floor, with_specials(uniform(-5, 5), [-2.0, 2.0, -0.5])),
    Unary("float_ceil", lambda t: t.ceil(), np.ceil, with_specials(uniform(-5, 5), [-2.0, 2.0, -0.5])),
    Unary("float_sign", lambda t: t.sign(), np.sign, with_specials(uniform(-3, 3), [0.0, -0.0])),
    Unary("float_clamp_min", lambda t: t.clamp_min(-0.5), lambda x: np.maximum(x, -0.5), uniform(-2, 2)),
    Unary("float_clamp_max", lambda t: t.clamp_max(0.5), lambda x: np.minimum(x, 0.5), uniform(-2, 2)),
    Unary("float_clamp", lambda t: t.clamp(-0.5, 0.75), lambda x: np.clip(x, -0.5, 0.75), uniform(-2, 2)),
    Unary("float_add_scalar", lambda t: t + 1.5, lambda x: x + 1.5, uniform(-2, 2)),
    Unary("float_sub_scalar", lambda t: t - 1.5, lambda x: x - 1.5, uniform(-2, 2)),
    Unary("float_mul_scalar", lambda t: t * 1.5, lambda x: x * 1.5, uniform(-2, 2)),
    Unary("float_div_scalar", lambda t: t / 1.5, lambda x: x / 1.5, uniform(-2, 2)),
    Unary("float_remainder_scalar", lambda t: t % 1.5, lambda x: np.remainder(x, 1.5), uniform(-4, 4)),
    Unary("float_powf_scalar", lambda t: t.powf_scalar(2.5), lambda x: x**2.5, uniform(0.1, 3)),
]


SHAPES = [(), (6,), (0, 3), (2, 3, 4)]


@covers(*(case.op for case in UNARY))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", UNARY, ids=lambda c: c.op)
def test_unary(backend: Any, float_dtype: DType, case: Unary, shape: tuple[int, ...], rng: Any) -> None:
    x = case.gen(rng, shape, float_dtype)
    out = case.call(make(backend, x, float_dtype))
    check_float(out, case.ref(f64(x)), float_dtype, what=case.op)


# Exponents backends compute as products or a square root (burn.backend.fusion_exprs's b_pow, the
# xp backends' powf_scalar) and ones they leave to pow.
POW_EXPONENTS = [0.0, 1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5, -0.5, 2.5, -1.5]


@covers("float_powf_scalar")
@pytest.mark.parametrize("exponent", [e for e in POW_EXPONENTS if e == int(e)])
def test_powf_scalar_integer_exponent_on_negative_base(
    backend: Any, float_dtype: DType, exponent: float
) -> None:
    # x ** 2 on negative x is how squared errors are written: it must not give NaN.
    x = np.array([-3.0, -1.5, -0.5, 0.5, 2.0]).astype(float_dtype.numpy)
    t = make(backend, x, float_dtype)
    check_float(t**exponent, f64(x) ** exponent, float_dtype, what=f"x ** {exponent}")
    check_float(t.powf_scalar(exponent), f64(x) ** exponent, float_dtype, what=f"powf_scalar({exponent})")


def _c_pow(x: float, y: float) -> float:
    """C99's pow (Annex F) of one pair: numpy's power(x, 0.5) is its sqrt, which differs at -inf."""
    if y == 0.0:
        return 1.0
    if math.isinf(x) and x < 0 and y in (0.5, -0.5):
        return math.inf if y > 0 else 0.0
    with np.errstate(all="ignore"):
        return float(np.power(np.float64(x), np.float64(y)))


@covers("float_powf_scalar")
@pytest.mark.parametrize("exponent", POW_EXPONENTS)
def test_powf_scalar_special_values(backend: Any, float_dtype: DType, exponent: float) -> None:
    x = np.array([-0.0, 0.0, -math.inf, math.inf, math.nan, -2.0, -0.5, 0.25, 3.0, 1.0, -1.0])
    t = make(backend, x.astype(float_dtype.numpy), float_dtype)
    expected = np.array([_c_pow(v, exponent) for v in f64(x.astype(float_dtype.numpy))])
    got = t.powf_scalar(exponent)
    if exponent in (0.5, -0.5):
        # pow(-inf, +-0.5) is C's +inf / 0 and sqrt's NaN (NumPy's power takes the sqrt path):
        # the contract admits both; every other entry is exact
        keep = ~np.isneginf(x)
        at_neg_inf = f64(got.to_data().to_numpy())[~keep]
        assert all(np.isnan(v) or v == _c_pow(-math.inf, exponent) for v in at_neg_inf), at_neg_inf
        got = make(backend, got.to_data().to_numpy()[keep], float_dtype)
        expected = expected[keep]
    check_float(got, expected, float_dtype, what=f"powf_scalar({exponent})")


@covers("float_powf_scalar")
@pytest.mark.parametrize("exponent", [2.0, -0.5, 2.5])
def test_powf_scalar_of_a_strided_view(backend: Any, float_dtype: DType, exponent: float, rng: Any) -> None:
    x = rand_float(rng, (40, 300), float_dtype, 0.5, 2.0)
    t = make(backend, x, float_dtype).transpose()
    check_float(t.powf_scalar(exponent), f64(x).T ** exponent, float_dtype, what=f"x.T ** {exponent}")


@covers("float_remainder_scalar")
@pytest.mark.parametrize("divisor", [1.5, -1.5])
def test_remainder_scalar_takes_divisor_sign(backend: Any, float_dtype: DType, divisor: float) -> None:
    x = np.array([-4.0, -2.5, -1.0, 0.0, 1.0, 2.5, 4.0]).astype(float_dtype.numpy)
    out = make(backend, x, float_dtype) % divisor
    check_float(out, np.remainder(f64(x), divisor), float_dtype)


@covers(
    "float_sub_scalar", "float_div_scalar", "float_add_scalar", "float_mul_scalar", "float_neg", "float_recip"
)
def test_reflected_scalar_operators(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_nonzero(rng, (3, 4), float_dtype)
    t = make(backend, x, float_dtype)
    ref = f64(x)
    check_float(2.0 - t, 2.0 - ref, float_dtype, what="2 - t")
    check_float(2.0 / t, 2.0 / ref, float_dtype, what="2 / t")
    check_float(2.0 + t, 2.0 + ref, float_dtype, what="2 + t")
    check_float(2.0 * t, 2.0 * ref, float_dtype, what="2 * t")


@covers("float_powf", "float_powf_scalar")
def test_scalar_base_power(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (2, 5), float_dtype, -2, 2)
    check_float(2.0 ** make(backend, x, float_dtype), 2.0 ** f64(x), float_dtype, what="2 ** t")


@covers("float_div", "float_log", "float_sqrt", "float_exp", "float_div_scalar")
def test_ieee_special_values(backend: Any, float_dtype: DType) -> None:
    one = make(backend, np.array([1.0, -1.0, 0.0]), float_dtype)
    zero = make(backend, np.zeros(3), float_dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        check_float(one / zero, np.array([1.0, -1.0, 0.0]) / 0.0, float_dtype, what="x / 0")
        check_float(one / 0.0, np.array([1.0, -1.0, 0.0]) / 0.0, float_dtype, what="x / 0.0")
        check_float(zero.log(), np.log(np.zeros(3)), float_dtype, what="log(0)")
        check_float(one.sqrt(), np.sqrt(np.array([1.0, -1.0, 0.0])), float_dtype, what="sqrt(-1)")
    big = make(backend, np.array([-1e4, 1e4]), float_dtype)
    with np.errstate(over="ignore"):  # NumPy-based backends may warn; the values are what counts
        check_float(big.exp(), np.array([0.0, np.inf]), float_dtype, what="exp overflow/underflow")


# -- trigonometric and hyperbolic functions, trunc, fmod by a scalar -------------------------------
MATH_UNARY = [
    Unary("float_tan", lambda t: t.tan(), np.tan, with_specials(uniform(-1.2, 1.2), [0.0])),
    Unary("float_sinh", lambda t: t.sinh(), np.sinh, with_specials(uniform(-3, 3), [0.0])),
    Unary("float_cosh", lambda t: t.cosh(), np.cosh, with_specials(uniform(-3, 3), [0.0])),
    Unary("float_asin", lambda t: t.asin(), np.arcsin, with_specials(uniform(-0.99, 0.99), [1.0, -1.0, 0.0])),
    Unary("float_acos", lambda t: t.acos(), np.arccos, with_specials(uniform(-0.99, 0.99), [1.0, -1.0, 0.0])),
    Unary(
        "float_atan",
        lambda t: t.atan(),
        np.arctan,
        with_specials(uniform(-5, 5), [0.0, 1.0, -1.0, 40.0, np.inf]),
    ),
    Unary("float_asinh", lambda t: t.asinh(), np.arcsinh, with_specials(uniform(-5, 5), [0.0, 1e-3, -20.0])),
    Unary("float_acosh", lambda t: t.acosh(), np.arccosh, with_specials(uniform(1, 6), [1.0, 1.001, 30.0])),
    Unary("float_atanh", lambda t: t.atanh(), np.arctanh, with_specials(uniform(-0.9, 0.9), [0.0, 1e-3])),
    Unary(
        "float_trunc",
        lambda t: t.trunc(),
        np.trunc,
        with_specials(uniform(-5, 5), [-2.0, 2.0, -0.5, 0.5, -1.75]),
    ),
    Unary(
        "float_fmod_scalar",
        lambda t: t.fmod(1.5),
        lambda x: np.fmod(x, 1.5),
        with_specials(uniform(-5, 5), [-3.0]),
    ),
    Unary(
        "float_fmod_scalar",
        lambda t: t.fmod_scalar(-1.5),
        lambda x: np.fmod(x, -1.5),
        uniform(-5, 5),
        "fmod_neg",
    ),
]


MATH_SHAPES = [(), (0, 3), (2, 3, 4)]


@covers(*(case.op for case in MATH_UNARY))
@pytest.mark.parametrize("shape", MATH_SHAPES, ids=str)
@pytest.mark.parametrize("case", MATH_UNARY, ids=lambda c: c.label or c.op)
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


# -- Tensor compositions: degrees; the float-only ops refuse ints ----------------------------------
def test_deg2rad_rad2deg(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (2, 3), float_dtype, -360, 360)
    t = make(backend, x, float_dtype)
    check_float(t.deg2rad(), np.deg2rad(f64(x)), float_dtype, what="deg2rad")
    check_float(t.rad2deg(), np.rad2deg(f64(x)), float_dtype, what="rad2deg")


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
