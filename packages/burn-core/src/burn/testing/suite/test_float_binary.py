"""Float ops with two tensor operands: arithmetic, comparisons, matmul; broadcasting included."""

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
    check_float,
    f64,
    make,
    rand_float,
    rand_grid,
    rand_nonzero,
    require_dtype,
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
