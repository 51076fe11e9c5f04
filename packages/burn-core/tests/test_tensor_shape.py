"""Shape ops: dim normalization, reshape/permute/expand/squeeze, `slice` ranges, `__getitem__`
against NumPy, `slice_assign`, and splitting sizes against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

from burn import Bool, Int, Tensor
from burn.errors import BackendMismatchError, KindError, ShapeError

burn_ndarray = pytest.importorskip("burn_ndarray")


@pytest.fixture(scope="module")
def B():
    return burn_ndarray.NdArray()


@pytest.fixture
def x():
    return np.arange(24).reshape(2, 3, 4)


@pytest.fixture
def t(B, x):
    return Tensor.from_data(x, backend=B)


# -- reshape, permutations -------------------------------------------------------------------------
def test_reshape(t, x):
    assert t.reshape((4, -1)).tolist() == x.reshape(4, -1).tolist()
    assert t.reshape([24]).shape == (24,)
    assert t.reshape(24).shape == (24,)
    assert t.reshape((2, 3, 4)).tolist() == x.tolist()


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ((5, 5), r"reshape: cannot reshape shape \(2, 3, 4\) \(24 elements\) to \(5, 5\)"),
        ((-1, 5), "cannot reshape"),
        ((-1, -1), "at most one -1"),
    ],
)
def test_reshape_errors(t, shape, message):
    with pytest.raises(ShapeError, match=message):
        t.reshape(shape)


def test_swap_dims_transpose_permute(t, x):
    assert t.swap_dims(0, -1).tolist() == np.swapaxes(x, 0, 2).tolist()
    assert t.swap_dims(1, 1) is t
    assert t.transpose().tolist() == np.swapaxes(x, 1, 2).tolist()
    assert t.permute((2, 0, 1)).tolist() == x.transpose(2, 0, 1).tolist()
    assert t.permute((-1, 0, 1)).shape == (4, 2, 3)
    with pytest.raises(ShapeError, match=r"permute: \(0, 0, 1\) is not a permutation"):
        t.permute((0, 0, 1))
    with pytest.raises(ShapeError, match="transpose: needs rank >= 2"):
        t.flatten().transpose()


def test_dims_are_normalized_and_checked(t):
    with pytest.raises(
        ShapeError, match=r"swap_dims: dim 3 is out of range for a tensor of rank 3 \(shape \(2, 3, 4\)\)"
    ):
        t.swap_dims(3, 0)
    with pytest.raises(ShapeError, match="sum_dim: dim -4 is out of range"):
        t.sum_dim(-4)
    assert t.sum_dim(-1).shape == (2, 3, 1)
    assert t.sum_dim(np.int64(0)).shape == (1, 3, 4)


def test_flip(t, x):
    assert t.flip((0, -1)).tolist() == np.flip(x, (0, 2)).tolist()
    assert t.flip(1).tolist() == np.flip(x, 1).tolist()
    assert t.flip(()) is t
    with pytest.raises(ShapeError, match="repeated dims"):
        t.flip((0, -3))


def test_expand(B):
    v = Tensor.from_data([[1], [2]], backend=B)
    assert v.expand((2, 3)).tolist() == [[1, 1, 1], [2, 2, 2]]
    assert v.expand((4, -1, 3)).shape == (4, 2, 3)
    assert v.expand((2, 1)) is v
    with pytest.raises(ShapeError, match=r"expand: cannot expand shape \(2, 1\) to \(3, 3\)"):
        v.expand((3, 3))
    with pytest.raises(ShapeError, match="lower-rank"):
        v.expand((2,))
    with pytest.raises(ShapeError, match="names no existing dim"):
        v.expand((-1, 2, 1))


def test_squeeze_unsqueeze_flatten(B, t):
    u = Tensor.zeros((1, 3, 1), backend=B)
    assert u.squeeze(0).shape == (3, 1)
    assert u.squeeze(-1).shape == (1, 3)
    assert u.squeeze_dims([0, 2]).shape == (3,)
    assert u.squeeze_dims([]).shape == (3,)
    with pytest.raises(ShapeError, match=r"squeeze: dim 1 of shape \(1, 3, 1\) has size 3, not 1"):
        u.squeeze(1)
    with pytest.raises(ShapeError, match=r"squeeze_dims: dims \[1\]"):
        u.squeeze_dims([0, 1])
    assert t.unsqueeze().shape == (1, 2, 3, 4)
    assert t.unsqueeze_dim(1).shape == (2, 1, 3, 4)
    assert t.unsqueeze_dim(-1).shape == (2, 3, 4, 1)
    assert t.unsqueeze_dim(3).shape == (2, 3, 4, 1)
    with pytest.raises(ShapeError, match="unsqueeze_dim: dim 5"):
        t.unsqueeze_dim(5)
    assert t.flatten().shape == (24,)
    assert t.flatten(1).shape == (2, 12)
    assert t.flatten(0, 1).shape == (6, 4)
    assert Tensor.from_data(3.0, backend=B).flatten().shape == (1,)
    with pytest.raises(ShapeError, match="start_dim 2 comes after end_dim 1"):
        t.flatten(2, 1)


def test_shape_ops_work_on_every_kind(t):
    for kind_tensor in (t, t.float(), t > 5):
        assert kind_tensor.reshape((6, 4)).kind is kind_tensor.kind
        assert kind_tensor.permute((1, 0, 2)).shape == (3, 2, 4)
        assert kind_tensor.slice([(0, 1)]).shape == (1, 3, 4)
        assert kind_tensor.repeat_dim(0, 2).shape == (4, 3, 4)
        assert kind_tensor.expand((2, 2, 3, 4)).shape == (2, 2, 3, 4)
        assert kind_tensor[..., 1].shape == (2, 3)


# -- slice ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ranges", "key"),
    [
        ([(0, 1)], np.s_[0:1]),
        ([None, (1, 3)], np.s_[:, 1:3]),
        ([(-1, None), (0, -1), slice(None, None, 2)], np.s_[-1:, 0:-1, ::2]),
        ([(0, 100)], np.s_[0:100]),  # ends clamp like Python slicing
        ([(5, 100)], np.s_[5:100]),  # empty
        ([(2, 1)], np.s_[2:1]),  # start after end: empty
        ([slice(1, None, 2), None, slice(-3, None)], np.s_[1::2, :, -3:]),
        (slice(0, 1), np.s_[0:1]),  # a single slice stands for a one-entry list
    ],
)
def test_slice_matches_python_slicing(t, x, ranges, key):
    out = t.slice(ranges)
    assert out.shape == x[key].shape
    assert out.tolist() == x[key].tolist()


def test_slice_full_range_returns_self_and_errors(t):
    assert t.slice([None, (0, 3)]) is t
    assert t.slice([slice(None, None, -1)]).tolist() == np.asarray(t.tolist())[::-1].tolist()
    with pytest.raises(ValueError, match="step of .* must not be zero"):
        t.slice([slice(None, None, 0)])
    with pytest.raises(TypeError, match=r"each range must be a \(start, end\) pair"):
        t.slice((0, 1))  # two ints: one range per dim was meant
    with pytest.raises(ShapeError, match="4 ranges for a tensor of rank 3"):
        t.slice([None, None, None, None])


def test_slice_assign(B, t, x):
    value = Tensor.from_data(-np.ones((2, 1, 2), dtype=np.int64), backend=B)
    out = t.slice_assign([None, (1, 2), (0, 2)], value)
    ref = x.copy()
    ref[:, 1:2, 0:2] = -1
    assert out.tolist() == ref.tolist()
    assert t.tolist() == x.tolist()  # the original is unchanged
    assert t.slice_assign([(0, 1)], 0).tolist() == np.concatenate([np.zeros((1, 3, 4)), x[1:]]).tolist()
    row = Tensor.from_data([9, 9, 9, 9], backend=B)
    assert t.slice_assign([(0, 1), (0, 1)], row).tolist()[0][0] == [9, 9, 9, 9]  # broadcasts
    m = Tensor.zeros((2, 2), kind=Bool, backend=B)
    assert m.slice_assign([(0, 1)], True).tolist() == [[True, True], [False, False]]


def test_slice_assign_errors(B, t):
    with pytest.raises(
        ShapeError, match=r"slice_assign: value of shape \(3,\) does not fit the region \(1, 3, 4\)"
    ):
        t.slice_assign([(0, 1)], Tensor.from_data([1, 2, 3], backend=B))
    with pytest.raises(KindError, match="value must be a Int tensor"):
        t.slice_assign([(0, 1)], Tensor.zeros((1, 3, 4), backend=B))
    with pytest.raises(KindError, match="float scalar"):
        t.slice_assign([(0, 1)], 0.5)
    with pytest.raises(BackendMismatchError):
        t.slice_assign([(0, 1)], Tensor.zeros((1, 3, 4), kind=Int, backend=burn_ndarray.NdArray()))


def test_narrow(t, x):
    assert t.narrow(2, 1, 2).tolist() == x[:, :, 1:3].tolist()
    assert t.narrow(-1, -2, 2).tolist() == x[:, :, 2:4].tolist()
    assert t.narrow(0, 0, 2) is t
    with pytest.raises(ShapeError, match="narrow: start 3 and length 2 do not fit dim 2"):
        t.narrow(2, 3, 2)


@pytest.mark.parametrize(("n", "chunks"), [(5, 3), (6, 4), (6, 3), (2, 5), (0, 3), (7, 1)])
def test_chunk_sizes_match_pytorch(B, n, chunks):
    torch = pytest.importorskip("torch")
    t = Tensor.arange(n, backend=B)
    got = [c.tolist() for c in t.chunk(chunks, 0)]
    want = [c.tolist() for c in torch.arange(n).chunk(chunks, 0)]
    assert got == want


@pytest.mark.parametrize(("n", "size"), [(5, 2), (6, 3), (2, 5), (0, 2)])
def test_split_sizes_match_pytorch(B, n, size):
    torch = pytest.importorskip("torch")
    got = [c.tolist() for c in Tensor.arange(n, backend=B).split(size, 0)]
    want = [c.tolist() for c in torch.arange(n).split(size, 0)]
    assert got == want


def test_split_with_sizes(t, x):
    parts = t.split_with_sizes([1, 3], -1)
    assert [p.tolist() for p in parts] == [x[..., :1].tolist(), x[..., 1:].tolist()]
    with pytest.raises(ShapeError, match=r"sizes \[1, 2\] must be >= 0 and add up to size 4"):
        t.split_with_sizes([1, 2], 2)
    with pytest.raises(ValueError, match="chunks must be >= 1"):
        t.chunk(0, 0)


def test_repeat(B):
    v = Tensor.from_data([[1, 2]], backend=B)
    assert v.repeat_dim(1, 2).tolist() == [[1, 2, 1, 2]]
    assert v.repeat_dim(0, 1) is v
    assert v.repeat_dim(0, 0).shape == (0, 2)
    assert v.repeat((2, 2)).tolist() == np.tile([[1, 2]], (2, 2)).tolist()
    assert v.repeat((3, 1, 1)).shape == (3, 2)  # Burn: the rank is kept, extra 1s ignored
    assert v.repeat((2,)).tolist() == [[1, 2], [1, 2]]  # missing sizes count as 1
    with pytest.raises(ShapeError, match="sizes past the rank must be 1"):
        v.repeat((1, 1, 3))


# -- __getitem__ against NumPy ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "key",
    [
        0,
        -1,
        (1, 2),
        (1, 2, 3),
        (-1, -1, -1),
        np.s_[:],
        np.s_[1:],
        np.s_[:, 1],
        np.s_[..., 0],
        np.s_[0, ...],
        np.s_[0, ..., 1],
        np.s_[None],
        np.s_[:, None, 1],
        np.s_[..., None],
        np.s_[::-1],
        np.s_[:, ::-2],
        np.s_[:, 2:0:-1],
        np.s_[:, ::-1, 1::2],
        np.s_[1, ::-1, -1],
        np.s_[:, 5:],
        np.s_[:, -100:100],
        np.s_[:, [2, 0, 2]],
        np.s_[[1, -2]],
        np.s_[:, []],
        np.s_[None, 1, None, [0], :2],
        (),
        np.s_[...],
        np.s_[np.int64(1)],
    ],
)
def test_getitem_matches_numpy(t, x, key):
    out = t[key]
    want = x[key]
    assert out.shape == want.shape
    assert out.tolist() == want.tolist()


def test_int_and_index_list_keep_dims_in_place_like_pytorch(t):
    # NumPy moves the list's dim first when an int and a list are separated by a slice; burn keeps
    # dims in place, as PyTorch does.
    torch = pytest.importorskip("torch")
    want = torch.arange(24).reshape(2, 3, 4)[0, :, [3, -1]]
    assert t[0, :, [3, -1]].tolist() == want.tolist()


def test_getitem_with_an_int_tensor_index(B, t, x):
    idx = Tensor.from_data([2, -1, 0], backend=B)  # negative entries count from the end
    assert t[:, idx].tolist() == x[:, [2, -1, 0]].tolist()
    assert t[0, 1, idx].tolist() == x[0, 1, [2, -1, 0]].tolist()


@pytest.mark.parametrize(
    ("key", "error", "message"),
    [
        (2, IndexError, "index 2 is out of range for dim 0 of size 2"),
        ((0, 0, 0, 0), IndexError, "too many indices"),
        ((..., ...), IndexError, "single ellipsis"),
        (np.s_[[0], [1]], TypeError, "only one index list"),
        (1.5, TypeError, "unsupported index 1.5"),
        ([True, False], TypeError, "boolean mask"),
        ([[0, 1]], TypeError, "flat list of ints"),
        (np.s_[:, [3]], IndexError, r"index list \[3\] is out of range for dim 1 of size 3"),
    ],
)
def test_getitem_errors(t, key, error, message):
    with pytest.raises(error, match=message):
        t[key]


def test_getitem_rejects_float_and_mask_tensors(B, t):
    with pytest.raises(KindError, match="indices must be a Int tensor"):
        t[Tensor.from_data([0.0], backend=B)]
    with pytest.raises(KindError, match="indices must be a Int tensor"):
        t[Tensor.from_data([True, False], backend=B)]


def test_iteration_and_setitem(t, x):
    rows = list(t)
    assert len(rows) == 2 and rows[1].tolist() == x[1].tolist()
    with pytest.raises(TypeError, match="immutable.*slice_assign"):
        t[0] = 1
