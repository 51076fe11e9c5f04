"""Behaviour where Burn, PyTorch and NumPy differ, pinned to one answer on every backend
(docs/guides/differences.md lists each choice): repeat and reshape follow Burn; bool scatter and
select_add OR-accumulate as in Burn; empty means, empty splits, narrow of length 0 and nonzero of
an all-false tensor give the same answer everywhere.

Burn's API details, checked against Burn's own tests: `pad` with ``(before, after)`` pairs and a
`PadMode`; `unsqueeze_dims` with repeated and negative positions; zero sizes in
`split_with_sizes`; `is_close` with tolerances left at None; `cov` over a batch; 1-D bilinear
`interpolate`; `roll` of Int and Bool tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.tensor.pad_mode import PadMode
from burn.testing import covers
from burn.testing.helpers import (
    check_bool,
    check_exact,
    check_float,
    f64,
    float_input,
    host,
    kinds,
    make,
    rand_any,
    rand_float,
    tensor_module,
)
from burn.testing.reference import sampling as sampling_ref


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


# -- Burn's API details ------------------------------------------------------------------------------
@covers("float_slice_assign", "int_slice_assign", "bool_slice_assign")
def test_pad_with_pairs_and_pad_mode_as_burn(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, (2, 3, 4), dtype)
        t = make(backend, x, dtype)
        fill = True if dtype is DType.BOOL else 5
        check_exact(
            t.pad([(1, 0), (0, 2)], PadMode.Constant(fill)),
            np.pad(x, ((0, 0), (1, 0), (0, 2)), constant_values=fill),
            dtype,
            what="pairs in dim order over the last two dims",
        )
        check_exact(
            t.pad([(1, 1), (0, 0), (2, 0)], fill),
            np.pad(x, ((1, 1), (0, 0), (2, 0)), constant_values=fill),
            dtype,
            what="a number is PadMode.Constant",
        )
        check_exact(
            t.pad((1, 2, 3, 0), PadMode.Constant(fill)),
            np.pad(x, ((0, 0), (3, 0), (1, 2)), constant_values=fill),
            dtype,
            what="(left, right, top, bottom)",
        )
        if dtype is not DType.BOOL:
            check_exact(
                t.pad([(2, 1)], PadMode.Reflect), np.pad(x, ((0, 0), (0, 0), (2, 1)), "reflect"), dtype
            )
            check_exact(
                t.pad([(2, 1), (0, 3)], PadMode.Edge), np.pad(x, ((0, 0), (2, 1), (0, 3)), "edge"), dtype
            )
        with pytest.raises(ShapeError, match="pad: pads .* at most 3 dims"):
            t.pad([(0, 0)] * 4, 0)
        with pytest.raises(TypeError, match="give the mode once"):
            t.pad([(1, 1)], PadMode.Edge, mode="reflect")
        with pytest.raises(ShapeError, match="reflect padding \\(4, 0\\) of dim 2"):
            t.pad([(4, 0)], PadMode.Reflect)


@covers("float_reshape", "int_reshape", "bool_reshape")
def test_unsqueeze_dims_resolves_positions_as_burn(backend: Any) -> None:
    t = make(backend, np.ones((3, 4, 5)), backend.float_dtype)
    v = make(backend, np.ones((4,)), backend.float_dtype)
    # Burn's own cases (burn-backend-tests float/ops/squeeze.rs)
    assert t.unsqueeze_dims([1, -2]).shape == (3, 1, 4, 1, 5)
    assert t.unsqueeze_dims([0, 4]).shape == (1, 3, 4, 5, 1)
    assert t.unsqueeze_dims([0, -1, -1]).shape == (1, 3, 4, 5, 1, 1), "each -1 one place further in"
    assert t.unsqueeze_dims([0, 1, 3]).shape == (1, 1, 3, 1, 4, 5)
    assert v.unsqueeze_dims([-1, 0, 0]).shape == (1, 1, 4, 1), "a repeat takes the next slot"
    assert v.unsqueeze_dims([0, 0]).shape == (1, 1, 4)
    assert v.unsqueeze_dims([1, 1, 1]).shape == (4, 1, 1, 1)
    assert t.unsqueeze_dims([-1, -2]).shape == (3, 4, 1, 5, 1), "-2 after -1 resolves to 2, as Burn"
    with pytest.raises(ShapeError, match="dim -6 is out of range for the result's rank 5"):
        t.unsqueeze_dims([0, -6])
    with pytest.raises(ShapeError, match="place a dim at 3, past the result's rank 3"):
        v.unsqueeze_dims([2, 2])


@covers("float_slice", "int_slice", "bool_slice")
def test_split_zero_sizes_give_empty_pieces(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, (2, 3), dtype)
        t = make(backend, x, dtype)
        parts = t.split_with_sizes([0, 1, 0, 2], 1)
        assert [p.shape for p in parts] == [(2, 0), (2, 1), (2, 0), (2, 2)], "one piece per size"
        check_exact(parts[1], x[:, :1], dtype)
        check_exact(parts[3], x[:, 1:], dtype)
        assert [p.shape for p in t.split_with_sizes([0, 2, 0], 0)] == [(0, 3), (2, 3), (0, 3)]
        empty = make(backend, rand_any(rng, (0, 3), dtype), dtype)
        assert [p.shape for p in empty.split(0, 0)] == [(0, 3)], "split_size 0 on an empty dim"
        with pytest.raises(ValueError, match="split: split_size must be >= 1 \\(0 only for an empty dim\\)"):
            t.split(0, 1)
        with pytest.raises(ShapeError, match="must be >= 0 and add up to size 3"):
            t.split_with_sizes([-1, 4], 1)


@covers("float_abs", "float_lower_equal")
def test_is_close_tolerances_default_when_none(backend: Any, float_dtype: DType) -> None:
    a = np.array([1.0, 2.0, 100.0, np.inf, -np.inf, np.nan])
    b = np.array([1.0 + 4e-6, 2.05, 100.001, np.inf, np.inf, np.nan])
    ta, tb = make(backend, a, float_dtype), make(backend, b, float_dtype)
    ra, rb = f64(host(ta)), f64(host(tb))
    check_bool(ta.is_close(tb, None, None), np.isclose(ra, rb, rtol=1e-5, atol=1e-8), what="both None")
    check_bool(ta.is_close(tb, 0.1, None), np.isclose(ra, rb, rtol=0.1, atol=1e-8), what="atol None")
    check_bool(ta.is_close(tb, None, 0.1), np.isclose(ra, rb, rtol=1e-5, atol=0.1), what="rtol None")
    assert ta.is_close(tb).tolist() == ta.is_close(tb, None, None).tolist()
    assert ta.narrow(0, 0, 3).all_close(tb.narrow(0, 0, 3), None, 0.1)
    assert not ta.narrow(0, 0, 3).all_close(tb.narrow(0, 0, 3), None, None)


@covers("float_matmul", "float_mean_dim")
@pytest.mark.parametrize("correction", [1, 0])
def test_cov_over_a_batch(backend: Any, float_dtype: DType, correction: int, rng: Any) -> None:
    x = rand_float(rng, (2, 3, 3, 5), float_dtype, -2, 2)  # batch [2, 3], 3 variables, 5 observations
    t = make(backend, x, float_dtype)
    ref = f64(host(t))
    want = np.stack([np.cov(v, ddof=correction) for v in ref.reshape(6, 3, 5)]).reshape(2, 3, 3, 3)
    check_float(t.cov(-1, correction), want, float_dtype, terms=10, what="[..., V, N].cov(-1)")
    check_float(t.swap_dims(2, 3).cov(2, correction), want, float_dtype, terms=10, what="[..., N, V].cov(-2)")
    with pytest.raises(ShapeError, match="cov: dim 1 must be one of the last two dims"):
        t.cov(1)


@covers("interpolate")
@pytest.mark.parametrize("align", [False, True])
def test_interpolate_1d_bilinear(backend: Any, float_dtype: DType, align: bool, rng: Any) -> None:
    x, tx = float_input(backend, rng, float_dtype, (2, 3, 5))
    F = tensor_module()
    for out in (8, 3):
        want = sampling_ref.interpolate(x[:, :, None, :], (1, out), "bilinear", align)[:, :, 0]
        for got in (F.interpolate(tx, out, "bilinear", align), F.interpolate1d(tx, out, "bilinear", align)):
            check_float(got, want, float_dtype, terms=8, what=f"1-D bilinear to {out}")


@covers("float_slice", "int_slice", "bool_slice")
def test_roll_int_and_bool_tensors(backend: Any, rng: Any) -> None:
    for dtype in (backend.int_dtype, DType.BOOL):
        x = rand_any(rng, (3, 4), dtype)
        t = make(backend, x, dtype)
        check_exact(t.roll([1, -9], [0, -1]), np.roll(x, (1, -9), (0, 1)), dtype, what="roll")
        check_exact(t.roll_dim(-5, 1), np.roll(x, -5, 1), dtype, what="roll_dim")
        check_exact(t.roll(3, 0), x, dtype, what="a full turn")
