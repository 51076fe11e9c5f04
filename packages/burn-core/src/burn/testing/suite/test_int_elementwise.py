"""Element-wise int ops: arithmetic (floor division), scalar ops, comparisons, abs/neg/sign/clamp.

Inputs stay small so that no result leaves the narrowest dtype (int8, uint8): overflow is not
part of the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_bool, check_exact, int_range, make, rand_int, require_dtype


@dataclass(frozen=True)
class IntBinary:
    op: str
    call: Callable[[Any, Any], Any]
    ref: Callable[[np.ndarray, np.ndarray], np.ndarray]
    nonzero_rhs: bool = False


ARITH = [
    IntBinary("int_add", lambda a, b: a + b, np.add),
    IntBinary("int_sub", lambda a, b: a - b, np.subtract),
    IntBinary("int_mul", lambda a, b: a * b, np.multiply),
    IntBinary("int_div", lambda a, b: a // b, np.floor_divide, nonzero_rhs=True),
    IntBinary("int_remainder", lambda a, b: a % b, np.remainder, nonzero_rhs=True),
]

COMPARE = [
    IntBinary("int_equal", lambda a, b: a.equal(b), np.equal),
    IntBinary("int_not_equal", lambda a, b: a.not_equal(b), np.not_equal),
    IntBinary("int_greater", lambda a, b: a.greater(b), np.greater),
    IntBinary("int_greater_equal", lambda a, b: a.greater_equal(b), np.greater_equal),
    IntBinary("int_lower", lambda a, b: a.lower(b), np.less),
    IntBinary("int_lower_equal", lambda a, b: a.lower_equal(b), np.less_equal),
]

SHAPES = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((0, 3), (1, 3))]


def _operands(case: IntBinary, rng: Any, shapes: Any, dtype: DType) -> tuple[np.ndarray, np.ndarray]:
    if dtype is DType.U8:
        # Unsigned: lhs >= rhs keeps subtraction in range.
        a = rand_int(rng, shapes[0], dtype, 9, 15)
        b = rand_int(rng, shapes[1], dtype, 1 if case.nonzero_rhs else 0, 9)
        return a, b
    a = rand_int(rng, shapes[0], dtype, -9, 9)
    b = rand_int(rng, shapes[1], dtype, -9, 9)
    if case.nonzero_rhs:
        b = np.where(b == 0, 3, b).astype(dtype.numpy)
    return a, b


@covers(*(c.op for c in ARITH))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("case", ARITH, ids=lambda c: c.op)
def test_int_arithmetic(backend: Any, int_dtype: DType, case: IntBinary, shapes: Any, rng: Any) -> None:
    a, b = _operands(case, rng, shapes, int_dtype)
    out = case.call(make(backend, a, int_dtype), make(backend, b, int_dtype))
    check_exact(out, case.ref(a.astype(np.int64), b.astype(np.int64)), int_dtype, what=case.op)


@covers(*(c.op for c in COMPARE))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("case", COMPARE, ids=lambda c: c.op)
def test_int_comparison(backend: Any, int_dtype: DType, case: IntBinary, shapes: Any, rng: Any) -> None:
    a = rand_int(rng, shapes[0], int_dtype, -3, 3)
    b = rand_int(rng, shapes[1], int_dtype, -3, 3)
    out = case.call(make(backend, a, int_dtype), make(backend, b, int_dtype))
    check_bool(out, case.ref(a, b), what=case.op)


ELEM = [
    ("int_equal_elem", "equal", np.equal),
    ("int_not_equal_elem", "not_equal", np.not_equal),
    ("int_greater_elem", "greater", np.greater),
    ("int_greater_equal_elem", "greater_equal", np.greater_equal),
    ("int_lower_elem", "lower", np.less),
    ("int_lower_equal_elem", "lower_equal", np.less_equal),
]


@covers(*(op for op, _, _ in ELEM))
@pytest.mark.parametrize("shape", [(), (0,), (3, 5)], ids=str)
@pytest.mark.parametrize(("op", "method", "ref"), ELEM, ids=[e[0] for e in ELEM])
def test_int_comparison_with_scalar(
    backend: Any, int_dtype: DType, op: str, method: str, ref: Any, shape: Any, rng: Any
) -> None:
    a = rand_int(rng, shape, int_dtype, -3, 3)
    t = make(backend, a, int_dtype)
    check_bool(getattr(t, method)(1), ref(a, 1), what=f"{method}(1)")


@covers(
    "int_equal_elem",
    "int_not_equal_elem",
    "int_greater_elem",
    "int_greater_equal_elem",
    "int_lower_elem",
    "int_lower_equal_elem",
    "int_equal",
    "int_lower",
)
def test_int_comparison_operators(backend: Any, int_dtype: DType, rng: Any) -> None:
    a = rand_int(rng, (4, 5), int_dtype, -3, 3)
    b = rand_int(rng, (4, 5), int_dtype, -3, 3)
    ta, tb = make(backend, a, int_dtype), make(backend, b, int_dtype)
    for got, want, what in [
        (ta == tb, a == b, "=="),
        (ta < tb, a < b, "<"),
        (ta == 1, a == 1, "== 1"),
        (ta != 1, a != 1, "!= 1"),
        (ta > 1, a > 1, "> 1"),
        (ta >= 1, a >= 1, ">= 1"),
        (ta < 1, a < 1, "< 1"),
        (ta <= 1, a <= 1, "<= 1"),
    ]:
        check_bool(got, want, what=what)


SCALAR = [
    ("int_add_scalar", lambda t: t + 3, lambda x: x + 3),
    ("int_sub_scalar", lambda t: t - 3, lambda x: x - 3),
    ("int_mul_scalar", lambda t: t * 3, lambda x: x * 3),
    ("int_div_scalar", lambda t: t // 3, lambda x: np.floor_divide(x, 3)),
    ("int_remainder_scalar", lambda t: t % 3, lambda x: np.remainder(x, 3)),
    ("int_abs", lambda t: t.abs(), np.abs),
    ("int_neg", lambda t: -t, np.negative),
    ("int_sign", lambda t: t.sign(), np.sign),
    ("int_clamp_min", lambda t: t.clamp_min(4), lambda x: np.maximum(x, 4)),
    ("int_clamp_max", lambda t: t.clamp_max(5), lambda x: np.minimum(x, 5)),
    ("int_clamp", lambda t: t.clamp(4, 8), lambda x: np.clip(x, 4, 8)),
]
UNSIGNED_UNDEFINED = {"int_neg"}


@covers(*(op for op, _, _ in SCALAR))
@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3, 4)], ids=str)
@pytest.mark.parametrize(("op", "call", "ref"), SCALAR, ids=[s[0] for s in SCALAR])
def test_int_unary_and_scalar(
    backend: Any, int_dtype: DType, op: str, call: Any, ref: Any, shape: Any, rng: Any
) -> None:
    if int_dtype is DType.U8 and op in UNSIGNED_UNDEFINED:
        pytest.skip(f"{op} of an unsigned dtype leaves its range")
    x = (
        rand_int(rng, shape, int_dtype, -9, 9)
        if int_dtype is not DType.U8
        else rand_int(rng, shape, int_dtype, 3, 12)
    )
    expected = ref(x.astype(np.int64))
    lo, hi = int_range(int_dtype, -1000, 1000)
    assert expected.size == 0 or (expected.min() >= lo and expected.max() <= hi)
    check_exact(call(make(backend, x, int_dtype)), expected, int_dtype, what=op)


@covers("int_div", "int_remainder", "int_div_scalar", "int_remainder_scalar")
def test_int_floor_division_signs(backend: Any, int_dtype: DType) -> None:
    if int_dtype is DType.U8:
        pytest.skip("sign rules need a signed dtype")
    a = np.array([-7, 7, -7, 7, 0, 6, -6])
    b = np.array([2, -2, -2, 2, 3, 3, 3])
    ta, tb = make(backend, a, int_dtype), make(backend, b, int_dtype)
    check_exact(ta // tb, a // b, int_dtype, what="floor division")
    check_exact(ta % tb, a % b, int_dtype, what="remainder has the divisor's sign")
    check_exact(ta // -2, a // -2, int_dtype, what="floor division by scalar")
    check_exact(ta % -2, a % -2, int_dtype, what="remainder by scalar")
    check_exact(ta.div(tb), a // b, int_dtype, what="div()")
    check_exact(ta.remainder(tb), a % b, int_dtype, what="remainder()")


@covers("int_div", "int_remainder")
def test_int_division_by_zero_gives_zero(backend: Any, int_dtype: DType) -> None:
    a = np.array([7, 0, 5]) if int_dtype is DType.U8 else np.array([7, -7, 0])
    ta = make(backend, a, int_dtype)
    zero = make(backend, np.zeros(3, dtype=np.int64), int_dtype)
    check_exact(ta // zero, [0, 0, 0], int_dtype, what="x // 0")
    check_exact(ta % zero, [0, 0, 0], int_dtype, what="x % 0")


@covers("int_add", "int_mul")
def test_mixed_int_dtypes_promote_to_the_wider(backend: Any, rng: Any) -> None:
    require_dtype(backend, DType.I64)
    require_dtype(backend, DType.I32)
    a = rand_int(rng, (2, 3), DType.I32)
    b = rand_int(rng, (2, 3), DType.I64)
    ta, tb = make(backend, a, DType.I32), make(backend, b, DType.I64)
    check_exact(ta + tb, a.astype(np.int64) + b, DType.I64, what="int32 + int64")
    check_exact(ta * tb, a.astype(np.int64) * b, DType.I64, what="int32 * int64")
