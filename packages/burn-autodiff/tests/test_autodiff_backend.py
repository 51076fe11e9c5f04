"""The decorator itself: name, dtypes, devices, pass-through ops, options, plugin."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import host, leaf, tensor

import burn
from burn.backend import Backend, implemented_ops
from burn.backend.contract import op_facts
from burn.foundations.dtype import DType
from burn_autodiff import ADTensor, Autodiff
from burn_autodiff.backend import PASS_THROUGH
from burn_autodiff.ops.composed import BACKWARD_HELPERS
from burn_ndarray import NdArray


def test_identity_of_the_decorator(B: Autodiff, nd: NdArray) -> None:
    assert B.name == "autodiff(ndarray)"
    assert B.ad_enabled is True and nd.ad_enabled is False
    assert B.inner is nd
    assert B.float_dtype is DType.F64 and B.int_dtype is nd.int_dtype
    assert B.capabilities.dtypes == nd.capabilities.dtypes
    # Buffer reuse is the inner's: autodiff primitives hold arrays saved for backward.
    assert B.capabilities.features == (nd.capabilities.features - {"buffer_reuse"}) | {"autodiff"}
    assert "buffer_reuse" in nd.capabilities.features and not B._reuse
    assert B.options() == nd.options()
    assert "autodiff(ndarray)" in repr(B)


def test_devices_are_reowned(B: Autodiff, nd: NdArray) -> None:
    (device,) = B.devices()
    assert device == nd.default_device() and device.owner is B
    assert B.default_device().owner is B
    t = burn.Tensor.zeros((2,), device=B.default_device())
    assert t.backend is B and t.device.owner is B
    ints = burn.Tensor.arange(3, device=B.default_device())
    assert ints.backend is B and ints.device.owner is B
    # primitives handed to the inner backend carry its own device
    assert nd.float_device(B.float_inner(t._p)).owner is not B


def test_int_and_bool_ops_are_the_inner_bound_methods(B: Autodiff, nd: NdArray) -> None:
    assert len(PASS_THROUGH) > 80
    for name in PASS_THROUGH:
        assert name in vars(B), f"{name} is not bound on the instance"
        assert getattr(B, name) == getattr(nd, name), name  # same bound method (or ufunc)


def test_int_and_bool_to_float_give_untracked_autodiff_primitives(B: Autodiff) -> None:
    i = tensor(B, [1, 2, 3])
    f = i.float()
    assert isinstance(f._p, ADTensor) and f._p.node is None
    b = i > 1
    assert isinstance(b.float()._p, ADTensor)
    np.testing.assert_array_equal(host(b.float()), [0, 1, 1])


def test_every_float_module_and_activation_op_is_overridden() -> None:
    float_like = {op for op, facts in op_facts().items() if facts.family not in ("int", "bool")}
    missing = sorted(float_like - implemented_ops(Autodiff) - set(BACKWARD_HELPERS))
    assert not missing, f"ops falling back to burn-core defaults: {missing}"


def test_backward_helpers_run_on_the_inner_backend_or_compose(B: Autodiff) -> None:
    out = tensor(B, [[0.0, 2.0, -1.0]])
    g = tensor(B, [[1.0, 1.0, 1.0]])
    res = B.relu_backward(out._p, g._p)
    assert isinstance(res, ADTensor) and res.node is None
    np.testing.assert_array_equal(B.float_inner(res), [[0.0, 1.0, 0.0]])
    # with a tracked input, burn-core's composition runs and is itself differentiable
    x = leaf(B, [1.0, -2.0])
    y = B.sigmoid_backward(x._p, tensor(B, [1.0, 1.0])._p)  # x * (1 - x)
    assert y.node is not None
    grads = B.backward(B.float_sum(y))
    np.testing.assert_allclose(B.grad(x._p, grads), [1 - 2 * 1.0, 1 - 2 * -2.0])


def test_seed_and_random_go_through_the_inner_backend(B: Autodiff, nd: NdArray) -> None:
    B.seed(7)
    a = host(burn.Tensor.random((4,), backend=B))
    nd.seed(7)
    b = host(burn.Tensor.random((4,), backend=nd))
    np.testing.assert_array_equal(a, b)
    assert B.rng is nd.rng


def test_building_keeps_the_inner_generator_state(nd: NdArray) -> None:
    nd.seed(3)
    expected = np.random.default_rng(3).uniform(size=2)
    Autodiff(nd)
    np.testing.assert_array_equal(nd.rng.uniform(size=2), expected)


def test_bad_construction_arguments(nd: NdArray) -> None:
    with pytest.raises(TypeError, match="Backend"):
        Autodiff("ndarray")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="checkpointing"):
        Autodiff(nd, checkpointing="everything")


def test_plugin_builds_and_caches_by_name() -> None:
    a = burn.backend("autodiff(ndarray)", float_dtype="float64")
    assert isinstance(a, Autodiff) and isinstance(a.inner, NdArray)
    assert a is burn.backend("autodiff(ndarray)", float_dtype="float64")
    assert a.inner is burn.backend("ndarray", float_dtype="float64")
    assert a.float_dtype is DType.F64


def test_autodiff_of_autodiff_gives_second_derivatives(B: Autodiff) -> None:
    # The outer rules compute on the inner autodiff backend, so they are recorded there.
    outer = Autodiff(B)
    assert outer.name == "autodiff(autodiff(ndarray))" and isinstance(outer, Backend)
    x_inner = leaf(B, [3.0, -1.0])
    x = burn.Tensor.from_inner(x_inner, backend=outer).require_grad()
    dy = x.grad((x * x * x).sum().backward())  # 3x^2, still tracked on B
    assert dy.backend is B and dy.is_require_grad()
    np.testing.assert_allclose(host(dy), [27.0, 3.0])
    np.testing.assert_allclose(host(x_inner.grad(dy.sum().backward())), [18.0, -6.0])  # 6x


def test_inner_and_from_inner_round_trip() -> None:
    B = burn.backend("autodiff(ndarray)", float_dtype="float64")
    x = leaf(B, [1.0, 2.0])
    inner = x.inner()
    assert inner.backend is B.inner and not isinstance(inner._p, ADTensor)
    back = burn.Tensor.from_inner(inner)
    assert back.backend is B and back.is_require_grad() is False
    np.testing.assert_array_equal(host(back), [1.0, 2.0])
    ints = tensor(B, [1, 2]).inner()
    assert ints.backend is B.inner


def test_fused_adam_step_runs_inner_or_composes(B: Autodiff) -> None:
    p, g, m = (tensor(B, [0.5, -1.0]) for _ in range(3))
    v = tensor(B, [0.25, 1.0])  # a second moment is never negative
    new, m1, v1 = B.float_adam_step(p._p, g._p, m._p, v._p, 0.9, 0.999, 0.1, 1e-5)
    assert all(isinstance(x, ADTensor) and x.node is None for x in (new, m1, v1))
    np.testing.assert_allclose(B.float_inner(m1), [0.5, -1.0], rtol=1e-6)  # 0.9 m + 0.1 g with m == g
    # A tracked param (never the case in burn.optim, which steps inner tensors) is differentiated
    # through the default composition: d(param - update)/d(param) = 1.
    x = leaf(B, [0.5, -1.0])
    tracked, _, _ = B.float_adam_step(x._p, g._p, None, None, 0.9, 0.999, 0.1, 1e-5)
    assert tracked.node is not None
    grads = B.backward(B.float_sum(tracked))
    np.testing.assert_allclose(B.grad(x._p, grads), [1.0, 1.0])
