"""Behaviour where Burn, PyTorch and NumPy differ, pinned to one answer on every backend
(docs/guides/differences.md lists each choice): repeat and reshape follow Burn; bool scatter and
select_add OR-accumulate as in Burn; empty means, empty splits, narrow of length 0 and nonzero of
an all-false tensor give the same answer everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, check_float, host, kinds, make, rand_any


@covers("float_repeat_dim", "int_repeat_dim", "bool_repeat_dim")
def test_repeat_keeps_the_rank_as_burn(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, (2, 3), dtype)
        t = make(backend, x, dtype)
        check_exact(t.repeat((2, 1, 1)), np.tile(x, (2, 1)), dtype, what="extra trailing 1s are ignored")
        check_exact(t.repeat((1, 2)), np.tile(x, (1, 2)), dtype)
        check_exact(t.repeat((3,)), np.tile(x, (3, 1)), dtype, what="missing sizes count as 1")
        with pytest.raises(ShapeError, match="sizes past the rank must be 1"):
            t.repeat((1, 1, 2))


@covers("float_reshape", "int_reshape", "bool_reshape")
def test_reshape_zero_keeps_the_dim_as_burn(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, (2, 6), dtype)
        t = make(backend, x, dtype)
        check_exact(t.reshape((0, 2, -1)), x.reshape(2, 2, 3), dtype, what="[2, 6] -> [0, 2, -1]")
        check_exact(t.reshape((0, 0)), x, dtype, what="all kept")
        with pytest.raises(ShapeError, match="has no dim 2"):
            t.reshape((1, 12, 0))
        empty = make(backend, rand_any(rng, (0, 3), dtype), dtype)
        assert empty.reshape((3, 0)).shape == (3, 0), "in an empty tensor 0 is a size"


@covers("float_mean", "float_mean_dim")
def test_float_mean_of_empty_is_nan(backend: Any) -> None:
    fdt = backend.float_dtype
    check_float(make(backend, np.zeros((0,)), fdt).mean(), [np.nan], fdt)
    check_float(make(backend, np.zeros((0, 3)), fdt).mean_dim(0), np.full((1, 3), np.nan), fdt)
    check_float(make(backend, np.zeros((2, 0)), fdt).mean_dim(0), np.zeros((1, 0)), fdt)


@covers("int_mean", "int_mean_dim")
def test_int_mean_of_empty_raises(backend: Any) -> None:
    idt = backend.int_dtype
    with pytest.raises(ValueError, match="empty Int tensor"):
        make(backend, np.zeros((0,), np.int64), idt).mean()
    with pytest.raises(ValueError, match="mean_dim: dim 0 of the Int tensor of shape \\(0, 3\\) is empty"):
        make(backend, np.zeros((0, 3), np.int64), idt).mean_dim(0)
    check_exact(make(backend, np.zeros((2, 0), np.int64), idt).mean_dim(0), np.zeros((1, 0)), idt)


@covers("float_slice", "int_slice", "bool_slice")
def test_empty_splits_and_narrow(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        t = make(backend, rand_any(rng, (0, 3), dtype), dtype)
        assert [p.shape for p in t.split(2, 0)] == [(0, 3)], "one empty piece, as PyTorch"
        assert [p.shape for p in t.split_with_sizes([0, 0], 0)] == [(0, 3), (0, 3)]
        assert [p.shape for p in t.chunk(3, 0)] == [(0, 3)] * 3
        x = rand_any(rng, (3, 4), dtype)
        check_exact(make(backend, x, dtype).narrow(1, 2, 0), x[:, 2:2], dtype, what="narrow of length 0")
        with pytest.raises(ShapeError, match="narrow: start 3 and length 2"):
            make(backend, x, dtype).narrow(0, 3, 2)


@covers("bool_argwhere")
def test_nonzero_of_all_false_gives_one_empty_tensor_per_dim(backend: Any) -> None:
    parts = make(backend, np.zeros((2, 3), bool), DType.BOOL).nonzero()
    assert len(parts) == 2, "one (empty) index tensor per dim, as PyTorch and NumPy"
    for p in parts:
        assert p.shape == (0,)
        assert host(p).size == 0
    positions = make(backend, np.zeros((2, 3), bool), DType.BOOL).argwhere()
    assert positions.shape == (0, 2)
