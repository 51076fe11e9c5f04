"""Balanced gradient checkpointing: same gradients, fewer activations held by the graph."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from conftest import host, leaf, tensor

import burn
from burn import activation
from burn_autodiff import Autodiff, AutodiffError, Node
from burn_autodiff.checkpoint import SELF
from burn_ndarray import NdArray


def block_net(B: Autodiff, rng: np.random.Generator, depth: int = 3, width: int = 16) -> tuple:
    """A deep MLP whose layers are a matmul followed by a chain of memory-bound ops."""
    x = tensor(B, rng.standard_normal((8, width)))
    params = [
        (leaf(B, rng.standard_normal((width, width)) / 4), leaf(B, rng.standard_normal(width) / 4))
        for _ in range(depth)
    ]
    return x, params


def forward(x, params):
    h = x
    for w, b in params:
        z = h @ w + b
        h = activation.gelu(z) * activation.sigmoid(z) + (z * 0.5).tanh().exp() - 1.0
    return activation.log_softmax(h, 1).mean() + (h.clamp(-1.0, 1.0) ** 2).sum() * 1e-3


def graph_bytes(root) -> int:
    """Bytes of the distinct arrays the graph of `root` keeps alive (saved or for recompute)."""
    seen_nodes, seen_arrays, total = set(), set(), 0
    stack = [root._p.node]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen_nodes:
            continue
        seen_nodes.add(id(n))
        held = list(n.saved or ()) + (list(n.recompute[1]) if n.recompute else [])
        for item in held:
            if isinstance(item, np.ndarray) and id(item) not in seen_arrays:
                seen_arrays.add(id(item))
                total += item.nbytes
        stack.extend(n.parents)
    return total


@pytest.mark.parametrize("seed", [0, 1])
def test_same_gradients_as_without_checkpointing(seed: int) -> None:
    results = []
    for strategy in (None, "balanced"):
        B = Autodiff(NdArray(float_dtype="float64"), checkpointing=strategy)
        x, params = block_net(B, np.random.default_rng(seed))
        grads = forward(x, params).backward()
        results.append([host(p.grad(grads)) for pair in params for p in pair])
    for plain, ckpt in zip(*results, strict=True):
        np.testing.assert_allclose(ckpt, plain, rtol=1e-12, atol=1e-14)


def test_checkpointing_keeps_fewer_activations() -> None:
    held = {}
    for strategy in ("none", "balanced"):
        B = Autodiff(NdArray(float_dtype="float64"), checkpointing=strategy)
        x, params = block_net(B, np.random.default_rng(0), depth=4, width=32)
        loss = forward(x, params)
        gc.collect()
        held[strategy] = graph_bytes(loss)
    assert held["balanced"] < 0.5 * held["none"], held


def test_memory_bound_nodes_recompute_and_compute_bound_nodes_save() -> None:
    B = Autodiff(NdArray(float_dtype="float64"), checkpointing="balanced")
    x = leaf(B, [[1.0, -2.0], [0.5, 3.0]])
    w = leaf(B, [[0.5, 1.0], [-1.0, 2.0]])
    z = x @ w
    e = z.exp()
    y = e @ w
    assert z._p.node.recompute is None, "matmul output is a checkpoint"
    assert e._p.node.recompute is not None and e._p.node.saved == (SELF,), "exp recomputes its output"
    saved = y._p.node.saved
    assert any(s is e._p.node for s in saved), "matmul saves a marker to the recomputable input"
    grads = y.sum().backward()
    assert x.grad(grads) is not None


def test_a_consumed_checkpoint_cannot_be_recomputed() -> None:
    B = Autodiff(NdArray(float_dtype="float64"), checkpointing="balanced")
    x = leaf(B, [1.0, 2.0])
    e = x.exp()
    a = (e * e).sum()  # mul saves markers to e
    e.sum().backward()  # consumes e's node
    with pytest.raises(AutodiffError, match="consumed"):
        a.backward()


def test_checkpointing_is_reported() -> None:
    B = Autodiff(NdArray(), checkpointing="balanced")
    assert B.checkpointing == "balanced" and "checkpointing=balanced" in repr(B)
    assert Autodiff(NdArray()).checkpointing == "none"
    assert isinstance(Node, type)


def test_checkpointing_is_per_backend_instance() -> None:
    """Two decorators over one inner backend, one checkpointing, used side by side: each graph
    follows its own backend's strategy, and the gradients agree."""
    inner = NdArray(float_dtype="float64")
    plain, ckpt = Autodiff(inner), Autodiff(inner, checkpointing="balanced")
    assert burn.backend("autodiff(ndarray)").checkpointing == "none"  # opt-in, never the default
    values = np.array([[0.5, -1.0], [2.0, 0.25]])
    xs = {name: leaf(b, values) for name, b in (("plain", plain), ("ckpt", ckpt))}
    es = {name: (x @ x).exp() for name, x in xs.items()}
    assert es["plain"]._p.node.recompute is None and es["plain"]._p.node.saved[0] is not SELF
    assert es["ckpt"]._p.node.recompute is not None and es["ckpt"]._p.node.saved == (SELF,)
    grads = {name: (e * e).sum().backward() for name, e in es.items()}
    np.testing.assert_allclose(host(xs["ckpt"].grad(grads["ckpt"])), host(xs["plain"].grad(grads["plain"])))
