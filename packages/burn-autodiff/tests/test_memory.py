"""Memory: backward frees each saved activation and each intermediate gradient as soon as it is
consumed (not at the end of the pass), and training a real model (nn layers, BatchNorm running
statistics, an optimizer with state) for 10,000 steps keeps the number of live graph nodes flat."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
from conftest import leaf, tensor

from burn import nn, optim
from burn.module import Module
from burn_autodiff import Autodiff, Node
from burn_ndarray import NdArray


class Probe(NdArray):
    """An inner backend that, at every `float_mul` (the exp rule's only multiplication), counts how
    many watched saved activations and how many earlier `float_mul` results are still alive."""

    def __init__(self) -> None:
        super().__init__(float_dtype="float64")
        self.saved: list[weakref.ref[Any]] = []
        self.products: list[weakref.ref[Any]] = []
        self.record = False
        self.alive_saved: list[int] = []
        self.alive_products: list[int] = []

    def float_mul(self, lhs: Any, rhs: Any) -> Any:
        if not self.record:
            return super().float_mul(lhs, rhs)
        self.alive_saved.append(sum(r() is not None for r in self.saved))
        self.alive_products.append(sum(r() is not None for r in self.products))
        out = super().float_mul(lhs, rhs)
        self.products.append(weakref.ref(out))
        return out


def test_backward_frees_saved_activations_and_gradients_node_by_node() -> None:
    probe = Probe()
    B = Autodiff(probe)
    depth = 12
    h = leaf(B, np.random.default_rng(0).uniform(size=(32, 32)))
    for _ in range(depth):
        h = (h * 0.1).exp()  # exp saves its output; mul_scalar saves nothing
        probe.saved.append(weakref.ref(B.float_inner(h._p)))
    loss = h.sum()
    del h
    gc.collect()
    assert sum(r() is not None for r in probe.saved) == depth, "the graph holds every activation"
    probe.record = True
    loss.backward()
    # The k-th exp rule runs while only the activations of the nodes not yet visited remain...
    assert probe.alive_saved == list(range(depth, 0, -1)), probe.alive_saved
    # ...and while no gradient computed by an earlier rule is still held.
    assert max(probe.alive_products) == 0, probe.alive_products
    assert all(r() is None for r in probe.saved)


class Net(Module):
    fc1: nn.Linear
    norm: nn.BatchNorm
    drop: nn.Dropout
    fc2: nn.Linear

    def forward(self, x: Any) -> Any:
        h = self.norm(self.fc1(x)).tanh()
        return self.fc2(self.drop(h))


def _live_nodes() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is Node)


def test_training_a_module_for_10000_steps_does_not_grow_the_graph() -> None:
    B = Autodiff(NdArray(float_dtype="float64"))
    dev = B.default_device()
    B.seed(0)
    net = Net(
        nn.LinearConfig(3, 4).init(dev),
        nn.BatchNormConfig(4).init(dev),
        nn.DropoutConfig(0.1).init(),
        nn.LinearConfig(4, 1).init(dev),
    )
    rng = np.random.default_rng(0)
    x = tensor(B, rng.standard_normal((8, 3)))
    y = tensor(B, rng.standard_normal((8, 1)))
    opt = optim.SgdConfig(momentum=optim.MomentumConfig()).init()
    loss_fn = nn.MseLossConfig().init()
    gc.collect()
    before = _live_nodes()
    counts = []
    first = None
    for step in range(10_000):
        loss = loss_fn(net(x), y)
        first = loss.item() if first is None else first
        net = opt.step(0.01, net, optim.GradientsParams.from_grads(loss.backward(), net))
        if step % 1000 == 999:
            del loss
            gc.collect()
            counts.append(_live_nodes() - before)
    assert max(counts) <= 8, f"live graph nodes every 1000 steps: {counts}"
    assert counts[-1] <= counts[0], f"live graph nodes grow: {counts}"
    # the running statistics were updated all along without keeping any graph
    assert not net.norm.running_mean.val().is_require_grad()
    assert np.any(net.norm.running_mean.val().to_numpy() != 0)
    assert loss_fn(net(x), y).item() < first
