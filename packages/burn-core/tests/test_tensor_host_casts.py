"""Host exchange (to_data, NumPy, DLPack, scalars, repr, pickling), devices, and casts."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from burn import Bool, DType, Float, Int, Tensor
from burn.errors import DeviceError, DTypeError, ShapeError

burn_ndarray = pytest.importorskip("burn_ndarray")


@pytest.fixture(scope="module")
def B():
    return burn_ndarray.NdArray()


@pytest.fixture
def t(B):
    return Tensor.from_data([[1.5, -2.0], [3.0, 4.0]], backend=B)


# -- host data --------------------------------------------------------------------------------------
def test_to_data_and_numpy_are_read_only(t):
    data = t.to_data()
    assert data.shape == (2, 2) and data.dtype is DType.F32
    assert t.into_data() == data
    with pytest.raises(ValueError, match="read-only"):
        data.array[0, 0] = 9.0
    with pytest.raises(ValueError, match="read-only"):
        t.to_numpy()[0, 0] = 9.0
    assert t.tolist() == [[1.5, -2.0], [3.0, 4.0]]


def test_array_protocol(t):
    copied = np.array(t)  # copy=True: writable, independent
    copied[0, 0] = 100.0
    assert t.tolist()[0][0] == 1.5
    assert np.asarray(t).dtype == np.float32
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(t), [[1.5, -2.0], [3.0, 4.0]])


def test_dlpack(B, t):
    np.testing.assert_array_equal(np.from_dlpack(t), t.to_numpy())
    assert t.__dlpack_device__() == (1, 0)
    torch = pytest.importorskip("torch")
    assert torch.from_dlpack(t).tolist() == t.tolist()
    assert torch.from_dlpack(t[:, 1]).tolist() == [-2.0, 4.0]  # a non-contiguous view


def test_scalars_and_len(B, t):
    one = Tensor.from_data([[2.5]], backend=B)
    assert one.into_scalar() == 2.5 and one.item() == 2.5 and isinstance(one.item(), float)
    assert float(one) == 2.5 and int(one) == 2 and bool(one) is True
    i = Tensor.from_data([7], backend=B)
    assert i.item() == 7 and isinstance(i.item(), int)
    assert (i > 3).item() is True
    with pytest.raises(ShapeError, match=r"into_scalar: a tensor of shape \(2, 2\) has 4 elements"):
        t.item()
    with pytest.raises(ShapeError, match="ambiguous; use .any"):
        bool(t > 0)
    assert len(t) == 2
    with pytest.raises(TypeError, match="rank-0"):
        len(Tensor.from_data(1.0, backend=B))


def test_repr_shows_values_and_metadata(B, t):
    text = repr(t)
    assert text.startswith("Tensor([[ 1.5, -2. ],")
    assert "shape=(2, 2), dtype=float32, device=ndarray:cpu" in text
    assert str(t) == text
    big = Tensor.zeros((400, 400), backend=B)
    assert repr(big) == "Tensor(<160000 elements>, shape=(400, 400), dtype=float32, device=ndarray:cpu)"
    assert "..." in repr(Tensor.zeros((50, 50), backend=B))  # summarized
    bf = Tensor.from_data([1.0], backend=B, dtype="bfloat16")
    assert "dtype=bfloat16" in repr(bf) and "1." in repr(bf)


def test_copy_is_identity_and_pickle_round_trips(t, ndarray_registered):
    assert copy.copy(t) is t and copy.deepcopy({"a": t})["a"] is t
    back = pickle.loads(pickle.dumps(t.int()))
    assert back.kind is Int and back.tolist() == [[1, -2], [3, 4]] and back.backend.name == "ndarray"


# -- devices ----------------------------------------------------------------------------------------
def test_device_and_to_device(B, t):
    from burn.backend import Device

    assert t.device == Device("ndarray", "cpu") and t.backend is B
    moved = t.to_device(Device("ndarray", "cpu"))  # an equal device of another owner is this one
    assert moved.tolist() == t.tolist() and moved.backend is B
    with pytest.raises(DeviceError, match="to_device: device cuda:0 is not a device of backend 'ndarray'"):
        t.to_device(Device("cuda", 0))


# -- casts ------------------------------------------------------------------------------------------
def test_kind_casts(B, t):
    i = t.int()
    assert (i.kind, i.dtype, i.tolist()) == (Int, DType.I64, [[1, -2], [3, 4]])
    f = i.float()
    assert (f.kind, f.dtype) == (Float, DType.F32)
    m = Tensor.from_data([0.0, 0.5, -1.0], backend=B).bool()
    assert (m.kind, m.tolist()) == (Bool, [False, True, True])
    assert m.int().tolist() == [0, 1, 1] and m.float().tolist() == [0.0, 1.0, 1.0]
    assert i.bool().tolist() == [[True, True], [True, True]]
    assert t.float() is t and i.int() is i and m.bool() is m


def test_float_cast_to_the_backend_dtype(B):
    half = Tensor.from_data([1.0], backend=B, dtype="float16")
    assert half.float().dtype is DType.F32
    small = Tensor.from_data([1], backend=B, dtype="int8")
    assert small.int().dtype is DType.I64


@pytest.mark.parametrize(
    ("dtype", "kind"),
    [
        ("float64", Float),
        ("float16", Float),
        ("bfloat16", Float),
        ("int32", Int),
        ("uint8", Int),
        ("bool", Bool),
    ],
)
def test_cast_changes_kind_as_needed(t, dtype, kind):
    for source in (t, t.int(), t > 0):
        out = source.cast(dtype)
        assert out.kind is kind and out.dtype is DType(dtype)
        assert out.shape == (2, 2)
    assert t.cast("float32") is t


def test_cast_values(t):
    assert t.cast(DType.I32).tolist() == [[1, -2], [3, 4]]
    assert (t > 0).cast("float64").tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert t.int().cast("float16").tolist() == [[1.0, -2.0], [3.0, 4.0]]


def test_cast_errors(t):
    from burn.backend import Capabilities

    B = burn_ndarray.NdArray()
    object.__setattr__(B, "capabilities", Capabilities(dtypes=frozenset({DType.F32, DType.I64, DType.BOOL})))
    x = Tensor.zeros((2,), backend=B)
    with pytest.raises(DTypeError, match="cast: backend 'ndarray' does not support float16"):
        x.cast("float16")
    with pytest.raises(DTypeError, match="unknown dtype"):
        x.cast("float128")


def test_to_full_precision(B, t):
    for half in ("float16", "bfloat16"):
        assert t.cast(half).to_full_precision().dtype is DType.F32
    d = t.cast("float64")
    assert d.to_full_precision() is d
    assert t.int().to_full_precision().kind is Int
