"""Train / eval mode: ``module.train()`` / ``.eval()`` / ``.auto_mode()`` return copies with the mode
set on every submodule; BatchNorm and Dropout obey it; with no explicit mode they follow Burn's
rule (train on autodiff backends), and a BatchNorm frozen with ``no_grad()`` keeps its statistics.
The mode is a constant: kept by map / load_record, never saved, cleared by ``valid()``."""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import nn
from burn.module import Module

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

RNG = np.random.default_rng(19)


@pytest.fixture(scope="module")
def AD():  # noqa: N802 - a backend, named like the docs name it
    return ad.Autodiff(nd.NdArray(float_dtype="float64"))


def tensor(dev, array):
    return burn.Tensor.from_data(np.asarray(array, dtype=np.float64), device=dev)


class Block(Module):
    norm: nn.BatchNorm
    drop: nn.Dropout
    heads: list
    named: dict

    def forward(self, x):
        return self.drop(self.norm(x))


def block(dev) -> Block:
    return Block(
        norm=nn.BatchNormConfig(3).init(dev),
        drop=nn.DropoutConfig(0.5).init(),
        heads=[nn.LinearConfig(3, 2).init(dev), nn.Identity()],
        named={"ln": nn.LayerNormConfig(3).init(dev)},
    )


def modules(m: Module) -> list[Module]:
    return [m, m.norm, m.drop, *m.heads, m.named["ln"]]


def stats(bn: nn.BatchNorm) -> tuple[np.ndarray, np.ndarray]:
    return bn.running_mean.val().to_numpy().copy(), bn.running_var.val().to_numpy().copy()


def test_train_and_eval_set_every_submodule_and_leave_the_original(AD) -> None:
    m = block(AD.default_device())
    assert all(x.training_mode is None for x in modules(m))
    ev = m.eval()
    assert all(x.training_mode is False for x in modules(ev))
    tr = ev.train()
    assert all(x.training_mode is True for x in modules(tr))
    assert all(x.training_mode is None for x in modules(tr.auto_mode()))
    assert all(x.training_mode is None for x in modules(m)), "train()/eval() must not mutate"
    assert ev.train(False).norm.training_mode is False
    # Params are shared, not copied: same ids and the very same tensors.
    for (pa, a), (pb, b) in zip(m.named_params(), ev.named_params(), strict=True):
        assert pa == pb and a is b


def test_mode_survives_map_and_load_record_and_is_never_saved(AD, tmp_path) -> None:
    dev = AD.default_device()
    m = block(dev)
    ev = m.eval()
    assert ev.to_device(dev).norm.training_mode is False
    assert ev.no_grad().drop.training_mode is False
    assert ev.fork(dev).named["ln"].training_mode is False
    record = ev.into_record()
    assert list(record) == list(m.into_record()) == [path for path, _ in m.named_params()]
    assert ev.load_record(m.into_record()).norm.training_mode is False
    assert m.load_record(record).norm.training_mode is None
    path = ev.save_file(tmp_path / "model")
    assert block(dev).load_file(path).norm.training_mode is None
    assert b"train" not in path.read_bytes()
    # valid() clears the mode: the inner backend then infers, as before.
    valid = m.train().valid()
    assert all(x.training_mode is None for x in modules(valid))


def test_batch_norm_eval_on_autodiff_uses_frozen_statistics_and_takes_gradients(AD) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    dev = AD.default_device()
    bn = nn.BatchNormConfig(3).init(dev)
    values = {
        "gamma": RNG.uniform(0.5, 2, 3),
        "beta": RNG.standard_normal(3),
        "running_mean": RNG.standard_normal(3),
        "running_var": RNG.uniform(0.5, 2, 3),
    }
    bn = bn.map(lambda path, q: q.with_value(tensor(dev, values[path]))).eval()
    before = stats(bn)
    x = RNG.standard_normal((4, 3, 5))
    xt = tensor(dev, x).require_grad()
    out = bn(xt)
    w = RNG.standard_normal(out.shape)
    grads = (out * tensor(dev, w)).sum().backward()
    np.testing.assert_array_equal(stats(bn)[0], before[0])
    np.testing.assert_array_equal(stats(bn)[1], before[1])

    ref = torch.nn.BatchNorm1d(3, dtype=torch.float64)
    with torch.no_grad():
        for name, path in (("weight", "gamma"), ("bias", "beta"), ("running_mean", "running_mean"),
                           ("running_var", "running_var")):
            getattr(ref, name).copy_(torch.tensor(dict(bn.named_params())[path].val().to_numpy()))
    ref.eval()
    x_ref = torch.tensor(x, requires_grad=True)
    out_ref = ref(x_ref)
    out_ref.backward(torch.tensor(w))
    np.testing.assert_allclose(out.to_numpy(), out_ref.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(xt.grad(grads).to_numpy(), x_ref.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(bn.gamma.val().grad(grads).to_numpy(), ref.weight.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(bn.beta.val().grad(grads).to_numpy(), ref.bias.grad.numpy(), atol=1e-10)


def test_batch_norm_statistics_update_only_in_training(AD) -> None:
    dev = AD.default_device()
    x = RNG.standard_normal((6, 3, 2)) * 2 + 1
    fresh = stats(nn.BatchNormConfig(3).init(dev))

    auto = nn.BatchNormConfig(3).init(dev)  # no mode, autodiff backend: trains
    auto(tensor(dev, x))
    assert not np.allclose(stats(auto)[0], fresh[0])

    frozen = nn.BatchNormConfig(3).init(dev).no_grad()  # no mode, frozen: infers, stats kept
    frozen(tensor(dev, x))
    np.testing.assert_array_equal(stats(frozen)[0], fresh[0])

    forced = nn.BatchNormConfig(3).init(dev).no_grad().train()  # explicit train wins
    forced(tensor(dev, x))
    np.testing.assert_allclose(stats(forced)[0], stats(auto)[0], rtol=1e-12)

    # A plain backend infers by default, and trains (updating statistics) when told to.
    plain_dev = AD.inner.default_device()
    plain = nn.BatchNormConfig(3).init(plain_dev)
    plain(tensor(plain_dev, x))
    np.testing.assert_array_equal(stats(plain)[0], fresh[0])
    trained = plain.train()
    out = trained(tensor(plain_dev, x))
    np.testing.assert_allclose(stats(trained)[0], stats(auto)[0], rtol=1e-12)
    np.testing.assert_allclose(stats(trained)[1], stats(auto)[1], rtol=1e-12)
    np.testing.assert_allclose(out.to_numpy().mean(axis=(0, 2)), 0.0, atol=1e-12)


def test_dropout_obeys_the_mode(AD) -> None:
    dev, plain_dev = AD.default_device(), AD.inner.default_device()
    drop = nn.DropoutConfig(0.5).init()
    ones = np.ones((20, 20))
    x = tensor(dev, ones)
    assert drop.eval()(x) is x
    assert (drop(x).to_numpy() == 0).any()  # no mode: autodiff trains
    p = tensor(plain_dev, ones)
    assert drop(p) is p  # no mode: a plain backend infers
    dropped = drop.train()(p).to_numpy()
    assert (dropped == 0).any() and set(np.unique(dropped)) <= {0.0, 2.0}
    assert drop.train().is_training() and not drop.is_training() and drop.is_training(x)


def test_a_whole_model_in_eval_mode_is_deterministic_on_autodiff(AD) -> None:
    dev = AD.default_device()
    m = block(dev).eval()
    x = tensor(dev, RNG.standard_normal((4, 3)))
    a, b = m(x).to_numpy(), m(x).to_numpy()
    np.testing.assert_array_equal(a, b)
    assert m(x).backward() is not None
