"""Bool tensors' own ops: logic (and, or, xor, not, equality), ``any`` / ``all`` (of float and
int tensors too, as non-zero tests), ``argwhere`` / ``nonzero``, and the OR-accumulating
scatter and select_add.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_bool, check_exact, make, make_indices, rand_bool

SHAPE_PAIRS = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 1), (1, 3)), ((), (2, 2)), ((0, 2), (1, 2))]


@covers("bool_and", "bool_or", "bool_xor", "bool_equal", "bool_not_equal")
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_bool_binary(backend: Any, shapes: Any, rng: Any) -> None:
    a, b = rand_bool(rng, shapes[0]), rand_bool(rng, shapes[1])
    ta, tb = make(backend, a, DType.BOOL), make(backend, b, DType.BOOL)
    check_bool(ta.bool_and(tb), a & b, what="bool_and")
    check_bool(ta.bool_or(tb), a | b, what="bool_or")
    check_bool(ta.bool_xor(tb), a ^ b, what="bool_xor")
    check_bool(ta & tb, a & b, what="&")
    check_bool(ta | tb, a | b, what="|")
    check_bool(ta ^ tb, a ^ b, what="^")
    check_bool(ta.equal(tb), a == b, what="equal")
    check_bool(ta.not_equal(tb), a != b, what="not_equal")
    check_bool(ta == tb, a == b, what="==")
    check_bool(ta != tb, a != b, what="!=")


@covers("bool_not")
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)], ids=str)
def test_bool_not(backend: Any, shape: Any, rng: Any) -> None:
    a = rand_bool(rng, shape)
    t = make(backend, a, DType.BOOL)
    check_bool(t.bool_not(), ~a, what="bool_not")
    check_bool(~t, ~a, what="~")


def test_bool_operators_stay_logical(backend: Any) -> None:
    m = make(backend, np.array([True, False, True]), DType.BOOL)
    n = make(backend, np.array([True, True, False]), DType.BOOL)
    check_bool(m & n, [True, False, False])
    check_bool(m | n, [True, True, True])
    check_bool(m ^ n, [False, True, True])
    check_bool(~m, [False, True, False])


# -- any, all --------------------------------------------------------------------------------------
@covers("bool_any", "bool_all", "bool_any_dim", "bool_all_dim")
@pytest.mark.parametrize(
    ("shape", "dim"), [((5,), 0), ((3, 4), 1), ((2, 3, 4), 0), ((0, 3), 0), ((3, 0), 1)], ids=str
)
def test_bool_any_all(backend: Any, shape: Any, dim: int, rng: Any) -> None:
    # Rows all true and all false occur with a skewed draw.
    x = rng.random(size=shape) < rng.choice([0.1, 0.5, 0.95])
    if x.ndim == 2 and x.shape[0] >= 2 and x.shape[1] > 0:
        x[0, :] = True
        x[1, :] = False
    t = make(backend, x, DType.BOOL)
    check_bool(t.any(), [x.any()], what="any")
    check_bool(t.all(), [x.all()], what="all")
    check_bool(t.any_dim(dim), x.any(axis=dim, keepdims=True), what="any_dim")
    check_bool(t.all_dim(dim), x.all(axis=dim, keepdims=True), what="all_dim")


@covers("bool_any", "bool_all", "bool_any_dim", "bool_all_dim")
def test_float_and_int_any_all_mean_nonzero(backend: Any, float_dtype: DType) -> None:
    x = np.array([[0.0, 0.0], [0.0, -1.5], [2.0, 3.0]])
    t = make(backend, x, float_dtype)
    check_bool(t.any(), [True], what="float any")
    check_bool(t.all(), [False], what="float all")
    check_bool(t.any_dim(1), [[False], [True], [True]], what="float any_dim")
    check_bool(t.all_dim(1), [[False], [False], [True]], what="float all_dim")
    i = make(backend, x.astype(np.int64), backend.int_dtype)
    check_bool(i.any_dim(1), [[False], [True], [True]], what="int any_dim")
    check_bool(i.all_dim(1), [[False], [False], [True]], what="int all_dim")


@covers("bool_argwhere")
@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 3, 2), (0, 3), (), (1, 2, 1, 2, 2)], ids=str)
def test_argwhere_and_nonzero(backend: Any, shape: Any, rng: Any) -> None:
    mask = rand_bool(rng, shape)
    t = make(backend, mask, DType.BOOL)
    expected = np.argwhere(mask) if mask.ndim else np.zeros((int(mask), 0), dtype=np.int64)
    check_exact(t.argwhere(), expected.astype(np.int64), backend.int_dtype, what="argwhere")
    if mask.ndim:
        parts = t.nonzero()
        assert len(parts) == mask.ndim, f"nonzero() gave {len(parts)} tensors for rank {mask.ndim}"
        for part, want in zip(parts, np.nonzero(mask), strict=True):
            check_exact(part, want.astype(np.int64), backend.int_dtype, what="nonzero")


@covers("bool_argwhere")
def test_argwhere_of_float_and_int_means_nonzero(backend: Any, float_dtype: DType) -> None:
    x = np.array([[0.0, 1.5], [-2.0, 0.0]])
    expected = np.array([[0, 1], [1, 0]])
    check_exact(make(backend, x, float_dtype).argwhere(), expected, backend.int_dtype, what="float argwhere")
    ints = make(backend, x.astype(np.int64), backend.int_dtype)
    check_exact(ints.argwhere(), expected, backend.int_dtype, what="int argwhere")


@covers("bool_scatter_add", "bool_select_add")
def test_bool_scatter_and_select_add_or_accumulate(backend: Any) -> None:
    t = make(backend, [False, False, True], DType.BOOL)
    check_bool(
        t.scatter(0, make_indices(backend, [0, 0, 2]), make(backend, [True, False, False], DType.BOOL)),
        [True, False, True],
    )
    check_bool(t.select_add(0, [1, 1], make(backend, [False, True], DType.BOOL)), [False, True, True])
    check_bool(t.select_assign(0, [2], make(backend, [False], DType.BOOL)), [False, False, True])
