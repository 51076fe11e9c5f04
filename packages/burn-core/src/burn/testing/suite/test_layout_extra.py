"""Shape and indexing ops of Burn's full op set (`burn.backend.layout_ops` and the Tensor methods
composed from other ops), on every kind, against NumPy (float64 references, exact results).

Shape ops move values without arithmetic, so one dtype per kind suffices (the backend's float
and int dtypes, and bool); the ops that compute (cross, scatter_nd's mul) use `check_float`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_bool, check_exact, check_float, check_indices, host, make, rand_any


def _kinds(backend: Any) -> list[DType]:
    return [backend.float_dtype, backend.int_dtype, DType.BOOL]


def _all(op: str) -> tuple[str, ...]:
    return (f"float_{op}", f"int_{op}", f"bool_{op}")


def _idx(backend: Any, values: Any) -> Any:
    return make(backend, np.asarray(values, dtype=np.int64), backend.int_dtype)


# -- unfold -----------------------------------------------------------------------------------
def _np_unfold(x: np.ndarray, dim: int, size: int, step: int) -> np.ndarray:
    n = x.shape[dim]
    count = (n - size) // step + 1 if n >= size else 0
    windows = [np.take(x, range(w * step, w * step + size), axis=dim) for w in range(count)]
    shape = (*x.shape[:dim], 0, *x.shape[dim + 1 :], size)
    if not windows:
        return np.zeros(shape, x.dtype)
    return np.moveaxis(np.stack(windows, axis=dim), dim + 1, -1)


@covers(*_all("unfold"))
@pytest.mark.parametrize(
    ("shape", "dim", "size", "step"),
    [((5,), 0, 2, 2), ((3, 4), 1, 3, 1), ((4, 2, 3), 0, 2, 1), ((2, 3), 1, 4, 1), ((0, 3), 0, 1, 1)],
    ids=str,
)
def test_unfold(backend: Any, rng: Any, shape: tuple[int, ...], dim: int, size: int, step: int) -> None:
    for dtype in _kinds(backend):
        x = rand_any(rng, shape, dtype)
        out = make(backend, x, dtype).unfold(dim, size, step)
        check_exact(out, _np_unfold(x, dim, size, step), dtype, what=f"unfold {shape} {dim} {size} {step}")


def test_unfold_errors(backend: Any) -> None:
    t = make(backend, np.zeros((2, 3)), backend.float_dtype)
    with pytest.raises(ValueError, match="unfold: size and step must be >= 1"):
        t.unfold(1, 0, 1)


# -- gather_nd / scatter_nd -------------------------------------------------------------------
ND_CASES = [((2, 3), [[1, 0], [0, 2], [1, 0]]), ((3, 2), [[2], [0]]), ((2, 2, 2), [[[1, 1]], [[0, 1]]])]


@covers(*_all("gather_nd"))
@pytest.mark.parametrize(("shape", "indices"), ND_CASES, ids=str)
def test_gather_nd(backend: Any, rng: Any, shape: tuple[int, ...], indices: list[Any]) -> None:
    idx = np.asarray(indices)
    for dtype in _kinds(backend):
        x = rand_any(rng, shape, dtype)
        out = make(backend, x, dtype).gather_nd(_idx(backend, idx))
        check_exact(out, x[tuple(np.moveaxis(idx, -1, 0))], dtype, what=f"gather_nd {dtype.value}")


def _np_scatter_nd(x: np.ndarray, idx: np.ndarray, values: np.ndarray, mode: str) -> np.ndarray:
    out = x.astype(np.float64).copy()
    k = idx.shape[-1]
    for pos, v in zip(idx.reshape(-1, k), values.reshape(-1, *x.shape[k:]), strict=True):
        key = tuple(pos)
        if mode == "add":
            out[key] = out[key] + v
        elif mode == "mul":
            out[key] = out[key] * v
        elif mode == "max":
            out[key] = np.maximum(out[key], v)
        elif mode == "min":
            out[key] = np.minimum(out[key], v)
        else:
            out[key] = v
    return out


@covers("float_scatter_nd", "int_scatter_nd")
@pytest.mark.parametrize("mode", ["add", "mul", "max", "min", "assign"])
@pytest.mark.parametrize(("shape", "indices"), ND_CASES[:2], ids=str)
def test_scatter_nd(backend: Any, rng: Any, mode: str, shape: tuple[int, ...], indices: list[Any]) -> None:
    idx = np.asarray(indices)
    for dtype in (backend.float_dtype, backend.int_dtype):
        x = rand_any(rng, shape, dtype)
        values = rand_any(rng, (*idx.shape[:-1], *shape[idx.shape[-1] :]), dtype)
        out = make(backend, x, dtype).scatter_nd(_idx(backend, idx), make(backend, values, dtype), mode)
        expected = _np_scatter_nd(x, idx, values, mode)
        if dtype.is_float:
            check_float(out, expected, dtype, what=f"scatter_nd {mode}")
        else:
            check_exact(out, expected.astype(dtype.numpy), dtype, what=f"scatter_nd {mode}")


def test_scatter_nd_empty_and_errors(backend: Any) -> None:
    t = make(backend, np.ones((2, 3)), backend.float_dtype)
    none = make(backend, np.zeros((0, 3)), backend.float_dtype)
    check_exact(t.scatter_nd(_idx(backend, np.zeros((0, 1))), none, "max"), np.ones((2, 3)), t.dtype)
    with pytest.raises(ValueError, match="unknown mode 'sum'"):
        t.scatter_nd([[0]], make(backend, np.ones((1, 3)), backend.float_dtype), "sum")
    with pytest.raises(Exception, match="values should have shape"):
        t.scatter_nd([[0]], make(backend, np.ones((3,)), backend.float_dtype))
    with pytest.raises(Exception, match="K <= rank"):
        t.gather_nd([[0, 0, 0]])


# -- assign modes of scatter / select, bool OR-accumulation ----------------------------------
@covers(*_all("scatter_assign"))
def test_scatter_assign(backend: Any, rng: Any) -> None:
    idx = np.array([[2, 0], [1, 1]])  # row 1 writes column 1 twice: the last write wins
    for dtype in _kinds(backend):
        x = rand_any(rng, (2, 3), dtype)
        v = rand_any(rng, (2, 2), dtype)
        expected = x.copy()
        for i in range(2):
            for j in range(2):
                expected[i, idx[i, j]] = v[i, j]
        out = make(backend, x, dtype).scatter(1, _idx(backend, idx), make(backend, v, dtype), mode="assign")
        check_exact(out, expected, dtype, what=f"scatter assign {dtype.value}")
        w = rand_any(rng, (1, 3), dtype)  # indices smaller than the tensor outside `dim`
        out0 = make(backend, x, dtype).scatter(
            0, _idx(backend, [[1, 0, 1]]), make(backend, w, dtype), mode="assign"
        )
        expected0 = x.copy()
        expected0[[1, 0, 1], [0, 1, 2]] = w[0]
        check_exact(out0, expected0, dtype, what=f"scatter assign dim 0 {dtype.value}")


@covers(*_all("select_assign"))
def test_select_assign(backend: Any, rng: Any) -> None:
    for dtype in _kinds(backend):
        x = rand_any(rng, (2, 4), dtype)
        v = rand_any(rng, (2, 3), dtype)
        expected = x.copy()
        for j, col in enumerate([3, 0, 3]):
            expected[:, col] = v[:, j]
        out = make(backend, x, dtype).select_assign(1, [3, 0, 3], make(backend, v, dtype), mode="assign")
        check_exact(out, expected, dtype, what=f"select_assign {dtype.value}")
        none = make(backend, v[:, :0], dtype)
        check_exact(make(backend, x, dtype).select_assign(1, [], none, mode="assign"), x, dtype)


@covers("bool_scatter_add", "bool_select_add")
def test_bool_scatter_and_select_add_or_accumulate(backend: Any) -> None:
    t = make(backend, [False, False, True], DType.BOOL)
    check_bool(
        t.scatter(0, _idx(backend, [0, 0, 2]), make(backend, [True, False, False], DType.BOOL)),
        [True, False, True],
    )
    check_bool(t.select_add(0, [1, 1], make(backend, [False, True], DType.BOOL)), [False, True, True])
    check_bool(t.select_assign(0, [2], make(backend, [False], DType.BOOL)), [False, False, True])


def test_scatter_mode_errors(backend: Any) -> None:
    t = make(backend, np.zeros((2, 3)), backend.float_dtype)
    v = make(backend, np.ones((2, 3)), backend.float_dtype)
    with pytest.raises(ValueError, match="scatter: unknown mode 'mul'"):
        t.scatter(0, _idx(backend, np.zeros((2, 3))), v, mode="mul")
    with pytest.raises(Exception, match="values should have shape"):
        t.select_assign(0, [0], v, mode="assign")


# -- cross, dot -------------------------------------------------------------------------------
@covers("float_cross", "int_cross")
@pytest.mark.parametrize(
    ("a", "b", "dim"), [((2, 3), (2, 3), -1), ((3, 2), (3, 1), 0), ((1, 3), (2, 3), 1)], ids=str
)
def test_cross(backend: Any, rng: Any, a: tuple[int, ...], b: tuple[int, ...], dim: int) -> None:
    for dtype in (backend.float_dtype, backend.int_dtype):
        x, y = rand_any(rng, a, dtype), rand_any(rng, b, dtype)
        xb, yb = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
        expected = np.cross(xb, yb, axis=dim)
        out = make(backend, x, dtype).cross(make(backend, y, dtype), dim)
        if dtype.is_float:
            check_float(out, expected, dtype, terms=2)
        else:
            check_exact(out, expected.astype(dtype.numpy), dtype)
    t = make(backend, np.zeros((2, 2)), backend.float_dtype)
    with pytest.raises(Exception, match="must have size 3"):
        t.cross(t)


@covers("float_mul", "float_sum", "int_mul", "int_sum")
def test_dot(backend: Any, rng: Any) -> None:
    for dtype in (backend.float_dtype, backend.int_dtype):
        x, y = rand_any(rng, (4,), dtype), rand_any(rng, (4,), dtype)
        out = make(backend, x, dtype).dot(make(backend, y, dtype))
        expected = [np.dot(x.astype(np.float64), y.astype(np.float64))]
        if dtype.is_float:
            check_float(out, expected, dtype, terms=4)
        else:
            check_exact(out, np.asarray(expected).astype(dtype.numpy), dtype)
    with pytest.raises(Exception, match="dot: needs two 1-D tensors"):
        make(backend, np.zeros((2, 2)), backend.float_dtype).dot(
            make(backend, np.zeros(4), backend.float_dtype)
        )


# -- compositions: dims, rolls, takes, masks, pads, one-hot, triangles ---------------------------
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


@covers(*_all("reshape"), *_all("permute"), *_all("cat"), *_all("select"), *_all("flip"), *_all("slice"))
@pytest.mark.parametrize(("name", "shape", "call", "ref"), COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composed_layout_op(backend: Any, rng: Any, name: str, shape: Any, call: Any, ref: Any) -> None:
    for dtype in _kinds(backend):
        x = rand_any(rng, shape, dtype)
        check_exact(call(make(backend, x, dtype)), ref(x), dtype, what=f"{name} {dtype.value}")


@covers(*_all("slice_assign"), *_all("flip"))
def test_slice_assign_negative_steps(backend: Any, rng: Any) -> None:
    for dtype in _kinds(backend):
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


@covers("bool_argwhere", "float_gather_nd", "int_gather_nd", "bool_gather_nd")
@pytest.mark.parametrize(
    ("shape", "mask_shape"), [((2, 3), (2, 3)), ((2, 3), (3,)), ((), ()), ((0, 2), (0, 2))], ids=str
)
def test_mask_select(backend: Any, rng: Any, shape: Any, mask_shape: Any) -> None:
    mask = rng.random(mask_shape) < 0.5
    for dtype in _kinds(backend):
        x = rand_any(rng, shape, dtype)
        out = make(backend, x, dtype).mask_select(make(backend, mask, DType.BOOL))
        full = np.broadcast_to(mask, np.broadcast_shapes(x.shape, mask.shape))
        check_exact(out, np.broadcast_to(x, full.shape)[full], dtype, what=f"mask_select {dtype.value}")


@covers("int_equal", "float_mask_fill", "int_mask_fill")
def test_one_hot(backend: Any) -> None:
    classes = np.array([[0, 2], [1, 2]])
    expected = np.eye(3, dtype=np.int64)[classes]
    check_exact(make(backend, classes, backend.int_dtype).one_hot(3), expected, backend.int_dtype)
    fdt = backend.float_dtype
    check_exact(make(backend, classes.astype(np.float64), fdt).one_hot(3), expected.astype(np.float64), fdt)
    out = make(backend, np.array([-1, 0]), backend.int_dtype).one_hot_fill(3, 5, -1, axis=0)
    check_exact(out, np.array([[-1, 5], [-1, -1], [5, -1]]), backend.int_dtype, what="one_hot_fill axis 0")
    out = make(backend, np.array([2.0, -3.0]), fdt).one_hot_fill(3, 0.5, 0.25)
    check_exact(out, np.array([[0.25, 0.25, 0.5], [0.5, 0.25, 0.25]]), fdt, what="one_hot_fill float")
    check_exact(
        make(backend, np.zeros((0,), np.int64), backend.int_dtype).one_hot(2),
        np.zeros((0, 2)),
        backend.int_dtype,
    )
    with pytest.raises(ValueError, match=r"classes must lie in \[0, 3\)"):
        make(backend, np.array([3]), backend.int_dtype).one_hot(3)
    with pytest.raises(ValueError, match="cannot hold the fill value 0.5"):
        make(backend, np.array([0]), backend.int_dtype).one_hot_fill(2, 0.5)


@covers("float_sort_with_indices", "int_sort_with_indices")
def test_argtopk(backend: Any, rng: Any) -> None:
    for dtype in (backend.float_dtype, backend.int_dtype):
        x = rng.permutation(12).reshape(3, 4).astype(dtype.numpy)
        out = make(backend, x, dtype).argtopk(2, dim=1)
        check_indices(out, np.argsort(-x.astype(np.float64), axis=1, kind="stable")[:, :2], backend)


@covers("int_arange", "int_greater", "int_lower", "int_not_equal")
def test_masks_eye_and_grid(backend: Any) -> None:
    from burn import Bool, Int, Tensor

    i, j = np.indices((3, 4))
    for offset in (0, 1, -1):
        check_bool(Tensor.tril_mask((3, 4), offset, backend=backend), j - i > offset)
        check_bool(
            Tensor.triu_mask((2, 3, 4), offset, backend=backend), np.broadcast_to(j - i < offset, (2, 3, 4))
        )
        check_bool(Tensor.diag_mask((3, 4), offset, backend=backend), j - i != offset)
    check_exact(Tensor.eye(3, backend=backend), np.eye(3), backend.float_dtype)
    check_exact(Tensor.eye(2, 3, kind=Int, backend=backend), np.eye(2, 3), backend.int_dtype)
    check_bool(Tensor.eye(2, kind=Bool, backend=backend), np.eye(2, dtype=bool))
    check_indices(
        Tensor.cartesian_grid((2, 3), backend=backend), np.moveaxis(np.indices((2, 3)), 0, -1), backend
    )
    check_indices(Tensor.cartesian_grid((0, 2), backend=backend), np.zeros((0, 2, 2)), backend)


@covers(*_all("slice"))
def test_iter_dim_and_empty_like(backend: Any, rng: Any) -> None:
    for dtype in _kinds(backend):
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
    with pytest.raises(Exception, match="unsqueeze_dims: repeated dims"):
        t.unsqueeze_dims([0, 0])
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
