"""Reductions (shapes, kept dims, kinds), indexing ops (gather/scatter/select/masks/nonzero)
and sorting, at the Tensor layer: argument checks, kinds of results, error messages."""

from __future__ import annotations

import numpy as np
import pytest

from burn import Bool, Float, Int, Tensor
from burn.errors import BackendMismatchError, KindError, ShapeError

burn_ndarray = pytest.importorskip("burn_ndarray")


@pytest.fixture(scope="module")
def B():
    return burn_ndarray.NdArray(float_dtype="float64")


@pytest.fixture
def x():
    return np.array([[3.0, 1.0, 2.0], [-1.0, 5.0, 5.0]])


@pytest.fixture
def t(B, x):
    return Tensor.from_data(x, backend=B)


# -- reductions -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "ref"), [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max), ("min", np.min)]
)
def test_full_reductions_have_shape_one(t, x, name, ref):
    out = getattr(t, name)()
    assert out.shape == (1,) and out.kind is Float
    assert out.item() == pytest.approx(ref(x))
    assert getattr(t.int(), name)().kind is Int


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("sum_dim", np.sum),
        ("mean_dim", np.mean),
        ("prod_dim", np.prod),
        ("max_dim", np.max),
        ("min_dim", np.min),
        ("cumsum", np.cumsum),
    ],
)
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_dim_reductions_keep_the_dim(t, x, name, ref, dim):
    out = getattr(t, name)(dim)
    want = ref(x, axis=dim) if name == "cumsum" else ref(x, axis=dim, keepdims=True)
    assert out.shape == want.shape
    np.testing.assert_allclose(out.to_numpy(), want)


def test_arg_reductions_and_indices(t):
    assert t.argmax(1).tolist() == [[0], [1]]  # first maximum on ties
    assert t.argmin(-2).tolist() == [[1, 0, 0]]
    assert t.argmax(0).kind is Int
    values, indices = t.max_dim_with_indices(1)
    assert values.tolist() == [[3.0], [5.0]] and indices.tolist() == [[0], [1]] and indices.kind is Int
    values, indices = t.int().min_dim_with_indices(-1)
    assert values.kind is Int and values.tolist() == [[1], [-1]] and indices.tolist() == [[1], [0]]


def test_variance(t, x):
    np.testing.assert_allclose(t.var(1).to_numpy(), x.var(axis=1, ddof=1, keepdims=True))
    np.testing.assert_allclose(t.var_bias(0).to_numpy(), x.var(axis=0, keepdims=True))
    with pytest.raises(KindError, match="var: expects a Float tensor"):
        t.int().var(0)


def test_any_all(B, t):
    z = Tensor.from_data([[0, 0], [0, 2]], backend=B)
    assert z.any().tolist() == [True] and z.all().tolist() == [False]
    assert z.any_dim(1).tolist() == [[False], [True]]
    assert z.all_dim(0).tolist() == [[False, False]]
    m = t > 0
    assert m.all().kind is Bool and m.any_dim(-1).shape == (2, 1)
    assert (t != 0).all().item() is True


def test_bool_reductions_point_at_casts(t):
    m = t > 0
    with pytest.raises(
        KindError, match=r"sum: expects a Float or Int tensor, got a Bool tensor.*mask.int\(\).sum\(\)"
    ):
        m.sum()
    for op in (
        lambda: m.mean_dim(0),
        lambda: m.argmax(0),
        lambda: m.max(),
        lambda: m.cumsum(0),
        lambda: m.sort(),
    ):
        with pytest.raises(KindError):
            op()


# -- gather / scatter / select ----------------------------------------------------------------------
def test_gather_and_scatter(B, t, x):
    idx = Tensor.from_data([[2, 0], [1, 1]], backend=B)
    assert t.gather(1, idx).tolist() == np.take_along_axis(x, idx.to_numpy(), 1).tolist()
    assert t.gather(-1, [[0], [2]]).tolist() == [[3.0], [5.0]]  # lists are uploaded
    values = Tensor.from_data([[10.0, 20.0], [30.0, 40.0]], backend=B)
    out = t.scatter(1, idx, values)
    ref = x.copy()
    np.add.at(ref, (np.array([[0, 0], [1, 1]]), idx.to_numpy()), values.to_numpy())
    assert out.tolist() == ref.tolist()
    assert t.scatter_add(1, idx, values).tolist() == out.tolist()


def test_gather_scatter_errors(B, t):
    with pytest.raises(
        ShapeError, match=r"gather: indices of shape \(2,\) must have the rank of the tensor \(2, 3\)"
    ):
        t.gather(1, [0, 1])
    with pytest.raises(KindError, match="indices must be a Int tensor"):
        t.gather(1, t)
    with pytest.raises(TypeError, match="indices must be an Int tensor or a list of ints"):
        t.gather(1, [[0.5]])
    with pytest.raises(ShapeError, match="scatter: indices"):
        t.scatter(0, [[0, 1]], Tensor.zeros((2, 2), backend=B, dtype="float64"))
    with pytest.raises(KindError, match="values must be a Float tensor"):
        t.scatter(0, [[0]], Tensor.zeros((1, 1), kind=Int, backend=B))
    # Bool scatter OR-accumulates (Burn's semantics): no longer refused
    m = Tensor.from_data([[False, True]], backend=B)
    assert m.scatter(1, [[0, 0]], Tensor.from_data([[True, False]], backend=B)).tolist() == [[True, True]]
    with pytest.raises(BackendMismatchError):
        t.gather(0, Tensor.from_data([[0, 0, 0]], backend=burn_ndarray.NdArray()))


def test_select_and_select_add(B, t, x):
    assert t.select(1, [2, 0, 2]).tolist() == x[:, [2, 0, 2]].tolist()
    assert t.select(0, Tensor.from_data([1], backend=B)).tolist() == x[[1]].tolist()
    assert (t > 2).select(1, [0]).tolist() == [[True], [False]]
    values = Tensor.ones((2, 2), backend=B, dtype="float64")
    out = t.select_add(1, [0, 0], values)  # repeated rows accumulate
    ref = x.copy()
    ref[:, 0] += 2
    assert out.tolist() == ref.tolist()
    assert t.select_assign(1, [0, 0], values).tolist() == out.tolist()
    with pytest.raises(ShapeError, match=r"values should have shape \(2, 2\)"):
        t.select_add(1, [0, 0], Tensor.ones((2, 3), backend=B, dtype="float64"))
    with pytest.raises(ShapeError, match="select: indices must be 1-D"):
        t.select(0, [[0]])


# -- masks -------------------------------------------------------------------------------------------
def test_mask_fill_and_mask_where(B, t, x):
    m = t < 2
    assert t.mask_fill(m, 0).tolist() == np.where(x < 2, 0, x).tolist()
    assert t.int().mask_fill(m, -5).tolist() == np.where(x < 2, -5, x).astype(int).tolist()
    b = t > 2
    assert b.mask_fill(m, True).tolist() == ((x > 2) | (x < 2)).tolist()
    assert b.mask_fill(m, False).tolist() == ((x > 2) & ~(x < 2)).tolist()
    other = Tensor.full((2, 3), 9.0, backend=B, dtype="float64")
    assert t.mask_where(m, other).tolist() == np.where(x < 2, 9.0, x).tolist()
    row = Tensor.from_data([True, False, True], backend=B)  # broadcasts over rows
    assert t.mask_where(row, other).tolist() == np.where([True, False, True], 9.0, x).tolist()


def test_mask_errors(B, t):
    m = t < 2
    with pytest.raises(KindError, match="mask must be a Bool tensor"):
        t.mask_fill(t, 0.0)
    with pytest.raises(KindError, match="float scalar"):
        t.int().mask_fill(m, 0.5)
    with pytest.raises(KindError, match="value must be a Float tensor"):
        t.mask_where(m, m)
    with pytest.raises(
        ShapeError, match=r"mask_where: shapes \(2, 3\), \(2,\), \(2, 3\) .* do not broadcast"
    ):
        t.mask_where(Tensor.from_data([True, False], backend=B), t)
    with pytest.raises(KindError, match="Bool tensor needs a bool value"):
        m.mask_fill(m, 2)


def test_argwhere_and_nonzero(B, x):
    t = Tensor.from_data(x, backend=B)
    assert t.argwhere().tolist() == np.argwhere(x).tolist()
    m = t > 2
    assert m.argwhere().kind is Int and m.argwhere().tolist() == np.argwhere(x > 2).tolist()
    coords = m.nonzero()
    assert [c.tolist() for c in coords] == [list(a) for a in np.nonzero(x > 2)]
    empty = (t > 100).nonzero()
    assert [c.shape for c in empty] == [(0,), (0,)]


# -- sorting -----------------------------------------------------------------------------------------
def test_sort_argsort_topk(t, x):
    assert t.sort().tolist() == np.sort(x, axis=-1).tolist()
    assert t.sort(0, descending=True).tolist() == (-np.sort(-x, axis=0)).tolist()
    values, indices = t.sort_with_indices(1)
    assert indices.kind is Int and indices.tolist() == np.argsort(x, axis=1, kind="stable").tolist()
    assert t.argsort(1, descending=True).tolist() == [[0, 2, 1], [1, 2, 0]]  # stable among equal 5s
    assert t.topk(2).tolist() == [[3.0, 2.0], [5.0, 5.0]]
    values, indices = t.topk_with_indices(1, dim=0)
    assert values.tolist() == [[3.0, 5.0, 5.0]] and indices.tolist() == [[0, 1, 1]]
    assert t.int().sort().kind is Int
    with pytest.raises(ShapeError, match="topk: k=4 is out of range for dim -1 of size 3"):
        t.topk(4)
