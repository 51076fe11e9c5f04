"""Tensor autodiff methods call the backend hooks of the same name; checked with a tiny fake
autodiff backend that records the calls, plus the errors on plain backends and wrong kinds."""

from __future__ import annotations

import numpy as np
import pytest

from burn import Bool, Float, Int, Tensor
from burn.errors import BackendMismatchError, KindError

burn_ndarray = pytest.importorskip("burn_ndarray")


class Node:
    """A fake autodiff primitive: the inner array plus a require-grad flag."""

    def __init__(self, array, require_grad=False):
        self.array = array
        self.require_grad = require_grad


class FakeAutodiff(burn_ndarray.NdArray):
    """Float primitives are `Node`s; only the ops these tests use are wrapped."""

    ad_enabled = True
    name = "fakead(ndarray)"

    def __init__(self, inner):
        super().__init__()
        self._inner = inner
        self.calls = []

    @property
    def inner(self):
        return self._inner

    def float_from_data(self, data, device):
        return Node(self._inner.float_from_data(data, device))

    def float_into_data(self, tensor):
        return self._inner.float_into_data(tensor.array)

    def float_shape(self, tensor):
        return tensor.array.shape

    def float_get_dtype(self, tensor):
        return self._inner.float_get_dtype(tensor.array)

    def float_device(self, tensor):
        return self.default_device()

    def float_mul(self, lhs, rhs):
        return Node(lhs.array * rhs.array, lhs.require_grad or rhs.require_grad)

    def float_set_require_grad(self, tensor, require_grad):
        self.calls.append(("set_require_grad", require_grad))
        return Node(tensor.array, require_grad)

    def float_is_require_grad(self, tensor):
        return tensor.require_grad

    def float_detach(self, tensor):
        self.calls.append(("detach",))
        return Node(tensor.array)

    def backward(self, tensor):
        self.calls.append(("backward", tensor))
        return {"grads-of": tensor}

    def grad(self, tensor, grads):
        self.calls.append(("grad", tensor, grads))
        return tensor.array * 2 if tensor.require_grad else None

    def grad_remove(self, tensor, grads):
        self.calls.append(("grad_remove", tensor, grads))
        return tensor.array * 3

    def float_inner(self, tensor):
        return tensor.array

    def float_from_inner(self, tensor):
        return Node(tensor)


@pytest.fixture
def inner():
    return burn_ndarray.NdArray()


@pytest.fixture
def AD(inner):
    return FakeAutodiff(inner)


def test_require_grad_and_is_require_grad(AD):
    x = Tensor.from_data([1.0, 2.0], backend=AD)
    assert not x.is_require_grad()
    y = x.require_grad()
    assert y.is_require_grad() and y is not x and not x.is_require_grad()
    assert not y.set_require_grad(False).is_require_grad()
    assert AD.calls == [("set_require_grad", True), ("set_require_grad", False)]
    assert "require_grad=True" in repr(y)


def test_backward_grad_grad_remove_call_the_hooks(AD, inner):
    x = Tensor.from_data([1.0, 2.0], backend=AD).require_grad()
    loss = x * x
    grads = loss.backward()
    assert grads == {"grads-of": loss._p}
    g = x.grad(grads)
    assert g.backend is inner and g.kind is Float and g.tolist() == [2.0, 4.0]
    assert AD.calls[-1] == ("grad", x._p, grads)
    assert Tensor.from_data([1.0], backend=AD).grad(grads) is None  # no grad: None
    removed = x.grad_remove(grads)
    assert removed.backend is inner and removed.tolist() == [3.0, 6.0]
    assert AD.calls[-1][0] == "grad_remove"


def test_detach_inner_from_inner(AD, inner):
    x = Tensor.from_data([1.0, 2.0], backend=AD).require_grad()
    d = x.detach()
    assert not d.is_require_grad() and d.backend is AD and ("detach",) in AD.calls
    i = x.inner()
    assert i.backend is inner and isinstance(i._p, np.ndarray) and i.tolist() == [1.0, 2.0]
    back = Tensor.from_inner(i, backend=AD)
    assert back.backend is AD and isinstance(back._p, Node) and not back.is_require_grad()
    # Int and Bool primitives are shared by a decorator and its inner backend.
    n = Tensor.from_data([1, 2], backend=AD)
    assert n.inner().backend is inner and n.inner()._p is n._p
    assert Tensor.from_inner(n.inner(), backend=AD).backend is AD
    with pytest.raises(BackendMismatchError, match="is not the inner backend"):
        Tensor.from_inner(Tensor.from_data([1.0], backend=burn_ndarray.NdArray()), backend=AD)


def test_int_and_bool_tensors_cannot_require_grad(AD):
    for t in (Tensor.from_data([1, 2], backend=AD), Tensor.from_data([True], backend=AD)):
        with pytest.raises(KindError, match="require_grad: expects a Float tensor"):
            t.require_grad()
        with pytest.raises(KindError, match="only Float tensors carry gradients"):
            t.backward()
        assert not t.is_require_grad()
        assert t.set_require_grad(False) is t
        assert t.detach() is t
    assert Tensor.from_data([1], backend=AD).kind is Int
    assert Tensor.from_data([True], backend=AD).kind is Bool


def test_plain_backends_explain_how_to_get_autodiff():
    B = burn_ndarray.NdArray()
    x = Tensor.from_data([1.0], backend=B)
    for op in (
        x.require_grad,
        x.backward,
        lambda: x.grad({}),
        lambda: x.grad_remove({}),
        lambda: x.set_require_grad(True),
    ):
        with pytest.raises(TypeError, match=r"has no autodiff; use burn.backend\('autodiff\(ndarray\)'\)"):
            op()
    assert x.detach().tolist() == [1.0] and x.inner().backend is B and not x.is_require_grad()
    assert x.set_require_grad(False) is x


def test_real_autodiff_backend_when_installed():
    burn_autodiff = pytest.importorskip("burn_autodiff")
    AD = burn_autodiff.Autodiff(burn_ndarray.NdArray(float_dtype="float64"))
    x = Tensor.from_data([1.0, -2.0, 3.0], backend=AD).require_grad()
    grads = (x * x).sum().backward()
    assert x.grad(grads).tolist() == [2.0, -4.0, 6.0]
