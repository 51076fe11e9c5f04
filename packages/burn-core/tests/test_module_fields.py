"""Module fields: constants kept but never visited or saved; nested list / tuple / dict paths are
the same for `map`, `visit` and records; records and `fork` keep ParamIds; lazy params stay lazy
under every operation that only needs shape and device, and initialize once under threads."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import namedtuple

import numpy as np
import pytest

import burn
from burn import nn
from burn.module import Module, Param

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")


@pytest.fixture(scope="module")
def dev():
    return nd.NdArray(float_dtype="float64").default_device()


class Resources(Module):
    """Params next to things that cannot be saved (or even copied)."""

    linear: nn.Linear
    lock: object
    handle: object
    db: object
    callback: object
    label: str = "resources"


@pytest.fixture
def db():
    conn = sqlite3.connect(":memory:")
    conn.execute("create table t (x integer)")
    yield conn
    conn.close()


def make_resources(dev, handle, db) -> Resources:
    return Resources(nn.LinearConfig(3, 2).init(dev), threading.Lock(), handle, db, print)


def test_constants_are_kept_by_every_transform_and_never_saved(dev, tmp_path, db) -> None:
    with open(tmp_path / "log.txt", "w") as handle:
        m = make_resources(dev, handle, db)
        record = m.into_record()
        assert list(record) == ["linear.weight", "linear.bias"]  # no lock, file, db or callback
        for out in (m.map(lambda _p, q: q.map(lambda t: t * 2.0)), m.no_grad(), m.to_device(dev), m.valid()):
            assert out.lock is m.lock and out.handle is handle and out.db is db and out.callback is print
            assert out.label == "resources"
        path = m.save_file(tmp_path / "model")
        other_db = sqlite3.connect(":memory:")
        try:
            fresh = Resources(nn.LinearConfig(3, 2).init(dev), threading.Lock(), None, other_db, len)
            loaded = fresh.load_file(path)
            # the loaded module keeps its own constants: nothing about them came from the file
            assert loaded.lock is fresh.lock and loaded.handle is None and loaded.db is other_db
            assert loaded.callback is len
            for (path_a, a), (_, b) in zip(loaded.named_params(), m.named_params(), strict=True):
                assert a.id == b.id, path_a
                np.testing.assert_allclose(a.val().to_numpy(), b.val().to_numpy(), rtol=1e-6)
        finally:
            other_db.close()
        # the resources still work after all that
        with m.lock:
            m.db.execute("insert into t values (1)")
        m.handle.write("ok")
        assert "lock" not in repr(m) and "linear: Linear  (8 params)" in repr(m)


# -- nested containers ------------------------------------------------------------------------
Pair = namedtuple("Pair", ["left", "right"])


class Tree(Module):
    stages: list
    branches: dict
    pair: tuple
    named: Pair
    head: nn.Linear


def make_tree(dev) -> Tree:
    lin = lambda i, o: nn.LinearConfig(i, o).init(dev)  # noqa: E731
    return Tree(
        stages=[[lin(2, 2), (lin(2, 3), "not a module")], {"x": lin(3, 3)}],
        branches={"b": [lin(2, 1)], "a": {"deep": (lin(1, 1),)}, 7: lin(1, 2)},
        pair=(lin(2, 2), 3.5),
        named=Pair(lin(2, 2), nn.Relu()),
        head=nn.LinearConfig(2, 2, bias=False).init(dev),
    )


EXPECTED_PATHS = [
    "stages.0.0.weight", "stages.0.0.bias", "stages.0.1.0.weight", "stages.0.1.0.bias",
    "stages.1.x.weight", "stages.1.x.bias",
    "branches.b.0.weight", "branches.b.0.bias", "branches.a.deep.0.weight", "branches.a.deep.0.bias",
    "branches.7.weight", "branches.7.bias",
    "pair.0.weight", "pair.0.bias", "named.0.weight", "named.0.bias",  # tuples by index, named or not
    "head.weight",
]  # fmt: skip


def test_map_visit_and_records_agree_on_deterministic_paths(dev) -> None:
    tree = make_tree(dev)
    visited: list[str] = []
    tree.visit(lambda path, _p: visited.append(path))
    mapped_paths: list[str] = []
    mapped = tree.map(lambda path, p: mapped_paths.append(path) or p.map(lambda t: t + 1.0))
    assert visited == mapped_paths == EXPECTED_PATHS
    assert [path for path, _ in make_tree(dev).named_params()] == EXPECTED_PATHS  # a rebuild agrees
    assert list(tree.into_record()) == EXPECTED_PATHS
    # containers keep their types and their constants
    assert type(mapped.named) is Pair and mapped.named.right is tree.named.right
    assert type(mapped.stages[0][1]) is tuple and mapped.stages[0][1][1] == "not a module"
    assert list(mapped.branches) == ["b", "a", 7] and mapped.pair[1] == 3.5
    for (path, a), (_, b) in zip(mapped.named_params(), tree.named_params(), strict=True):
        assert a.id == b.id, path
        np.testing.assert_allclose(a.val().to_numpy(), b.val().to_numpy() + 1.0)


def test_record_round_trip_into_a_fresh_lazy_tree_keeps_param_ids(dev) -> None:
    source = make_tree(dev)
    record = source.into_record()
    fresh = make_tree(dev)
    assert all(a.id != b.id for a, b in zip(fresh.params(), source.params(), strict=True))
    loaded = fresh.load_record(record)
    assert [(path, p.id) for path, p in loaded.named_params()] == [
        (path, p.id) for path, p in source.named_params()
    ]
    assert [str(p.id) for p in source.params()] == [record[path].id for path in record]  # ids as strings
    assert all(not p.is_initialized for p in fresh.params()), "load_record never mutates its input"
    again = make_tree(dev).load_record(loaded.into_record())
    for a, b in zip(again.params(), source.params(), strict=True):
        assert a.id == b.id
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy())


# -- lazy params ------------------------------------------------------------------------------
class Counting:
    """An initializer that counts its calls (and can be slow, to widen thread races)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls = 0
        self.delay = delay
        self._lock = threading.Lock()

    def __call__(self, device, require_grad):
        with self._lock:
            self.calls += 1
        time.sleep(self.delay)
        return burn.Tensor.ones((2, 3), device=device)


class Holder(Module):
    weight: Param
    bias: Param


def test_shape_only_operations_never_initialize(dev) -> None:
    init = Counting()
    m = Holder(Param.uninitialized(init, (2, 3), dev), Param.uninitialized(init, (2, 3), dev))
    assert m.num_params() == 12 and m.devices() == [dev]
    assert [p.shape for p in m.params()] == [(2, 3), (2, 3)]
    text = repr(m)
    assert "Param[2, 3], lazy" in text and "(12 params)" in text
    for out in (m.to_device(dev), m.no_grad(), m.fork(dev), m.valid(), m.map(lambda _p, p: p)):
        assert all(not p.is_initialized for p in out.params())
    frozen = m.weight.set_require_grad(False)
    assert not frozen.is_initialized and not frozen.require_grad and frozen.id == m.weight.id
    assert init.calls == 0
    m.into_record()  # saving needs the values: each param initializes once
    assert init.calls == 2
    m.into_record()
    assert init.calls == 2


def test_a_lazy_param_initializes_once_under_concurrent_use(dev) -> None:
    init = Counting(delay=0.05)
    param = Param.uninitialized(init, (2, 3), dev)
    barrier = threading.Barrier(8)
    seen = []

    def use() -> None:
        barrier.wait()
        seen.append(param.val())

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert init.calls == 1
    assert all(t is seen[0] for t in seen), "every thread sees the same tensor"


# -- fork on autodiff -----------------------------------------------------------------------------
def test_fork_keeps_ids_and_flags_and_starts_fresh_leaves() -> None:
    ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    AD = ad.Autodiff(nd.NdArray(float_dtype="float64"))  # noqa: N806
    dev = AD.default_device()
    layer = nn.LinearConfig(3, 2).init(dev)
    layer = layer.map(lambda path, p: p.no_grad() if path == "bias" else p)
    x = burn.Tensor.ones((4, 3), device=dev)
    grads = layer(x).sum().backward()
    forked = layer.fork(dev)
    assert [(path, p.id) for path, p in forked.named_params()] == [
        (path, p.id) for path, p in layer.named_params()
    ]
    assert forked.weight.require_grad and not forked.bias.require_grad
    assert forked.weight.val() is not layer.weight.val()
    np.testing.assert_array_equal(forked.weight.val().to_numpy(), layer.weight.val().to_numpy())
    with pytest.raises(ad.AutodiffError, match="created after the root"):
        forked.weight.val().grad(grads)  # a new leaf, not part of the old graph
    grads = forked(x).sum().backward()
    assert forked.weight.val().grad(grads) is not None and forked.bias.val().grad(grads) is None


@pytest.mark.parametrize("first", ["original", "copy"])
def test_copies_of_a_lazy_param_share_one_initialization(first) -> None:
    """A lazy model and its `valid()` / `no_grad()` / `map` copies hold one param under one id:
    whichever is used first, all see the same random values and the initializer runs once."""
    ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    AD = ad.Autodiff(nd.NdArray(float_dtype="float64"))  # noqa: N806
    calls = []

    def init(device, require_grad):
        calls.append(device)
        return burn.Tensor.random((2, 3), burn.Normal(0.0, 1.0), device=device)

    m = Holder(
        Param.uninitialized(init, (2, 3), AD.default_device()),
        Param.uninitialized(init, (2, 3), AD.default_device()),
    )
    copies = [m.valid(), m.no_grad(), m.map(lambda _p, p: p.map(lambda t: t * 2.0))]
    order = [m, *copies] if first == "original" else [*copies, m]
    values = {id(mod): [p.val().to_numpy() for p in mod.params()] for mod in order}
    assert len(calls) == 2, "each initializer runs once, shared by every copy"
    want = values[id(m)]
    for mod, factor in zip(copies, (1.0, 1.0, 2.0), strict=True):
        for got, ref in zip(values[id(mod)], want, strict=True):
            np.testing.assert_array_equal(got, ref * factor)
    assert copies[0].weight.val().backend is AD.inner and m.weight.val().backend is AD
    assert m.weight.val().is_require_grad() and not copies[1].weight.val().is_require_grad()
