"""burn.Module and burn.Param: traversal order and paths, functional updates, constants, lazy init."""

from __future__ import annotations

import sqlite3
import threading

import numpy as np
import pytest

import burn
from burn.module import Module, Param, ParamId

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")


@pytest.fixture(scope="module")
def B():  # noqa: N802 - a backend, named like the docs name it
    return nd.NdArray()


def tensor(B, shape, value=1.0):  # noqa: N803
    return burn.Tensor.full(shape, value, backend=B)


class Linear(Module):
    weight: Param
    bias: Param | None = None

    def forward(self, x):
        out = x @ self.weight.val()
        return out if self.bias is None else out + self.bias.val()


class Attention(Module):
    query: Linear
    key: Linear


class Block(Module):
    attn: Attention
    scale: float = 1.0


class Net(Module):
    blocks: list
    heads: dict
    pair: tuple
    lock: object = None
    name: str = "net"


def make_linear(B, d_in, d_out):  # noqa: N803
    return Linear(Param.from_tensor(tensor(B, (d_in, d_out))), Param.from_tensor(tensor(B, (d_out,), 0.0)))


def make_net(B):  # noqa: N803
    blocks = [Block(Attention(make_linear(B, 2, 2), make_linear(B, 2, 2))) for _ in range(2)]
    heads = {"cls": make_linear(B, 2, 3), "reg": make_linear(B, 2, 1)}
    pair = (make_linear(B, 3, 3), 7)
    return Net(blocks=blocks, heads=heads, pair=pair, lock=threading.Lock())


def test_paths_are_depth_first_in_declaration_order(B) -> None:  # noqa: N803
    net = make_net(B)
    paths = [path for path, _ in net.named_params()]
    assert paths == [
        "blocks.0.attn.query.weight", "blocks.0.attn.query.bias",
        "blocks.0.attn.key.weight", "blocks.0.attn.key.bias",
        "blocks.1.attn.query.weight", "blocks.1.attn.query.bias",
        "blocks.1.attn.key.weight", "blocks.1.attn.key.bias",
        "heads.cls.weight", "heads.cls.bias", "heads.reg.weight", "heads.reg.bias",
        "pair.0.weight", "pair.0.bias",
    ]
    assert net.num_params() == 4 * (4 + 2) + (6 + 3) + (2 + 1) + (9 + 3)


def test_map_returns_a_new_module_and_never_mutates(B) -> None:  # noqa: N803
    net = make_net(B)
    before = {path: (p.id, p.val().to_numpy().copy()) for path, p in net.named_params()}
    doubled = net.map(lambda path, p: p.map(lambda t: t * 2.0))
    assert doubled is not net and type(doubled) is Net
    for path, p in net.named_params():
        assert p.id == before[path][0]
        np.testing.assert_array_equal(p.val().to_numpy(), before[path][1])
    for path, p in doubled.named_params():
        assert p.id == before[path][0], "map keeps ParamIds"
        np.testing.assert_array_equal(p.val().to_numpy(), before[path][1] * 2)
    assert doubled.pair[1] == 7 and doubled.name == "net"
    assert doubled.lock is net.lock, "constants are kept as they are, not copied"


def test_constants_are_never_visited(B, tmp_path) -> None:  # noqa: N803
    class WithResources(Module):
        weight: Param
        lock: object
        handle: object
        db: object
        callback: object

    with open(tmp_path / "f.txt", "w") as handle:
        db = sqlite3.connect(":memory:")
        m = WithResources(Param.from_tensor(tensor(B, (2,))), threading.Lock(), handle, db, print)
        seen = []
        m.visit(lambda path, p: seen.append(path))
        assert seen == ["weight"]
        mapped = m.map(lambda path, p: p.map(lambda t: t + 1.0))
        assert mapped.lock is m.lock and mapped.handle is handle and mapped.db is db
        db.close()


def test_custom_init_works_like_fields(B) -> None:  # noqa: N803
    class Custom(Module):
        def __init__(self, B, n):  # noqa: N803
            self.layers = [make_linear(B, 2, 2) for _ in range(n)]
            self.depth = n

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    m = Custom(B, 3)
    assert [p for p, _ in m.named_params()][:2] == ["layers.0.weight", "layers.0.bias"]
    out = m(tensor(B, (1, 2)))
    np.testing.assert_allclose(out.to_numpy(), [[8.0, 8.0]])


def test_visitor_and_mapper_objects(B) -> None:  # noqa: N803
    class Counter:
        def __init__(self):
            self.n = 0

        def visit_param(self, path, param):
            self.n += param.num_elements()

    class Freeze:
        def map_param(self, path, param):
            return param.set_require_grad(False) if path.startswith("heads") else param

    net = make_net(B)
    counter = Counter()
    net.visit(counter)
    assert counter.n == net.num_params()
    frozen = net.map(Freeze())
    flags = {path: p.require_grad for path, p in frozen.named_params()}
    assert not flags["heads.cls.weight"] and flags["blocks.0.attn.query.weight"]


def test_no_grad_devices_to_device(B) -> None:  # noqa: N803
    net = make_net(B)
    assert all(not p.require_grad for p in net.no_grad().params())
    assert net.devices() == [B.default_device()]
    moved = net.to_device(B.default_device())
    assert [p.id for p in moved.params()] == [p.id for p in net.params()]


def test_lazy_params_know_shape_and_device_and_init_once(B) -> None:  # noqa: N803
    calls = []

    def init(device, require_grad):
        calls.append(device)
        return burn.Tensor.ones((3, 4), device=device)

    p = Param.uninitialized(init, (3, 4), B.default_device())
    m = Linear(p)
    assert m.num_params() == 12 and p.shape == (3, 4) and p.device == B.default_device()
    assert not p.is_initialized and calls == []
    moved = m.to_device(B.default_device())
    assert calls == [] and not moved.weight.is_initialized
    assert m.weight.val().shape == (3, 4) and m.weight.val() is m.weight.val()
    assert len(calls) == 1 and "lazy" not in repr(p)


def test_lazy_initializer_shape_mismatch_is_reported(B) -> None:  # noqa: N803
    p = Param.uninitialized(lambda d, g: burn.Tensor.ones((2,), device=d), (3,), B.default_device())
    with pytest.raises(ValueError, match=r"initializer returned shape \(2,\), declared \(3,\)"):
        p.val()


def test_param_ids_are_stable_strings() -> None:
    pid = ParamId.new()
    assert len(str(pid)) == 16 and ParamId.parse(str(pid)) == pid
    with pytest.raises(ValueError, match="invalid ParamId 'xyz'"):
        ParamId.parse("xyz")


def test_call_forwards_and_modules_without_forward_refuse(B) -> None:  # noqa: N803
    lin = make_linear(B, 2, 3)
    assert lin(tensor(B, (4, 2))).shape == (4, 3)

    class Holder(Module):
        weight: Param

    with pytest.raises(TypeError, match="Holder has no forward"):
        Holder(Param.from_tensor(tensor(B, (1,))))(1)


def test_repr_is_a_tree_with_shapes_and_counts(B) -> None:  # noqa: N803
    text = repr(make_net(B))
    assert text.splitlines()[0].startswith("Net  (")
    assert "query: Linear  (6 params)" in text
    assert "weight: Param[2, 2]" in text
    assert "cls: Linear" in text


def test_int_params_never_require_grad(B) -> None:  # noqa: N803
    p = Param.from_tensor(burn.Tensor.from_data(np.arange(3), backend=B))
    assert p.kind is burn.Int and not p.require_grad


@pytest.mark.parametrize("require_grad", [True, False])
def test_stepped_is_with_value_for_an_update_of_the_own_value(require_grad: bool) -> None:
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    ad = burn.backend("autodiff(ndarray)")
    p = Param.from_tensor(tensor(ad, (2, 3)), require_grad=require_grad)
    new_value = burn.Tensor.from_inner(p.val().inner() * 2.0, ad)
    stepped, reference = p.stepped(new_value), p.with_value(new_value)
    for q in (stepped, reference):  # the same param either way
        expected = (p.id, require_grad, (2, 3), p.device, burn.Float)
        assert (q.id, q.require_grad, q.shape, q.device, q.kind) == expected
        assert q.val().is_require_grad() is require_grad
        assert q.val().to_data().to_numpy().tolist() == [[2.0] * 3] * 2
    if require_grad:  # a fresh leaf: gradients flow to it
        grads = (stepped.val() * 3.0).sum().backward()
        assert stepped.val().grad(grads).to_data().to_numpy().tolist() == [[3.0] * 3] * 2


def test_num_params_counts_trainable_params_and_all_values_apart(B) -> None:  # noqa: N803
    from burn import nn

    bn = nn.BatchNormConfig(4).init(B.default_device())
    assert bn.num_params() == 8  # gamma and beta; the running statistics are not trainable
    assert bn.num_params(trainable=False) == 16
    linear = nn.LinearConfig(3, 2).init(B.default_device())
    assert linear.num_params() == 8 and linear.no_grad().num_params() == 0
    assert linear.no_grad().num_params(trainable=False) == 8
