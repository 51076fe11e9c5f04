"""Binary ops on operands of two dtypes of one kind: the result has the wider dtype.

The contract (`burn.backend.ops.float`): "when the operands' dtypes differ, the result has the
wider one" — whatever the operands' ranks. A 0-d operand does not lose its dtype (PyTorch's
promotion lets a 0-d tensor lose: ``float32[3] + float64[]`` is float32 there, float64 here).
Values are chosen so that computing in the narrower dtype shows in the result, not only in its
dtype. Only pairs of dtypes the backend declares are checked.
"""

from __future__ import annotations

from collections.abc import Callable
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
    make,
    rand_float,
    rand_grid,
    rand_nonzero,
)

# (narrow, wide): pairs where "the wider one" is unambiguous (float16 vs bfloat16 is not).
FLOAT_PAIRS = [
    (DType.F32, DType.F64),
    (DType.F16, DType.F32),
    (DType.BF16, DType.F32),
    (DType.F16, DType.F64),
]
# explicit mantissa bits (np.finfo does not know bfloat16)
MANTISSA = {DType.F64: 52, DType.F32: 23, DType.F16: 10, DType.BF16: 7}
INT_PAIRS = [(DType.I32, DType.I64), (DType.I8, DType.I32), (DType.I16, DType.I64), (DType.U8, DType.I32)]

# 0-d on either side, and one rank-1 / rank-2 pair (no 0-d at all)
SHAPES = [((3,), ()), ((), (3,)), ((2, 3), (3,))]

Op = Callable[[Any, Any], Any]
FLOAT_ARITH: list[tuple[str, Op, Callable[..., Any], bool]] = [
    # (name, Tensor call, reference, needs a nonzero / positive operand)
    ("add", lambda a, b: a + b, np.add, False),
    ("sub", lambda a, b: a - b, np.subtract, False),
    ("mul", lambda a, b: a * b, np.multiply, False),
    ("div", lambda a, b: a / b, np.divide, True),
    ("remainder", lambda a, b: a % b, np.remainder, True),
    ("powf", lambda a, b: a.powf(b), np.power, True),
]
COMPARE: list[tuple[str, Op, Callable[..., Any]]] = [
    ("equal", lambda a, b: a.equal(b), np.equal),
    ("not_equal", lambda a, b: a.not_equal(b), np.not_equal),
    ("greater", lambda a, b: a.greater(b), np.greater),
    ("greater_equal", lambda a, b: a.greater_equal(b), np.greater_equal),
    ("lower", lambda a, b: a.lower(b), np.less),
    ("lower_equal", lambda a, b: a.lower_equal(b), np.less_equal),
]


def _declared(backend: Any, pairs: list[tuple[DType, DType]], kind: str) -> list[tuple[DType, DType]]:
    found = [p for p in pairs if all(backend.capabilities.supports(d) for d in p)]
    if not found:
        pytest.skip(f"backend {backend.name!r} declares no two {kind} dtypes of different widths")
    return found


def _operands(
    rng: Any, shapes: tuple[tuple[int, ...], tuple[int, ...]], narrow: DType, wide: DType, positive: bool
) -> tuple[np.ndarray, np.ndarray]:
    """A narrow and a wide operand; the wide one holds values the narrow dtype cannot, so that
    computing in the narrow dtype shows in the values, not only in the dtype."""
    if positive:
        a, b = rand_float(rng, shapes[0], narrow, 0.5, 2.0), rand_float(rng, shapes[1], wide, 0.5, 2.0)
    else:
        a, b = rand_nonzero(rng, shapes[0], narrow), rand_nonzero(rng, shapes[1], wide)
    b = (f64(b) * (1 + 2.0 ** -(MANTISSA[narrow] + 2))).astype(wide.numpy)
    return np.asarray(a), np.asarray(b)


@covers("float_add", "float_sub", "float_mul", "float_div", "float_remainder", "float_powf")
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_float_arithmetic_takes_the_wider_dtype(backend: Any, shapes: Any, rng: Any) -> None:
    for narrow, wide in _declared(backend, FLOAT_PAIRS, "float"):
        for name, call, ref, positive in FLOAT_ARITH:
            a, b = _operands(rng, shapes, narrow, wide, positive)
            for (x, dx), (y, dy) in [((a, narrow), (b, wide)), ((b, wide), (a, narrow))]:
                out = call(make(backend, x, dx), make(backend, y, dy))
                what = f"{dx.value}{list(x.shape)} {name} {dy.value}{list(y.shape)}"
                check_float(out, ref(f64(x), f64(y)), wide, what=what)


@covers("float_matmul")
@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((2, 2, 3), (3, 4))], ids=str)
def test_float_matmul_takes_the_wider_dtype(backend: Any, shapes: Any, rng: Any) -> None:
    for narrow, wide in _declared(backend, FLOAT_PAIRS, "float"):
        a, b = _operands(rng, shapes, narrow, wide, False)
        for (x, dx), (y, dy) in [
            ((a, narrow), (b, wide)),
            ((a.astype(wide.numpy), wide), (b.astype(narrow.numpy), narrow)),
        ]:
            out = make(backend, x, dx).matmul(make(backend, y, dy))
            what = f"{dx.value}{list(x.shape)} @ {dy.value}{list(y.shape)}"
            check_float(out, np.matmul(f64(x), f64(y)), wide, terms=3, what=what)


@covers(
    "float_equal",
    "float_not_equal",
    "float_greater",
    "float_greater_equal",
    "float_lower",
    "float_lower_equal",
)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_float_comparison_compares_in_the_wider_dtype(backend: Any, shapes: Any, rng: Any) -> None:
    for narrow, wide in _declared(backend, FLOAT_PAIRS, "float"):
        # Values on a grid, with ties between the operands; the wide operand's values are moved off
        # the grid by less than half a narrow ulp, so only a comparison in the wide dtype sees it.
        a = np.array(rand_grid(rng, shapes[0], narrow))
        grid = np.array(rand_grid(rng, shapes[1], wide))
        grid.flat[0] = grid.flat[0] or 1.5  # a nonzero tie (a nudge of zero is zero)
        a.flat[0] = grid.flat[0]
        nudge = rng.choice([-1.0, 0.0, 1.0], size=shapes[1])
        nudge.flat[0] = 1.0
        b = (f64(grid) * (1 + nudge * 2.0 ** -(MANTISSA[narrow] + 3))).astype(wide.numpy)
        for (x, dx), (y, dy) in [((a, narrow), (b, wide)), ((b, wide), (a, narrow))]:
            tx, ty = make(backend, x, dx), make(backend, y, dy)
            for name, call, ref in COMPARE:
                what = f"{dx.value}{list(x.shape)} {name} {dy.value}{list(y.shape)}"
                check_bool(call(tx, ty), ref(f64(x), f64(y)), what=what)


INT_ARITH: list[tuple[str, Op, Callable[..., Any]]] = [
    ("add", lambda a, b: a + b, np.add),
    ("sub", lambda a, b: a - b, np.subtract),
    ("mul", lambda a, b: a * b, np.multiply),
    ("div", lambda a, b: a / b, np.floor_divide),
    ("remainder", lambda a, b: a % b, np.remainder),
]


@covers("int_add", "int_sub", "int_mul", "int_div", "int_remainder", "int_equal", "int_greater", "int_lower")
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_int_ops_take_the_wider_dtype(backend: Any, shapes: Any, rng: Any) -> None:
    for narrow, wide in _declared(backend, INT_PAIRS, "int"):
        info = np.iinfo(narrow.numpy)
        a = np.array(rng.integers(max(int(info.min), -9), 10, size=shapes[0]), dtype=narrow.numpy)
        a[a == 0] = 3  # a divisor in the other order
        # b is outside the narrow dtype's range: a result computed in the narrow dtype wraps around
        sign = rng.choice([-1, 1], size=shapes[1])
        b = np.array(sign * (int(info.max) + rng.integers(2, 9, size=shapes[1])), dtype=wide.numpy)
        for lhs, rhs in [((a, narrow), (b, wide)), ((b, wide), (a, narrow))]:
            x, y = make(backend, lhs[0], lhs[1]), make(backend, rhs[0], rhs[1])
            wide_l, wide_r = lhs[0].astype(np.int64), rhs[0].astype(np.int64)
            label = f"{lhs[1].value}{list(lhs[0].shape)} {{}} {rhs[1].value}{list(rhs[0].shape)}"
            for name, call, ref in INT_ARITH:
                check_exact(call(x, y), ref(wide_l, wide_r), wide, what=label.format(name))
            check_bool(x.equal(y), wide_l == wide_r, what=label.format("equal"))
            check_bool(x.greater(y), wide_l > wide_r, what=label.format("greater"))
            check_bool(x.lower(y), wide_l < wide_r, what=label.format("lower"))
