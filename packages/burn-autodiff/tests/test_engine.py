"""Backward: seeds, accumulation, graph consumption, retained gradients, and the errors."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from conftest import host, leaf, tensor

import burn
from burn.errors import BackendMismatchError, KindError
from burn_autodiff import Autodiff, AutodiffError, Gradients, Node
from burn_ndarray import NdArray


def test_chain_rule_through_a_small_network(B: Autodiff) -> None:
    x = leaf(B, [[1.0, -2.0]])
    w = leaf(B, [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
    y = (x @ w).tanh().sum()
    grads = y.backward()
    z = np.array([[1.0, -2.0]]) @ np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
    dz = 1 - np.tanh(z) ** 2
    np.testing.assert_allclose(host(w.grad(grads)), np.array([[1.0], [-2.0]]) @ dz)
    np.testing.assert_allclose(host(x.grad(grads)), dz @ np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]).T)


def test_gradients_object(B: Autodiff) -> None:
    x = leaf(B, [1.0, 2.0])
    y = leaf(B, [3.0])
    grads = (x * y).sum().backward()
    assert isinstance(grads, Gradients)
    assert len(grads) == 2
    assert sorted(grads.node_ids()) == sorted([x._p.node.id, y._p.node.id])
    assert "2 tensors" in repr(grads)
    np.testing.assert_array_equal(host(y.grad(grads)), [3.0])


def test_a_leaf_can_be_used_in_several_backward_passes(B: Autodiff) -> None:
    w = leaf(B, [2.0])
    for k in (1.0, 2.0, 3.0):
        grads = (w * k).sum().backward()
        np.testing.assert_array_equal(host(w.grad(grads)), [k])


def test_backward_consumes_the_graph(B: Autodiff) -> None:
    x = leaf(B, [1.0, 2.0])
    h = x.exp()
    loss = h.sum()
    loss.backward()
    node = h._p.node
    assert node.saved is None and node.parents == ()
    with pytest.raises(AutodiffError, match="already consumed"):
        loss.backward()
    with pytest.raises(AutodiffError, match="already consumed"):
        (h * 2.0).sum().backward()
    # a detached copy is a fresh start
    grads = (h.detach().require_grad() * 2.0).sum().backward()
    assert len(grads) == 1


def test_set_require_grad_true_on_an_intermediate_keeps_its_gradient(B: Autodiff) -> None:
    x = leaf(B, [1.0, 2.0])
    h = (x * 3.0).set_require_grad(True)
    assert h.is_require_grad()
    grads = (h * h).sum().backward()
    np.testing.assert_allclose(host(h.grad(grads)), [6.0, 12.0])
    np.testing.assert_allclose(host(x.grad(grads)), [18.0, 36.0])
    h2 = x * 5.0
    h2.sum().backward()
    with pytest.raises(AutodiffError, match="consumed"):
        h2.set_require_grad(True)


def test_intermediate_without_request_has_no_gradient(B: Autodiff) -> None:
    x = leaf(B, [1.0])
    h = x * 2.0
    grads = (h * h).sum().backward()
    assert h.grad(grads) is None
    assert h.is_require_grad() is True  # gradients flowed through it


def test_gradient_dtype_follows_the_leaf_when_ops_promote(nd: NdArray) -> None:
    B = Autodiff(NdArray(float_dtype="float32"))
    x = tensor(B, np.array([1.0, 2.0], np.float32)).require_grad()
    y = tensor(B, np.array([3.0, 4.0]), dtype=burn.float64)
    grads = (x * y).sum().backward()  # float32 * float64 -> float64 result
    g = x.grad(grads)
    assert g.dtype is burn.float32
    np.testing.assert_array_equal(host(g), [3.0, 4.0])


# -- errors ----------------------------------------------------------------------------------
def test_backward_without_a_graph_is_an_error(B: Autodiff) -> None:
    x = tensor(B, [1.0, 2.0])
    with pytest.raises(AutodiffError, match=r"no graph.*require_grad") as info:
        (x * 2.0).sum().backward()
    assert "(1,)" in str(info.value) and "float64" in str(info.value)


def test_require_grad_on_int_or_bool_is_a_kind_error(B: Autodiff) -> None:
    with pytest.raises(KindError):
        tensor(B, [1, 2]).require_grad()
    with pytest.raises(KindError):
        tensor(B, [True]).set_require_grad(True)


def test_gradients_of_a_later_graph_are_refused(B: Autodiff) -> None:
    w = leaf(B, [1.0])
    grads = (w * 2.0).sum().backward()
    w2 = leaf(B, host(w) - 0.1)  # e.g. the parameter after an optimizer step
    with pytest.raises(AutodiffError, match="created after the root"):
        w2.grad(grads)
    with pytest.raises(AutodiffError, match="created after the root"):
        w2.grad_remove(grads)


def test_gradients_of_another_backend_are_refused(B: Autodiff) -> None:
    other = Autodiff(NdArray(float_dtype="float64"))
    x = leaf(B, [1.0])
    y = leaf(other, [1.0])
    grads = (y * 2.0).sum().backward()
    with pytest.raises(BackendMismatchError, match="Gradients come from backend"):
        x.grad(grads)


def test_grad_needs_a_gradients_object(B: Autodiff) -> None:
    x = leaf(B, [1.0])
    with pytest.raises(TypeError, match="expected the Gradients returned by backward"):
        x.grad({"x": 1})


def test_autodiff_hooks_on_a_plain_backend_point_to_autodiff(nd: NdArray) -> None:
    x = tensor(nd, [1.0])
    with pytest.raises(TypeError, match=r"autodiff\(ndarray\)"):
        x.require_grad()


# -- memory ----------------------------------------------------------------------------------
def test_saved_activations_are_freed_by_backward(B: Autodiff) -> None:
    x = leaf(B, np.ones((4, 4)))
    h = x.exp()  # exp saves its output
    saved = weakref.ref(B.float_inner(h._p))
    loss = (h * 2.0).sum()
    del h
    gc.collect()
    assert saved() is not None, "the graph keeps the saved activation until backward"
    loss.backward()
    assert saved() is None, "backward must release saved activations"


def _live_nodes() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is Node)


def test_no_graph_growth_over_10000_training_steps(B: Autodiff) -> None:
    rng = np.random.default_rng(0)
    x = tensor(B, rng.standard_normal((4, 3)))
    target = tensor(B, rng.standard_normal((4, 1)))
    w = leaf(B, rng.standard_normal((3, 1)))
    b = leaf(B, [0.0])
    gc.collect()
    before = _live_nodes()
    peak = 0
    for step in range(10_000):
        loss = ((x @ w + b).tanh() - target).powf_scalar(2.0).mean()
        grads = loss.backward()
        gw, gb = w.grad(grads), b.grad(grads)
        w = tensor(B, host(w) - 0.01 * host(gw)).require_grad()
        b = tensor(B, host(b) - 0.01 * host(gb)).require_grad()
        if step % 1000 == 0:
            peak = max(peak, _live_nodes() - before)
    del loss, grads
    gc.collect()
    assert peak <= 20, f"{peak} graph nodes alive during training: the graph grows"
    assert _live_nodes() - before <= 2, "only the two current parameters' leaves may stay"


@pytest.mark.parametrize("tracked", ["lhs", "rhs"])
def test_matmul_with_one_constant_side_broadcasts_back(B: Autodiff, tracked: str) -> None:
    rng = np.random.default_rng(1)
    x_np, w_np = rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 5))
    x = leaf(B, x_np) if tracked == "lhs" else tensor(B, x_np)
    w = leaf(B, w_np) if tracked == "rhs" else tensor(B, w_np)
    grads = (x @ w).sum().backward()
    if tracked == "lhs":
        np.testing.assert_allclose(host(x.grad(grads)), np.broadcast_to(w_np.sum(1), (3, 2, 4)))
        assert w.grad(grads) is None
    else:
        np.testing.assert_allclose(host(w.grad(grads)), np.broadcast_to(x_np.sum((0, 1))[:, None], (4, 5)))
        assert x.grad(grads) is None
