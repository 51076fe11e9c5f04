"""Bitwise int ops: and, or, xor (with tensors and scalars, as methods and operators), not, and
the shifts, over the full range of every declared int dtype (results are exact); float and
bool tensors refuse them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, int_range, make


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
