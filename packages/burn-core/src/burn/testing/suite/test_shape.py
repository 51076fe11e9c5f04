"""Shape ops of every kind (float, int, bool): reshape, permute, cat, stack, slices and
slice_assign (negative steps included), unfold, and the Tensor methods composed from them
(movedim, roll, take, pad, tril/triu, iter_dim...); results must be exact.

The ops of the contract run for every declared dtype; the compositions move values without
arithmetic, so one dtype per kind suffices (the backend's float and int dtypes, and bool).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, each_kind, host, kinds, make, rand_any


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
        for op in each_kind(n)
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


@covers(*each_kind("cat"))
@pytest.mark.parametrize(("shapes", "dim"), CAT_CASES, ids=str)
def test_cat(backend: Any, any_dtype: DType, shapes: list[tuple[int, ...]], dim: int, rng: Any) -> None:
    from burn import Tensor

    xs = [rand_any(rng, s, any_dtype) for s in shapes]
    out = Tensor.cat([make(backend, x, any_dtype) for x in xs], dim)
    check_exact(out, np.concatenate(xs, axis=dim), any_dtype, what="cat")


@covers(*each_kind("cat"), *each_kind("reshape"))
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


@covers(*each_kind("slice_assign"))
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


# -- unfold -----------------------------------------------------------------------------------
def _np_unfold(x: np.ndarray, dim: int, size: int, step: int) -> np.ndarray:
    n = x.shape[dim]
    count = (n - size) // step + 1 if n >= size else 0
    windows = [np.take(x, range(w * step, w * step + size), axis=dim) for w in range(count)]
    shape = (*x.shape[:dim], 0, *x.shape[dim + 1 :], size)
    if not windows:
        return np.zeros(shape, x.dtype)
    return np.moveaxis(np.stack(windows, axis=dim), dim + 1, -1)


@covers(*each_kind("unfold"))
@pytest.mark.parametrize(
    ("shape", "dim", "size", "step"),
    [((5,), 0, 2, 2), ((3, 4), 1, 3, 1), ((4, 2, 3), 0, 2, 1), ((2, 3), 1, 4, 1), ((0, 3), 0, 1, 1)],
    ids=str,
)
def test_unfold(backend: Any, rng: Any, shape: tuple[int, ...], dim: int, size: int, step: int) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, shape, dtype)
        out = make(backend, x, dtype).unfold(dim, size, step)
        check_exact(out, _np_unfold(x, dim, size, step), dtype, what=f"unfold {shape} {dim} {size} {step}")


def test_unfold_errors(backend: Any) -> None:
    t = make(backend, np.zeros((2, 3)), backend.float_dtype)
    with pytest.raises(ValueError, match="unfold: size and step must be >= 1"):
        t.unfold(1, 0, 1)


# -- compositions: dims, rolls, takes, pads, triangles, negative-step slices -----------------------
COMPOSED = [
    ("unsqueeze_dims", (2, 3), lambda t: t.unsqueeze_dims([0, -1]), lambda x: x[None, :, :, None]),
    ("unsqueeze_dims_mid", (2, 3), lambda t: t.unsqueeze_dims([1, 2]), lambda x: x[:, None, None, :]),
    ("unsqueeze_dims_rank0", (), lambda t: t.unsqueeze_dims([0]), lambda x: x.reshape(1)),
    ("movedim", (2, 3, 4), lambda t: t.movedim(0, -1), lambda x: np.moveaxis(x, 0, -1)),
    (
        "movedim_many",
        (2, 3, 4),
        lambda t: t.movedim([0, 1], [2, 0]),
        lambda x: np.moveaxis(x, [0, 1], [2, 0]),
    ),
    ("roll", (2, 5), lambda t: t.roll([1, -7], [0, 1]), lambda x: np.roll(x, (1, -7), (0, 1))),
    ("roll_dim", (5,), lambda t: t.roll_dim(2, 0), lambda x: np.roll(x, 2)),
    ("roll_empty", (0, 3), lambda t: t.roll_dim(1, 0), lambda x: x),
    ("take", (3, 4), lambda t: t.take(1, [[3, 0], [1, 1]]), lambda x: np.take(x, [[3, 0], [1, 1]], axis=1)),
    ("take_1d", (5,), lambda t: t.take(0, [4]), lambda x: np.take(x, [4], axis=0)),
    ("t", (2, 3, 4), lambda t: t.t(), lambda x: np.swapaxes(x, -1, -2)),
    ("t_rank1", (3,), lambda t: t.t(), lambda x: x),
    (
        "pad_constant",
        (2, 3),
        lambda t: t.pad((1, 2, 1, 0), value=True if t.kind.name == "Bool" else 1),
        lambda x: np.pad(x, ((1, 0), (1, 2)), constant_values=True if x.dtype == np.bool_ else 1),
    ),
    (
        "pad_reflect",
        (2, 3),
        lambda t: t.pad((2, 1), mode="reflect"),
        lambda x: np.pad(x, ((0, 0), (2, 1)), "reflect"),
    ),
    (
        "pad_edge",
        (2, 3),
        lambda t: t.pad((0, 0, 2, 1), mode="edge"),
        lambda x: np.pad(x, ((2, 1), (0, 0)), "edge"),
    ),
    ("pad_rank1_empty_pad", (3,), lambda t: t.pad((0, 0)), lambda x: x),
    (
        "tril",
        (3, 4),
        lambda t: t.tril(),
        lambda x: np.where(np.tril(np.ones((3, 4), bool)), x, np.zeros_like(x)),
    ),
    (
        "tril_neg",
        (2, 3, 3),
        lambda t: t.tril(-1),
        lambda x: np.where(np.tril(np.ones((3, 3), bool), -1), x, np.zeros_like(x)),
    ),
    (
        "triu",
        (4, 3),
        lambda t: t.triu(1),
        lambda x: np.where(np.triu(np.ones((4, 3), bool), 1), x, np.zeros_like(x)),
    ),
    (
        "slice_neg_step",
        (3, 5),
        lambda t: t.slice([slice(None, None, -1), (0, 5, -2)]),
        lambda x: x[::-1, 4::-2],
    ),
    ("slice_neg_python", (6,), lambda t: t.slice([slice(4, 0, -3)]), lambda x: x[4:0:-3]),
    ("slice_neg_empty", (4,), lambda t: t.slice([slice(0, 3, -1)]), lambda x: x[0:3:-1]),
    ("slice_burn_triple", (6,), lambda t: t.slice([(1, -1, 2)]), lambda x: x[1:5:2]),
]


@covers(
    *each_kind("reshape"),
    *each_kind("permute"),
    *each_kind("cat"),
    *each_kind("select"),
    *each_kind("flip"),
    *each_kind("slice"),
)
@pytest.mark.parametrize(("name", "shape", "call", "ref"), COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composed_layout_op(backend: Any, rng: Any, name: str, shape: Any, call: Any, ref: Any) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, shape, dtype)
        check_exact(call(make(backend, x, dtype)), ref(x), dtype, what=f"{name} {dtype.value}")


@covers(*each_kind("slice_assign"), *each_kind("flip"))
def test_slice_assign_negative_steps(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        x, v = rand_any(rng, (3, 5), dtype), rand_any(rng, (3, 2), dtype)
        expected = x.copy()
        expected[::-1, 4::-3] = v
        out = make(backend, x, dtype).slice_assign(
            [slice(None, None, -1), slice(4, None, -3)], make(backend, v, dtype)
        )
        check_exact(out, expected, dtype, what="slice_assign python negative step")
        expected = x.copy()
        expected[:, 1:4][:, ::-2] = v
        out = make(backend, x, dtype).slice_assign([None, (1, 4, -2)], make(backend, v, dtype))
        check_exact(out, expected, dtype, what="slice_assign burn negative step")


@covers(*each_kind("slice"))
def test_iter_dim_and_empty_like(backend: Any, rng: Any) -> None:
    for dtype in kinds(backend):
        x = rand_any(rng, (2, 3), dtype)
        parts = list(make(backend, x, dtype).iter_dim(1))
        assert len(parts) == 3
        for k, part in enumerate(parts):
            check_exact(part, x[:, k : k + 1], dtype, what="iter_dim")
        like = make(backend, x, dtype).empty_like()
        assert (like.shape, like.dtype, like.kind) == ((2, 3), dtype, parts[0].kind)
    assert list(make(backend, np.zeros((2, 0)), backend.float_dtype).iter_dim(1)) == []


def test_layout_errors(backend: Any) -> None:
    t = make(backend, np.zeros((2, 3)), backend.float_dtype)
    with pytest.raises(Exception, match="unsqueeze_dims: dims \\[3, 3\\] place a dim at 4, past"):
        t.unsqueeze_dims([3, 3])  # Burn: a repeat moves to the next slot, here past the rank
    with pytest.raises(Exception, match="unsqueeze_dims: dim 4 is out of range"):
        t.unsqueeze_dims([4])
    with pytest.raises(Exception, match="movedim: 2 source dims but 1 destinations"):
        t.movedim([0, 1], [0])
    with pytest.raises(Exception, match="roll: 2 shifts for 1 dims"):
        t.roll([1, 2], [0])
    with pytest.raises(Exception, match="reflect padding"):
        t.pad((3, 0), mode="reflect")
    with pytest.raises(ValueError, match="pad: unknown mode 'wrap'"):
        t.pad((1, 1), mode="wrap")
    with pytest.raises(Exception, match="tril: needs rank >= 2"):
        make(backend, np.zeros(3), backend.float_dtype).tril()
    with pytest.raises(ValueError, match="must not be zero"):
        t.slice([slice(None, None, 0)])
    assert host(t.pad((0, 0, 0, 0))).shape == (2, 3)
