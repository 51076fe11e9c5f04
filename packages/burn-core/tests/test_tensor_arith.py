"""Arithmetic, comparison and Bool logic: dispatch by kind, scalar operands, reflected
operators, and the errors (kind, backend, shape) with their messages."""

from __future__ import annotations

import numpy as np
import pytest

from burn import Bool, DType, Float, Int, Tensor
from burn.errors import BackendMismatchError, DeviceError, KindError, ShapeError

burn_ndarray = pytest.importorskip("burn_ndarray")


@pytest.fixture(scope="module")
def B():
    return burn_ndarray.NdArray()


@pytest.fixture
def f(B):
    return Tensor.from_data([[1.0, -2.0], [3.0, 4.0]], backend=B)


@pytest.fixture
def i(B):
    return Tensor.from_data([[7, -7], [3, 4]], backend=B)


# -- dispatch by kind and operand ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("op", "ref"),
    [
        (lambda a, b: a + b, np.add),
        (lambda a, b: a - b, np.subtract),
        (lambda a, b: a * b, np.multiply),
        (lambda a, b: a / b, np.divide),
        (lambda a, b: a % b, np.mod),
        (lambda a, b: a**b, np.power),
        (lambda a, b: a.add(b), np.add),
        (lambda a, b: a.sub(b), np.subtract),
        (lambda a, b: a.mul(b), np.multiply),
        (lambda a, b: a.div(b), np.divide),
        (lambda a, b: a.remainder(b), np.mod),
        (lambda a, b: a.powf(b), np.power),
    ],
)
def test_float_binary_ops_with_tensor_and_scalar(B, op, ref):
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    y = np.array([0.5, 3.0], dtype=np.float32)  # broadcasts
    a, b = Tensor.from_data(x, backend=B), Tensor.from_data(y, backend=B)
    np.testing.assert_allclose(op(a, b).to_numpy(), ref(x, y), rtol=1e-6)
    out = op(a, 2)  # an int scalar is fine for a Float tensor
    assert out.kind is Float and out.dtype is DType.F32
    np.testing.assert_allclose(out.to_numpy(), ref(x, np.float32(2)), rtol=1e-6)
    np.testing.assert_allclose(op(a, np.float32(1.5)).to_numpy(), ref(x, np.float32(1.5)), rtol=1e-6)


def test_reflected_scalar_operators(f):
    x = f.to_numpy()
    np.testing.assert_allclose((2 - f).to_numpy(), 2 - x)
    np.testing.assert_allclose((2 / f).to_numpy(), 2 / x, rtol=1e-6)
    np.testing.assert_allclose((2**f).to_numpy(), 2.0**x, rtol=1e-6)
    np.testing.assert_allclose((7 % f).to_numpy(), np.mod(7, x))
    np.testing.assert_allclose((7 // f).to_numpy(), np.floor(7 / x))
    np.testing.assert_allclose((1 + f).to_numpy(), 1 + x)
    np.testing.assert_allclose((3 * f).to_numpy(), 3 * x)
    assert (2 - f).shape == f.shape and (2 / f).dtype is DType.F32


def test_int_arithmetic_floors_like_python(i):
    x = np.array([[7, -7], [3, 4]])
    assert (i / 2).tolist() == (x // 2).tolist()  # Burn's int div floors
    assert (i // 2).tolist() == (x // 2).tolist()
    assert (i % 3).tolist() == (x % 3).tolist()
    assert (i % -3).tolist() == (x % -3).tolist()
    assert (20 // i).tolist() == (20 // x).tolist()
    assert (20 - i).tolist() == (20 - x).tolist()
    assert (i + i).kind is Int and (i * 2).dtype is DType.I64
    assert (-i).tolist() == (-x).tolist() and abs(i).tolist() == abs(x).tolist()
    assert i.sign().tolist() == np.sign(x).tolist()


def test_float_floor_division(f):
    np.testing.assert_allclose((f // 3).to_numpy(), np.floor(f.to_numpy() / 3))
    np.testing.assert_allclose((f // f).to_numpy(), np.ones((2, 2)))


def test_matmul(B):
    a = Tensor.from_data(np.arange(6, dtype=np.float32).reshape(2, 3), backend=B)
    b = Tensor.from_data(np.arange(12, dtype=np.float32).reshape(3, 4), backend=B)
    np.testing.assert_allclose((a @ b).to_numpy(), a.to_numpy() @ b.to_numpy())
    batched = Tensor.zeros((5, 1, 2, 3), backend=B).matmul(Tensor.zeros((4, 3, 7), backend=B))
    assert batched.shape == (5, 4, 2, 7)


def test_matmul_errors(B, f, i):
    with pytest.raises(ShapeError, match=r"matmul: shapes \(2, 3\) and \(2, 3\): inner dims 3 and 2 differ"):
        Tensor.zeros((2, 3), backend=B) @ Tensor.zeros((2, 3), backend=B)
    with pytest.raises(ShapeError, match="rank >= 2"):
        Tensor.zeros((3,), backend=B) @ Tensor.zeros((3, 2), backend=B)
    with pytest.raises(ShapeError, match="batch dims"):
        Tensor.zeros((2, 2, 3), backend=B) @ Tensor.zeros((3, 3, 2), backend=B)
    with pytest.raises(KindError, match="matmul: expects Float or Int tensors, got a Bool tensor"):
        i.bool() @ i.bool()
    with pytest.raises(KindError, match="same kind"):
        f @ i
    with pytest.raises(TypeError, match="burn.Tensor"):
        f @ np.ones((2, 2))


# -- unary ops -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("exp", np.exp),
        ("log", np.log),
        ("log1p", np.log1p),
        ("sqrt", np.sqrt),
        ("neg", np.negative),
        ("recip", np.reciprocal),
        ("sin", np.sin),
        ("cos", np.cos),
        ("tanh", np.tanh),
        ("round", np.round),
        ("floor", np.floor),
        ("ceil", np.ceil),
        ("sign", np.sign),
        ("abs", np.abs),
    ],
)
def test_float_unary_ops(B, name, ref):
    x = np.array([0.5, 1.5, 2.5, 3.0], dtype=np.float32)
    out = getattr(Tensor.from_data(x, backend=B), name)()
    assert out.kind is Float
    np.testing.assert_allclose(out.to_numpy(), ref(x), rtol=1e-6)


@pytest.mark.parametrize(
    "name", ["exp", "log", "log1p", "sqrt", "recip", "sin", "cos", "tanh", "erf", "round"]
)
def test_float_only_ops_reject_int(i, name):
    with pytest.raises(KindError, match=f"{name}: expects a Float tensor, got a Int tensor of shape"):
        getattr(i, name)()


def test_pow_scalar_and_operators(f):
    np.testing.assert_allclose(f.powf_scalar(2).to_numpy(), f.to_numpy() ** 2)
    np.testing.assert_allclose((-f).to_numpy(), -f.to_numpy())
    assert (+f) is f
    np.testing.assert_allclose(abs(f).to_numpy(), np.abs(f.to_numpy()))


def test_clamp(f, i):
    assert f.clamp(-1, 2).tolist() == [[1.0, -1.0], [2.0, 2.0]]
    assert f.clamp_min(0).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert f.clamp_max(0).tolist() == [[0.0, -2.0], [0.0, 0.0]]
    assert f.clamp(max=1.0).tolist() == [[1.0, -2.0], [1.0, 1.0]]
    assert f.clamp() is f
    assert i.clamp(0, 5).tolist() == [[5, 0], [3, 4]]
    with pytest.raises(KindError, match="float scalar 0.5"):
        i.clamp(0.5, 2)
    with pytest.raises(ValueError, match="min 3 is greater than max 1"):
        f.clamp(3, 1)


def test_is_nan_is_inf(B, i):
    t = Tensor.from_data([np.nan, np.inf, -np.inf, 1.0], backend=B)
    assert t.is_nan().tolist() == [True, False, False, False]
    assert t.is_inf().tolist() == [False, True, True, False]
    assert i.is_nan().kind is Bool and not i.is_nan().any().item()


# -- kind errors -----------------------------------------------------------------------------------
def test_int_tensor_with_float_scalar_is_a_kind_error(i):
    with pytest.raises(KindError, match=r"add: an Int tensor and the float scalar 0\.5"):
        i + 0.5
    with pytest.raises(KindError, match="float scalar"):
        0.5 * i
    assert (i + np.int32(1)).tolist() == [[8, -6], [4, 5]]  # NumPy integers are ints


def test_float_and_int_tensors_do_not_mix(f, i):
    with pytest.raises(
        KindError, match=r"sub: a Float tensor of shape \(2, 2\).* and a Int tensor of shape \(2, 2\)"
    ):
        f - i
    with pytest.raises(KindError, match="same kind"):
        i.greater(f)


def test_bool_tensors_have_no_arithmetic(f):
    m = f > 0
    for op in (lambda: m + m, lambda: m * 2, lambda: -m, lambda: abs(m), lambda: m.exp(), lambda: +m):
        with pytest.raises(KindError, match="Bool"):
            op()


def test_unsupported_operands_raise_type_error(f):
    with pytest.raises(TypeError, match="unsupported operand of type str"):
        f + "a"
    with pytest.raises(TypeError, match="Tensor.from_data"):
        f * [1.0, 2.0]
    with pytest.raises(TypeError, match="ndarray"):  # NumPy defers to the tensor, which refuses
        np.ones((2, 2), dtype=np.float32) + f


# -- backend mismatch and diagnosis ----------------------------------------------------------------
def test_mixing_backends_is_an_error_even_where_numpy_would_work(f):
    other = Tensor.from_data([[1.0, 1.0], [1.0, 1.0]], backend=burn_ndarray.NdArray())
    for op in (
        lambda: f + other,
        lambda: f.mul(other),
        lambda: f == other,
        lambda: f @ other,
        lambda: f < other,
    ):
        with pytest.raises(BackendMismatchError, match="two backends, 'ndarray' .* and 'ndarray'"):
            op()


def test_broadcast_failure_names_op_and_shapes(B):
    a = Tensor.zeros((2, 3), backend=B)
    b = Tensor.zeros((4,), backend=B)
    with pytest.raises(
        ShapeError, match=r"add: shapes \(2, 3\) and \(4,\) cannot be broadcast together"
    ) as info:
        a + b
    assert info.value.__cause__ is not None  # the backend's own error stays attached
    with pytest.raises(ShapeError, match="greater_equal: shapes"):
        _ = a >= b


def test_device_mismatch_is_diagnosed_after_a_backend_failure():
    from burn.backend import Device

    class TwoDevices(burn_ndarray.NdArray):
        """ndarray with a second, fake device: primitives remember theirs in a side table."""

        def __init__(self):
            super().__init__()
            self.where = {}

        def devices(self):
            return [Device("ndarray", "cpu", owner=self), Device("ndarray", "other", owner=self)]

        def float_device(self, tensor):
            return self.where.get(id(tensor), self.devices()[0])

        def float_to_device(self, tensor, device):
            out = tensor.copy()
            self.where[id(out)] = device
            return out

        def float_add(self, lhs, rhs):
            if self.float_device(lhs) != self.float_device(rhs):
                raise RuntimeError("kernel launched with buffers of two contexts")
            return lhs + rhs

        def float_mask_where(self, tensor, mask, value):
            if self.float_device(tensor) != self.float_device(value):
                raise RuntimeError("kernel launched with buffers of two contexts")
            return super().float_mask_where(tensor, mask, value)

    D = TwoDevices()
    a = Tensor.zeros((2,), backend=D)
    b = a.to_device(D.devices()[1])
    assert b.device == D.devices()[1]
    with pytest.raises(DeviceError, match="add: tensors on two devices, ndarray:cpu and ndarray:other"):
        a + b
    with pytest.raises(DeviceError, match="mask_where: tensors on several devices .* on ndarray:other"):
        a.mask_where(a > 0, b)


def test_other_backend_failures_keep_their_type_with_a_note(B):
    class Failing(burn_ndarray.NdArray):
        def float_add(self, lhs, rhs):
            raise FloatingPointError("overflow in kernel")

    F = Failing()
    a = Tensor.zeros((2,), backend=F)
    with pytest.raises(FloatingPointError) as info:
        a + a
    assert any("burn: in add of a Float tensor of shape (2,)" in n for n in info.value.__notes__)


# -- comparisons -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("op", "ref"),
    [
        (lambda a, b: a == b, np.equal),
        (lambda a, b: a != b, np.not_equal),
        (lambda a, b: a > b, np.greater),
        (lambda a, b: a >= b, np.greater_equal),
        (lambda a, b: a < b, np.less),
        (lambda a, b: a <= b, np.less_equal),
        (lambda a, b: a.equal_elem(b), np.equal),
        (lambda a, b: a.lower_elem(b), np.less),
        (lambda a, b: a.greater_equal_elem(b), np.greater_equal),
    ],
)
@pytest.mark.parametrize("kind", [Float, Int])
def test_comparisons(B, op, ref, kind):
    x = np.array([[1, 2], [3, 4]])
    y = np.array([2, 2])
    a = Tensor.from_data(x, backend=B, kind=kind)
    b = Tensor.from_data(y, backend=B, kind=kind)
    out = op(a, b)
    assert out.kind is Bool
    assert out.tolist() == ref(x, y).tolist()
    assert op(a, 2).tolist() == ref(x, 2).tolist()


def test_reflected_comparisons(i):
    assert (3 < i).tolist() == (i > 3).tolist()
    assert (3 == i).tolist() == [[False, False], [True, False]]


def test_bool_equality(B):
    m = Tensor.from_data([True, False], backend=B)
    assert (m == m).tolist() == [True, True]
    assert (m != m).tolist() == [False, False]
    assert (m == True).tolist() == [True, False]  # noqa: E712 - the operator is what is tested
    assert (m == False).tolist() == [False, True]  # noqa: E712
    assert (m != 1).tolist() == [False, True]
    with pytest.raises(KindError, match="not ordered"):
        _ = m > m
    with pytest.raises(KindError, match="Bool"):
        _ = m < 1
    with pytest.raises(KindError, match="bool"):
        _ = m == 2


def test_eq_with_foreign_objects_is_false_and_hash_is_identity(f):
    assert (f == None) is False  # noqa: E711
    assert f != "text"
    assert f not in [None, "x"]
    d = {f: 1}
    assert d[f] == 1 and hash(f) == object.__hash__(f)
    g = f + 0
    assert g not in d


# -- Bool logic ------------------------------------------------------------------------------------
def test_bool_logic(B):
    a = Tensor.from_data([True, True, False, False], backend=B)
    b = Tensor.from_data([True, False, True, False], backend=B)
    assert (~a).tolist() == [False, False, True, True]
    assert (a & b).tolist() == [True, False, False, False]
    assert (a | b).tolist() == [True, True, True, False]
    assert (a ^ b).tolist() == [False, True, True, False]
    assert a.bool_and(b).tolist() == (a & b).tolist() and a.bool_not().tolist() == (~a).tolist()
    assert (a & True) is a and (a | False) is a and (a ^ False) is a
    assert (a & False).tolist() == [False] * 4 and (True | a).tolist() == [True] * 4
    assert (a ^ True).tolist() == (~a).tolist()


def test_bool_logic_errors(B, i):
    a = Tensor.from_data([True], backend=B)
    with pytest.raises(KindError, match="bool_not: expects a Bool tensor"):
        _ = ~i.float()  # on Int tensors `~ & | ^` are bitwise (tensor_ops_math)
    with pytest.raises(KindError, match="bool_and: expects Bool tensors"):
        i.float() & a
    with pytest.raises(KindError, match="bitwise_and: .*same kind"):
        i & a
    with pytest.raises(KindError, match="Bool"):
        a | i
    with pytest.raises(BackendMismatchError):
        a ^ Tensor.from_data([True], backend=burn_ndarray.NdArray())
    with pytest.raises(TypeError, match="unsupported operand"):
        a & "x"


def test_numpy_scalars_on_the_left_use_the_reflected_operators(B):
    t = Tensor.from_data([1.0, 2.0], backend=B, dtype="bfloat16")
    for out in (np.float32(2) * t, np.float64(3) - t, 2 - t, 2 / t):
        assert out.kind is Float and out.dtype is DType.BF16  # scalars keep the tensor's dtype
    assert (np.float64(3) - t).tolist() == [2.0, 1.0]
    i = Tensor.from_data([3, -3], backend=B, dtype="int32")
    assert (np.int64(2) * i).dtype is DType.I32 and (7 % i).tolist() == [1, -2]


def test_a_tensor_is_three_slots(f):
    assert not hasattr(f, "__dict__")
    with pytest.raises(AttributeError):
        f.extra = 1
