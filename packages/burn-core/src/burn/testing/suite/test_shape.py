"""Shape ops of every kind (float, int, bool) and every declared dtype; results must be exact."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, make, rand_any


def _all_kinds(op: str) -> tuple[str, ...]:
    return (f"float_{op}", f"int_{op}", f"bool_{op}")


@dataclass(frozen=True)
class ShapeCase:
    name: str
    shape: tuple[int, ...]
    call: Callable[[Any], Any]
    ref: Callable[[np.ndarray], np.ndarray]


CASES = [
    ShapeCase("reshape-2d", (2, 3, 4), lambda t: t.reshape((4, 6)), lambda x: x.reshape(4, 6)),
    ShapeCase("reshape-flat", (2, 3, 4), lambda t: t.reshape((-1,)), lambda x: x.reshape(-1)),
    ShapeCase("reshape-infer", (2, 3, 4), lambda t: t.reshape((2, -1, 2)), lambda x: x.reshape(2, -1, 2)),
    ShapeCase("reshape-rank0", (), lambda t: t.reshape((1,)), lambda x: x.reshape(1)),
    ShapeCase("reshape-to-rank0", (1,), lambda t: t.reshape(()), lambda x: x.reshape(())),
    ShapeCase("reshape-empty", (0, 3), lambda t: t.reshape((3, 0)), lambda x: x.reshape(3, 0)),
    ShapeCase(
        "reshape-rank5", (6,), lambda t: t.reshape((1, 2, 1, 3, 1)), lambda x: x.reshape(1, 2, 1, 3, 1)
    ),
    ShapeCase("permute", (2, 3, 4), lambda t: t.permute((2, 0, 1)), lambda x: x.transpose(2, 0, 1)),
    ShapeCase("permute-neg", (2, 3, 4), lambda t: t.permute((-1, 0, 1)), lambda x: x.transpose(2, 0, 1)),
    ShapeCase(
        "permute-rank5", (1, 2, 3, 2, 1), lambda t: t.permute((4, 3, 2, 1, 0)), lambda x: x.transpose()
    ),
    ShapeCase("permute-empty", (0, 2), lambda t: t.permute((1, 0)), lambda x: x.T),
    ShapeCase("flip-0", (2, 3, 4), lambda t: t.flip((0,)), lambda x: np.flip(x, 0)),
    ShapeCase("flip-02", (2, 3, 4), lambda t: t.flip((0, 2)), lambda x: np.flip(x, (0, 2))),
    ShapeCase("flip-neg", (2, 3, 4), lambda t: t.flip((-1,)), lambda x: np.flip(x, 2)),
    ShapeCase("flip-none", (2, 3), lambda t: t.flip(()), lambda x: x),
    ShapeCase("expand-lead", (3, 1), lambda t: t.expand((2, 3, 4)), lambda x: np.broadcast_to(x, (2, 3, 4))),
    ShapeCase("expand-1d", (1,), lambda t: t.expand((5,)), lambda x: np.broadcast_to(x, (5,))),
    ShapeCase("expand-rank0", (), lambda t: t.expand((2, 2)), lambda x: np.broadcast_to(x, (2, 2))),
    ShapeCase("expand-keep", (3, 1), lambda t: t.expand((-1, 4)), lambda x: np.broadcast_to(x, (3, 4))),
    ShapeCase("expand-to-empty", (1, 3), lambda t: t.expand((0, 3)), lambda x: np.broadcast_to(x, (0, 3))),
    ShapeCase("slice-range", (5, 4), lambda t: t.slice([(1, 3)]), lambda x: x[1:3]),
    ShapeCase("slice-second", (5, 4), lambda t: t.slice([None, (0, 2)]), lambda x: x[:, 0:2]),
    ShapeCase("slice-step", (7,), lambda t: t.slice([slice(0, 6, 2)]), lambda x: x[0:6:2]),
    ShapeCase(
        "slice-step3", (4, 8), lambda t: t.slice([slice(1, None), slice(None, None, 3)]), lambda x: x[1:, ::3]
    ),
    ShapeCase("slice-negative", (5, 4), lambda t: t.slice([(-3, -1)]), lambda x: x[-3:-1]),
    ShapeCase("slice-clamped", (5,), lambda t: t.slice([(1, 100)]), lambda x: x[1:100]),
    ShapeCase("slice-empty", (5, 4), lambda t: t.slice([(2, 2)]), lambda x: x[2:2]),
    ShapeCase(
        "slice-rank4",
        (2, 3, 4, 5),
        lambda t: t.slice([None, (1, 3), None, (1, 4)]),
        lambda x: x[:, 1:3, :, 1:4],
    ),
    ShapeCase("swap_dims", (2, 3, 4), lambda t: t.swap_dims(0, 2), lambda x: np.swapaxes(x, 0, 2)),
    ShapeCase("swap_dims-neg", (2, 3), lambda t: t.swap_dims(-1, 0), lambda x: x.T),
    ShapeCase("swap_dims-same", (2, 3), lambda t: t.swap_dims(1, 1), lambda x: x),
    ShapeCase("repeat_dim-3", (2, 3), lambda t: t.repeat_dim(1, 3), lambda x: np.tile(x, (1, 3))),
    ShapeCase("repeat_dim-1", (2, 3), lambda t: t.repeat_dim(0, 1), lambda x: x),
    ShapeCase("repeat_dim-0", (2, 3), lambda t: t.repeat_dim(0, 0), lambda x: x[:0]),
    ShapeCase("repeat_dim-size1", (2, 1, 2), lambda t: t.repeat_dim(1, 4), lambda x: np.tile(x, (1, 4, 1))),
]


@covers(
    *(
        op
        for n in ("reshape", "permute", "flip", "expand", "slice", "swap_dims", "repeat_dim")
        for op in _all_kinds(n)
    )
)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_shape_op(backend: Any, any_dtype: DType, case: ShapeCase, rng: Any) -> None:
    x = rand_any(rng, case.shape, any_dtype)
    out = case.call(make(backend, x, any_dtype))
    check_exact(out, case.ref(x), any_dtype, what=case.name)


CAT_CASES = [
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 1), (2, 2)], 1),
    ([(2, 3, 1), (2, 3, 2)], -1),
    ([(0, 3), (2, 3)], 0),
    ([(3,)], 0),
    ([(1, 2, 1, 2, 1), (1, 2, 3, 2, 1)], 2),
]


@covers(*_all_kinds("cat"))
@pytest.mark.parametrize(("shapes", "dim"), CAT_CASES, ids=str)
def test_cat(backend: Any, any_dtype: DType, shapes: list[tuple[int, ...]], dim: int, rng: Any) -> None:
    from burn import Tensor

    xs = [rand_any(rng, s, any_dtype) for s in shapes]
    out = Tensor.cat([make(backend, x, any_dtype) for x in xs], dim)
    check_exact(out, np.concatenate(xs, axis=dim), any_dtype, what="cat")


@covers(*_all_kinds("cat"), *_all_kinds("reshape"))
def test_stack(backend: Any, any_dtype: DType, rng: Any) -> None:
    from burn import Tensor

    xs = [rand_any(rng, (2, 3), any_dtype) for _ in range(3)]
    for dim in (0, 1, 2, -1):
        out = Tensor.stack([make(backend, x, any_dtype) for x in xs], dim)
        check_exact(out, np.stack(xs, axis=dim), any_dtype, what=f"stack dim {dim}")


# (shape, ranges for Tensor.slice_assign, the same region as a NumPy index)
SLICE_ASSIGN = [
    ((5, 4), [(1, 3)], (slice(1, 3),)),
    ((5, 4), [None, (0, 2)], (slice(None), slice(0, 2))),
    ((7,), [slice(0, 6, 2)], (slice(0, 6, 2),)),
    ((2, 3, 4), [(0, 1), (1, 3), (-2, None)], (slice(0, 1), slice(1, 3), slice(-2, None))),
    ((5, 4), [(2, 2)], (slice(2, 2),)),
]


@covers(*_all_kinds("slice_assign"))
@pytest.mark.parametrize(
    ("shape", "ranges", "index"), [pytest.param(*c, id=f"{c[0]}-{c[1]}") for c in SLICE_ASSIGN]
)
def test_slice_assign(backend: Any, any_dtype: DType, shape: Any, ranges: Any, index: Any, rng: Any) -> None:
    x = rand_any(rng, shape, any_dtype)
    region = x[index]
    value = rand_any(rng, region.shape, any_dtype)
    t = make(backend, x, any_dtype)
    out = t.slice_assign(ranges, make(backend, value, any_dtype))
    expected = x.copy()
    expected[index] = value
    check_exact(out, expected, any_dtype, what="slice_assign")
    check_exact(t, x, any_dtype, what="slice_assign leaves its input unchanged")
