"""Tensor creation: kind/dtype inference, backend and device resolution, copies, joins."""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import Bool, DType, DTypeError, Float, Int, Tensor, TensorData
from burn.errors import BackendMismatchError, DeviceError, KindError, ShapeError

burn_ndarray = pytest.importorskip("burn_ndarray")


@pytest.fixture(scope="module")
def B():
    return burn_ndarray.NdArray()


@pytest.fixture(scope="module")
def B64():
    return burn_ndarray.NdArray(float_dtype="float64", int_dtype="int32")


# -- from_data: kinds and dtypes -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "kind", "dtype"),
    [
        ([1.5, 2.0], Float, DType.F32),
        (np.array([1.5], dtype=np.float64), Float, DType.F32),  # floats take the backend's float dtype
        (np.array([1.5], dtype=np.float16), Float, DType.F32),
        ([1, 2], Int, DType.I64),
        (np.array([1, 2], dtype=np.uint16), Int, DType.I64),  # no burn uint16: becomes the int dtype
        ([True, False], Bool, DType.BOOL),
        (3.5, Float, DType.F32),
        (7, Int, DType.I64),
        (True, Bool, DType.BOOL),
    ],
)
def test_from_data_infers_kind_and_backend_dtype(B, data, kind, dtype):
    t = Tensor.from_data(data, backend=B)
    assert t.kind is kind
    assert t.dtype is dtype
    np.testing.assert_array_equal(t.to_numpy(), np.asarray(data).astype(dtype.numpy))


def test_from_data_uses_backend_options(B64):
    assert Tensor.from_data([1.0], backend=B64).dtype is DType.F64
    assert Tensor.from_data([1], backend=B64).dtype is DType.I32


def test_python_scalar_gives_rank_zero(B):
    t = Tensor.from_data(2.5, backend=B)
    assert t.shape == () and t.dims == 0 and t.ndim == 0 and t.num_elements() == 1
    assert t.item() == 2.5


def test_explicit_dtype_and_kind(B):
    t = Tensor.from_data([1.7, -1.7], backend=B, dtype="float16")
    assert (t.kind, t.dtype) == (Float, DType.F16)
    t = Tensor.from_data([1.7, -1.7], backend=B, kind=Int)  # floats truncate toward zero
    assert (t.kind, t.dtype, t.tolist()) == (Int, DType.I64, [1, -1])
    t = Tensor.from_data([0.0, 2.0], backend=B, kind=Bool)
    assert t.tolist() == [False, True]
    t = Tensor.from_data([1, 2], backend=B, dtype=burn.float64)  # the dtype decides the kind
    assert (t.kind, t.dtype) == (Float, DType.F64)


def test_dtype_errors(B):
    with pytest.raises(DTypeError, match="not a Int dtype"):
        Tensor.from_data([1.0], backend=B, dtype="float32", kind=Int)
    with pytest.raises(DTypeError, match="unknown dtype"):
        Tensor.from_data([1.0], backend=B, dtype="float8")
    with pytest.raises(DTypeError, match="complex"):
        Tensor.from_data(np.array([1j]), backend=B)
    with pytest.raises(TypeError, match="cannot make a tensor"):
        Tensor.from_data(object(), backend=B)


def test_dtype_the_backend_does_not_declare():
    from burn.backend import Capabilities

    narrow = burn_ndarray.NdArray()
    object.__setattr__(
        narrow, "capabilities", Capabilities(dtypes=frozenset({DType.F32, DType.I64, DType.BOOL}))
    )
    with pytest.raises(DTypeError, match="does not support float64"):
        Tensor.from_data([1.0], backend=narrow, dtype="float64")


def test_from_data_sources(B):
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    sources = [ref, TensorData(ref), ref.tolist(), Tensor.from_data(ref, backend=B)]

    class HasArray:
        def __array__(self, dtype=None, copy=None):
            return ref

    sources.append(HasArray())
    torch = pytest.importorskip("torch")
    sources.append(torch.from_numpy(ref.copy()))
    for src in sources:
        t = Tensor.from_data(src, backend=B)
        np.testing.assert_array_equal(t.to_numpy(), ref)
        assert t.shape == (2, 3)


def test_from_data_dlpack_only_object(B):
    ref = np.arange(4, dtype=np.float32)

    class OnlyDlpack:
        def __dlpack__(self, **kwargs):
            return ref.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return ref.__dlpack_device__()

    np.testing.assert_array_equal(Tensor.from_data(OnlyDlpack(), backend=B).to_numpy(), ref)


def test_from_data_copies_the_callers_array(B):
    src = np.zeros(3, dtype=np.float32)
    t = Tensor.from_data(src, backend=B)
    src[0] = 5.0
    assert t.tolist() == [0.0, 0.0, 0.0]
    data = TensorData(np.zeros(2, dtype=np.float32))
    t = Tensor.from_data(data, backend=B)
    data.array[0] = 1.0
    assert t.tolist() == [0.0, 0.0]


def test_constructor_is_from_data(B):
    t = Tensor([[1, 2]], backend=B)
    assert (t.kind, t.shape, t.tolist()) == (Int, (1, 2), [[1, 2]])


# -- backend and device resolution ----------------------------------------------------------------
def test_backend_from_device_owner(B):
    t = Tensor.zeros((2,), device=B.default_device())
    assert t.backend is B
    assert t.device == B.default_device()


def test_device_of_another_backend_is_rejected(B):
    from burn.backend import Device

    with pytest.raises(DeviceError, match="does not belong to backend 'ndarray'"):
        Tensor.zeros((2,), device=Device("cuda", 0), backend=B)
    with pytest.raises(DeviceError, match="no owner"):
        Tensor.zeros((2,), device=Device("ndarray", "cpu"))


def test_default_backend_comes_from_plugins(monkeypatch, ndarray_registered):
    import burn.plugins

    monkeypatch.delenv("BURN_BACKEND", raising=False)
    t = Tensor.from_data([1.0, 2.0])
    assert t.backend is burn.default_backend()
    assert t.backend.name == "ndarray"
    t2 = Tensor.ones(2, backend="ndarray")  # a name goes through burn.backend()
    assert t2.backend is t.backend


# -- filled creation ------------------------------------------------------------------------------
def test_zeros_ones_full_empty(B):
    z = Tensor.zeros((2, 3), backend=B)
    assert (z.kind, z.dtype, z.shape) == (Float, DType.F32, (2, 3))
    assert z.tolist() == [[0.0] * 3] * 2
    assert Tensor.ones(3, kind=Int, backend=B).tolist() == [1, 1, 1]
    assert Tensor.ones((2,), kind=Bool, backend=B).tolist() == [True, True]
    assert Tensor.zeros((1,), dtype="int32", backend=B).dtype is DType.I32  # dtype decides the kind
    assert Tensor.full((2,), 7, kind=Int, backend=B).tolist() == [7, 7]
    assert Tensor.full((2,), 0.5, backend=B, dtype="float64").tolist() == [0.5, 0.5]
    assert Tensor.empty((0, 4), backend=B).shape == (0, 4)
    assert Tensor.zeros((), backend=B).shape == ()


def test_filled_creation_errors(B):
    with pytest.raises(KindError, match="Int tensor cannot hold the float 0.5"):
        Tensor.full((2,), 0.5, kind=Int, backend=B)
    with pytest.raises(ShapeError, match="negative"):
        Tensor.zeros((2, -1), backend=B)
    with pytest.raises(KindError, match="not a Bool dtype"):
        Tensor.zeros((2,), kind=Bool, dtype="float32", backend=B)
    with pytest.raises(TypeError, match="shape"):
        Tensor.zeros("ab", backend=B)


def test_arange(B):
    assert Tensor.arange(5, backend=B).tolist() == [0, 1, 2, 3, 4]
    t = Tensor.arange(1, 7, 2, backend=B)
    assert (t.kind, t.tolist()) == (Int, [1, 3, 5])
    assert Tensor.arange(3, 0, -1, backend=B, dtype="int32").tolist() == [3, 2, 1]
    with pytest.raises(ValueError, match="step"):
        Tensor.arange(0, 3, 0, backend=B)
    with pytest.raises(KindError, match="Int"):
        Tensor.arange(3, backend=B, dtype="float32")


def test_random_is_seeded_and_kinded():
    B = burn_ndarray.NdArray()
    B.seed(3)
    a = Tensor.random((4, 4), backend=B)
    B.seed(3)
    b = Tensor.random((4, 4), backend=B)
    assert a.tolist() == b.tolist()
    assert a.kind is Float and 0.0 <= a.min().item() and a.max().item() < 1.0
    n = Tensor.random((1000,), burn.Normal(10.0, 0.1), backend=B)
    assert abs(n.mean().item() - 10.0) < 0.05
    i = Tensor.random((100,), burn.Uniform(0, 3), kind=Int, backend=B)
    assert i.kind is Int and set(i.tolist()) <= {0, 1, 2}
    m = Tensor.random((100,), burn.Bernoulli(0.0), kind=Bool, backend=B)
    assert m.kind is Bool and not m.any().item()
    with pytest.raises(TypeError, match="Distribution"):
        Tensor.random((2,), "normal", backend=B)


def test_like_constructors(B64):
    t = Tensor.from_data([[1, 2]], backend=B64, dtype="int16")
    for like in (t.zeros_like(), t.ones_like(), t.full_like(4), t.random_like(burn.Uniform(0, 5))):
        assert (like.shape, like.kind, like.dtype, like.backend) == ((1, 2), Int, DType.I16, B64)
    assert t.full_like(4).tolist() == [[4, 4]]


# -- cat / stack -----------------------------------------------------------------------------------
def test_cat_and_stack(B):
    a = Tensor.from_data([[1, 2]], backend=B)
    b = Tensor.from_data([[3, 4], [5, 6]], backend=B)
    assert Tensor.cat([a, b], 0).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert Tensor.cat([a, a], -1).tolist() == [[1, 2, 1, 2]]
    assert Tensor.cat([a], 0) is a
    s = Tensor.stack([a, a], -1)
    assert s.shape == (1, 2, 2) and s.tolist() == [[[1, 1], [2, 2]]]
    assert Tensor.stack([a, a], 0).shape == (2, 1, 2)


def test_cat_errors(B):
    a = Tensor.from_data([[1.0, 2.0]], backend=B)
    with pytest.raises(ShapeError, match=r"cat: shapes \[\(1, 2\), \(1, 3\)\] differ outside dim 0"):
        Tensor.cat([a, Tensor.zeros((1, 3), backend=B)], 0)
    with pytest.raises(KindError, match="two kinds"):
        Tensor.cat([a, a.int()], 0)
    with pytest.raises(BackendMismatchError, match="two backends"):
        Tensor.cat([a, Tensor.from_data([[1.0, 2.0]], backend=burn_ndarray.NdArray())], 0)
    with pytest.raises(ValueError, match="at least one"):
        Tensor.cat([], 0)
    with pytest.raises(ShapeError, match="one shape"):
        Tensor.stack([a, Tensor.zeros((2, 2), backend=B)], 0)
    with pytest.raises(ShapeError, match="dim 2 is out of range"):
        Tensor.cat([a, a], 2)
