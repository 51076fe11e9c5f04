"""Float ops with two tensor operands: arithmetic, comparisons, closeness, ``atan2``, ``fmod``,
``hypot``, matmul and the functional `linear`; broadcasting included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    check_bool,
    check_float,
    f64,
    float_input,
    make,
    rand_float,
    rand_grid,
    rand_nonzero,
    require_dtype,
    tensor_module,
)


@dataclass(frozen=True)
class Binary:
    op: str
    call: Callable[[Any, Any], Any]
    ref: Callable[[np.ndarray, np.ndarray], np.ndarray]
    lhs: str = "any"  # "any": uniform in [-2, 2); "pos": in [0.5, 2); "grid": exact halves with ties
    rhs: str = "any"  # the same, plus "nonzero": |x| in [0.5, 2) with a random sign


ARITH = [
    Binary("float_add", lambda a, b: a + b, np.add),
    Binary("float_sub", lambda a, b: a - b, np.subtract),
    Binary("float_mul", lambda a, b: a * b, np.multiply),
    Binary("float_div", lambda a, b: a / b, np.divide, rhs="nonzero"),
    Binary("float_remainder", lambda a, b: a % b, np.remainder, rhs="nonzero"),
    Binary("float_powf", lambda a, b: a.powf(b), np.power, lhs="pos"),
]


COMPARE = [
    Binary("float_equal", lambda a, b: a.equal(b), np.equal, "grid", "grid"),
    Binary("float_not_equal", lambda a, b: a.not_equal(b), np.not_equal, "grid", "grid"),
    Binary("float_greater", lambda a, b: a.greater(b), np.greater, "grid", "grid"),
    Binary("float_greater_equal", lambda a, b: a.greater_equal(b), np.greater_equal, "grid", "grid"),
    Binary("float_lower", lambda a, b: a.lower(b), np.less, "grid", "grid"),
    Binary("float_lower_equal", lambda a, b: a.lower_equal(b), np.less_equal, "grid", "grid"),
]


# Pairs of shapes: equal, trailing broadcast, both sides broadcast, rank 0, size 0, rank 4 vs 3.
SHAPES = [
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((), (2, 3)),
    ((0, 3), (1, 3)),
    ((5, 1, 1, 2), (1, 3, 1)),
]


def values(kind: str, rng: Any, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    if kind == "pos":
        return rand_float(rng, shape, dtype, 0.5, 2.0)
    if kind == "nonzero":
        return rand_nonzero(rng, shape, dtype)
    if kind == "grid":
        return rand_grid(rng, shape, dtype)
    return rand_float(rng, shape, dtype)


@covers(*(case.op for case in ARITH))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("case", ARITH, ids=lambda c: c.op)
def test_arithmetic(backend: Any, float_dtype: DType, case: Binary, shapes: Any, rng: Any) -> None:
    a = values(case.lhs, rng, shapes[0], float_dtype)
    b = values(case.rhs, rng, shapes[1], float_dtype)
    out = case.call(make(backend, a, float_dtype), make(backend, b, float_dtype))
    check_float(out, case.ref(f64(a), f64(b)), float_dtype, what=case.op)


# Broadcasts of common shapes whose innermost dim (after collapsing) is long enough for
# burn-opencl's grid layout: work-groups 256, 64 and 16 wide with ragged edges on both axes, the
# dims above the two innermost divided out, and (below) transposed operands.
LAYOUTS = [
    ((6, 512), (512,)),  # trailing-dim bias, 256-wide groups
    ((6, 300), (300,)),  # trailing-dim bias, 64-wide groups, ragged edge
    ((40, 16), (40, 1)),  # leading-dim rows, 16-wide groups, ragged axis 1
    ((3, 5, 70), (3, 1, 70)),  # a middle dim
    ((2, 3, 4, 10), (2, 1, 4, 1)),  # rank 4 after collapsing
    ((7, 9), (1, 1)),  # scalar-like
    ((300,), (4, 1, 1)),  # the left operand broadcast
]


@covers("float_add", "float_sub", "float_mul", "float_powf")
@pytest.mark.parametrize("shapes", LAYOUTS, ids=str)
def test_broadcast_layouts(backend: Any, float_dtype: DType, shapes: Any, rng: Any) -> None:
    a = values("pos", rng, shapes[0], float_dtype)
    b = values("any", rng, shapes[1], float_dtype)
    ta, tb = make(backend, a, float_dtype), make(backend, b, float_dtype)
    x, y = f64(a), f64(b)
    check_float(ta + tb, x + y, float_dtype, what="a + b")
    check_float(tb - ta, y - x, float_dtype, what="b - a")
    check_float(ta * tb * tb, x * y * y, float_dtype, terms=2, what="a * b * b")
    check_float(ta.powf(tb), np.power(x, y), float_dtype, what="a ** b")


@covers("float_add", "float_mul")
def test_broadcast_of_transposed_operands(backend: Any, float_dtype: DType, rng: Any) -> None:
    a = values("any", rng, (300, 20), float_dtype)
    b = values("any", rng, (20, 1), float_dtype)
    ta = make(backend, a, float_dtype).transpose()
    out = ta + make(backend, b, float_dtype)
    check_float(out, f64(a).T + f64(b), float_dtype, what="a.T + b")
    check_float(out * ta, (f64(a).T + f64(b)) * f64(a).T, float_dtype, terms=2, what="(a.T + b) * a.T")


@covers(*(case.op for case in COMPARE))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("case", COMPARE, ids=lambda c: c.op)
def test_comparison(backend: Any, float_dtype: DType, case: Binary, shapes: Any, rng: Any) -> None:
    a = values(case.lhs, rng, shapes[0], float_dtype)
    b = values(case.rhs, rng, shapes[1], float_dtype)
    out = case.call(make(backend, a, float_dtype), make(backend, b, float_dtype))
    check_bool(out, case.ref(f64(a), f64(b)), what=case.op)


ELEM = [
    ("float_equal_elem", "equal", np.equal),
    ("float_not_equal_elem", "not_equal", np.not_equal),
    ("float_greater_elem", "greater", np.greater),
    ("float_greater_equal_elem", "greater_equal", np.greater_equal),
    ("float_lower_elem", "lower", np.less),
    ("float_lower_equal_elem", "lower_equal", np.less_equal),
]


@covers(*(op for op, _, _ in ELEM))
@pytest.mark.parametrize("shape", [(), (0,), (3, 5)], ids=str)
@pytest.mark.parametrize(("op", "method", "ref"), ELEM, ids=[e[0] for e in ELEM])
def test_comparison_with_scalar(
    backend: Any, float_dtype: DType, op: str, method: str, ref: Any, shape: tuple[int, ...], rng: Any
) -> None:
    a = rand_grid(rng, shape, float_dtype)
    out = getattr(make(backend, a, float_dtype), method)(0.5)
    check_bool(out, ref(f64(a), 0.5), what=f"{method}(0.5)")


@covers(
    "float_equal",
    "float_not_equal",
    "float_greater",
    "float_greater_equal",
    "float_lower",
    "float_lower_equal",
    "float_equal_elem",
    "float_not_equal_elem",
    "float_greater_elem",
    "float_greater_equal_elem",
    "float_lower_elem",
    "float_lower_equal_elem",
)
def test_comparison_operators(backend: Any, float_dtype: DType, rng: Any) -> None:
    a = rand_grid(rng, (4, 5), float_dtype)
    b = rand_grid(rng, (4, 5), float_dtype)
    ta, tb = make(backend, a, float_dtype), make(backend, b, float_dtype)
    x, y = f64(a), f64(b)
    for got, want, what in [
        (ta == tb, x == y, "=="),
        (ta != tb, x != y, "!="),
        (ta < tb, x < y, "<"),
        (ta <= tb, x <= y, "<="),
        (ta > tb, x > y, ">"),
        (ta >= tb, x >= y, ">="),
        (ta == 0.5, x == 0.5, "== 0.5"),
        (ta != 0.5, x != 0.5, "!= 0.5"),
        (ta < 0.5, x < 0.5, "< 0.5"),
        (ta <= 0.5, x <= 0.5, "<= 0.5"),
        (ta > 0.5, x > 0.5, "> 0.5"),
        (ta >= 0.5, x >= 0.5, ">= 0.5"),
    ]:
        check_bool(got, want, what=what)


@covers("float_equal", "float_not_equal", "float_is_nan", "float_is_inf")
def test_nan_and_inf(backend: Any, float_dtype: DType) -> None:
    raw = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, np.nan])
    t = make(backend, raw, float_dtype)
    check_bool(t.is_nan(), np.isnan(raw), what="is_nan")
    check_bool(t.is_inf(), np.isinf(raw), what="is_inf")
    check_bool(t.equal(t), raw == raw, what="NaN != NaN under equal")
    check_bool(t.not_equal(t), raw != raw, what="NaN != NaN under not_equal")


@covers("float_is_nan", "float_is_inf")
@pytest.mark.parametrize("shape", [(), (0,), (2, 3, 2)], ids=str)
def test_is_nan_is_inf_shapes(backend: Any, float_dtype: DType, shape: tuple[int, ...], rng: Any) -> None:
    raw = rng.choice(np.array([0.0, np.nan, np.inf, -np.inf, -2.0]), size=shape)
    t = make(backend, raw, float_dtype)
    check_bool(t.is_nan(), np.isnan(raw), what="is_nan")
    check_bool(t.is_inf(), np.isinf(raw), what="is_inf")


MATMUL_SHAPES = [
    ((2, 3), (3, 4)),
    ((1, 1), (1, 1)),
    ((4, 5, 3), (4, 3, 2)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((3, 0), (0, 2)),
    ((0, 3), (3, 2)),
    ((2, 16, 33), (33, 17)),
]


@covers("float_matmul")
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(backend: Any, float_dtype: DType, shapes: Any, rng: Any) -> None:
    a = rand_float(rng, shapes[0], float_dtype, -1, 1)
    b = rand_float(rng, shapes[1], float_dtype, -1, 1)
    out = make(backend, a, float_dtype) @ make(backend, b, float_dtype)
    check_float(out, np.matmul(f64(a), f64(b)), float_dtype, terms=shapes[0][-1], what="matmul")
    out2 = make(backend, a, float_dtype).matmul(make(backend, b, float_dtype))
    check_float(out2, np.matmul(f64(a), f64(b)), float_dtype, terms=shapes[0][-1], what="matmul()")


@covers("float_add", "float_mul", "float_sub", "float_div", "float_matmul")
def test_mixed_float_dtypes_promote_to_the_wider(backend: Any, rng: Any) -> None:
    require_dtype(backend, DType.F32)
    require_dtype(backend, DType.F64)
    a = rand_float(rng, (2, 3), DType.F32)
    b = rand_nonzero(rng, (2, 3), DType.F64)
    ta, tb = make(backend, a, DType.F32), make(backend, b, DType.F64)
    for got, want, what in [
        (ta + tb, f64(a) + b, "+"),
        (tb - ta, b - f64(a), "-"),
        (ta * tb, f64(a) * b, "*"),
        (ta / tb, f64(a) / b, "/"),
    ]:
        check_float(got, want, DType.F64, what=f"float32 {what} float64")  # computed in float64


# -- atan2, fmod, hypot -----------------------------------------------------------------------------
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


def test_hypot(backend: Any, float_dtype: DType, rng: Any) -> None:
    a = rand_float(rng, (2, 3), float_dtype, -3, 3)
    b = rand_float(rng, (3,), float_dtype, -3, 3)
    ta = make(backend, a, float_dtype)
    check_float(ta.hypot(make(backend, b, float_dtype)), np.hypot(f64(a), f64(b)), float_dtype, what="hypot")
    check_float(ta.hypot(-1.5), np.hypot(f64(a), 1.5), float_dtype, what="hypot scalar")


# -- closeness ---------------------------------------------------------------------------------
def test_is_close_and_all_close(backend: Any, float_dtype: DType) -> None:
    a = np.array([1.0, 1.0, 0.0, np.inf, -np.inf, np.nan, np.inf, 100.0])
    b = np.array([1.0, 1.5, 1e-9, np.inf, np.inf, np.nan, 1.0, 100.0 + 1e-4])
    ta, tb = make(backend, a, float_dtype), make(backend, b, float_dtype)
    ra, rb = f64(a.astype(float_dtype.numpy)), f64(b.astype(float_dtype.numpy))
    with np.errstate(invalid="ignore"):
        check_bool(ta.is_close(tb), np.isclose(ra, rb, rtol=1e-5, atol=1e-8), what="is_close")
        check_bool(ta.is_close(tb, rtol=0.6), np.isclose(ra, rb, rtol=0.6, atol=1e-8), what="rtol")
        check_bool(ta.is_close(1.0, atol=0.25), np.isclose(ra, 1.0, rtol=1e-5, atol=0.25), what="scalar")
        check_bool(ta.is_close(np.inf), np.isclose(ra, np.inf), what="scalar inf")
    assert ta[:2].all_close(ta[:2])
    assert not ta.all_close(tb)
    assert ta[:1].all_close(tb[:1] + 1e-6, rtol=1e-3)
    c = make(backend, np.array([[1.0, 2.0]]), float_dtype)
    assert c.all_close(make(backend, np.array([1.0, 2.0]), float_dtype))  # broadcasting


def test_is_close_refuses_int(backend: Any) -> None:
    from burn.errors import KindError

    i = make(backend, np.array([1, 2]), backend.int_dtype)
    with pytest.raises(KindError, match="is_close: expects a Float tensor"):
        i.is_close(i)


# -- the functional linear (a composition) ----------------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 4, 3)], ids=str)
def test_linear(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    x, tx = float_input(backend, rng, float_dtype, shape)
    w, tw = float_input(backend, rng, float_dtype, (3, 5))
    bias, tb = float_input(backend, rng, float_dtype, (5,))
    F = tensor_module()
    check_float(F.linear(tx, tw, tb), x @ w + bias, float_dtype, terms=4, what="linear")
    check_float(F.linear(tx, tw), x @ w, float_dtype, terms=4, what="linear without bias")
    with pytest.raises(ShapeError, match=r"weight must be \[d_input=3, d_output\]"):
        F.linear(tx, make(backend, np.zeros((5, 3)), float_dtype))
