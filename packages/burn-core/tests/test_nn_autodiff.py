"""burn.nn under ``autodiff(ndarray)``: gradients reach every trainable param of every layer and
never a frozen param or a running statistic; Dropout and BatchNorm train on the autodiff backend
and infer after ``valid()``; ``valid()`` keeps ParamIds; nested modules keep deterministic paths."""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import nn
from burn.module import Module

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

RNG = np.random.default_rng(5)


@pytest.fixture(scope="module")
def AD():  # noqa: N802 - a backend, named like the docs name it
    return ad.Autodiff(nd.NdArray(float_dtype="float64"))


@pytest.fixture(scope="module")
def dev(AD):  # noqa: N803
    return AD.default_device()


def tensor(dev, array, **kw):
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


def floats(dev, *shape):
    return tensor(dev, RNG.standard_normal(shape))


def weighted_sum(out):
    """A scalar whose gradient is random, so that no param gets an all-zero gradient by symmetry
    (e.g. the gamma of a norm followed by a plain sum)."""
    w = burn.Tensor.from_data(RNG.standard_normal(out.shape), device=out.device)
    return (out * w).sum()


# Each case: a layer (built on the autodiff device) and a function running it to a tensor.
CASES = {
    "linear": (lambda d: nn.LinearConfig(4, 3).init(d), lambda m, d: m(floats(d, 2, 4))),
    "conv1d": (
        lambda d: nn.Conv1dConfig(2, 3, 3, padding="same").init(d),
        lambda m, d: m(floats(d, 2, 2, 6)),
    ),
    "conv2d": (
        lambda d: nn.Conv2dConfig((2, 4), (3, 3), groups=2, stride=(2, 1)).init(d),
        lambda m, d: m(floats(d, 2, 2, 7, 6)),
    ),
    "conv_transpose2d": (
        lambda d: nn.ConvTranspose2dConfig((2, 3), (2, 3), stride=(2, 2)).init(d),
        lambda m, d: m(floats(d, 2, 2, 3, 3)),
    ),
    "batch_norm": (lambda d: nn.BatchNormConfig(3).init(d), lambda m, d: m(floats(d, 4, 3, 5))),
    "layer_norm": (lambda d: nn.LayerNormConfig(5).init(d), lambda m, d: m(floats(d, 2, 3, 5))),
    "group_norm": (lambda d: nn.GroupNormConfig(2, 4).init(d), lambda m, d: m(floats(d, 2, 4, 3))),
    "rms_norm": (lambda d: nn.RmsNormConfig(5).init(d), lambda m, d: m(floats(d, 2, 3, 5))),
    "embedding": (
        lambda d: nn.EmbeddingConfig(6, 3).init(d),
        lambda m, d: m(tensor(d, [[0, 5, 2], [1, 1, 3]], kind=burn.Int)),
    ),
    "lstm": (lambda d: nn.LstmConfig(3, 4).init(d), lambda m, d: m(floats(d, 2, 3, 3))[0]),
    "gru": (lambda d: nn.GruConfig(3, 4).init(d), lambda m, d: m(floats(d, 2, 3, 3))),
    "gru_reset_before": (
        lambda d: nn.GruConfig(3, 4, reset_after=False).init(d),
        lambda m, d: m(floats(d, 2, 3, 3)),
    ),
    "mha": (
        lambda d: nn.MultiHeadAttentionConfig(8, 2, dropout=0.1).init(d),
        lambda m, d: m(nn.MhaInput(floats(d, 2, 3, 8), floats(d, 2, 4, 8), floats(d, 2, 4, 8))).context,
    ),
    "encoder_post_norm": (
        lambda d: nn.TransformerEncoderConfig(8, 12, 2, 2, dropout=0.1).init(d),
        lambda m, d: m(floats(d, 2, 3, 8)),
    ),
    "encoder_pre_norm": (
        lambda d: nn.TransformerEncoderConfig(8, 12, 2, 1, norm_first=True, quiet_softmax=True).init(d),
        lambda m, d: m(floats(d, 2, 3, 8)),
    ),
    "decoder": (
        lambda d: nn.TransformerDecoderConfig(8, 12, 2, 1, norm_first=True).init(d),
        lambda m, d: m(nn.TransformerDecoderInput(floats(d, 2, 3, 8), floats(d, 2, 4, 8))),
    ),
    "prelu": (lambda d: nn.PReluConfig(3).init(d), lambda m, d: m(floats(d, 2, 3, 4))),
    "swiglu": (lambda d: nn.SwiGluConfig(4, 5, bias=True).init(d), lambda m, d: m(floats(d, 2, 4))),
}
RUNNING_STATS = {"running_mean", "running_var"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_reaches_every_trainable_param(dev, name) -> None:
    build, run = CASES[name]
    layer = build(dev)
    grads = weighted_sum(run(layer, dev)).backward()
    seen = 0
    for path, param in layer.named_params():
        grad = param.val().grad(grads)
        if path.split(".")[-1] in RUNNING_STATS:
            assert not param.require_grad and grad is None, path
            continue
        assert grad is not None, f"{name}: no gradient for {path}"
        g = grad.to_numpy()
        assert g.shape == param.shape and np.all(np.isfinite(g)), path
        assert np.any(g != 0), f"{name}: all-zero gradient for {path}"
        assert not grad.backend.ad_enabled  # gradients live on the inner backend
        seen += 1
    assert seen > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_gradient_reaches_a_frozen_param(dev, name) -> None:
    """Every other trainable param frozen with ``require_grad`` off: those (and the running
    statistics) get no gradient, the others still do."""
    build, run = CASES[name]
    layer = build(dev)
    trainable = [path for path, _ in layer.named_params() if path.split(".")[-1] not in RUNNING_STATS]
    frozen = set(trainable[::2])
    layer = layer.map(lambda path, p: p.no_grad() if path in frozen else p)
    if frozen == set(trainable):  # a one-param layer frozen entirely: nothing to differentiate
        with pytest.raises(ad.AutodiffError, match="no graph"):
            weighted_sum(run(layer, dev)).backward()
        return
    grads = weighted_sum(run(layer, dev)).backward()
    for path, param in layer.named_params():
        grad = param.val().grad(grads)
        if path in frozen or path.split(".")[-1] in RUNNING_STATS:
            assert grad is None, f"{name}: gradient reached frozen {path}"
            assert not param.val().is_require_grad(), path
        else:
            assert grad is not None, f"{name}: no gradient for {path}"


def test_no_grad_module_has_no_gradients_but_still_runs(dev) -> None:
    layer = nn.LinearConfig(3, 2).init(dev).no_grad()
    x = floats(dev, 4, 3).require_grad()
    grads = weighted_sum(layer(x)).backward()
    assert x.grad(grads) is not None
    assert all(p.val().grad(grads) is None for _, p in layer.named_params())


# -- training vs inference ------------------------------------------------------------------------
def test_dropout_trains_on_autodiff_and_is_identity_after_valid(AD, dev) -> None:  # noqa: N803
    ff = nn.PositionWiseFeedForwardConfig(4, 6, dropout=0.5).init(dev)
    drop = ff.dropout
    x = tensor(dev, np.ones((200, 50)))
    out = drop(x).to_numpy()
    kept = out != 0
    assert 0.45 < kept.mean() < 0.55
    np.testing.assert_allclose(out[kept], 2.0)  # survivors scaled by 1 / (1 - p)
    assert not np.array_equal(drop(x).to_numpy(), out)  # a new mask per call
    AD.seed(1)
    first = drop(x).to_numpy()
    AD.seed(1)
    np.testing.assert_array_equal(drop(x).to_numpy(), first)  # reproducible from the seed

    valid = ff.valid()
    inner_x = tensor(valid.linear_inner.weight.device, RNG.standard_normal((3, 4)))
    assert valid.dropout(inner_x) is inner_x
    a, b = valid(inner_x).to_numpy(), valid(inner_x).to_numpy()
    np.testing.assert_array_equal(a, b)  # deterministic: no dropout at inference


def np_batch_norm_train(x, gamma, beta, rm, rv, momentum=0.1, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    stat = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axes), x.var(axes)
    n = x.size // x.shape[1]
    out = (x - mean.reshape(stat)) / np.sqrt(var.reshape(stat) + eps) * gamma.reshape(stat) + beta.reshape(
        stat
    )
    return out, rm * (1 - momentum) + mean * momentum, rv * (1 - momentum) + var * n / (n - 1) * momentum


def test_batch_norm_updates_running_stats_while_training_then_infers_after_valid(dev) -> None:
    bn = nn.BatchNormConfig(3, momentum=0.2).init(dev)
    gamma, beta = RNG.standard_normal(3), RNG.standard_normal(3)
    bn = bn.map(
        lambda path, p: (
            p.with_value(tensor(dev, {"gamma": gamma, "beta": beta}[path]))
            if path in ("gamma", "beta")
            else p
        )
    )
    ids = {path: p.id for path, p in bn.named_params()}
    rm, rv = np.zeros(3), np.ones(3)
    for _ in range(3):
        x = RNG.standard_normal((4, 3, 2, 3)) * 2 + 1
        out = bn(tensor(dev, x))
        want, rm, rv = np_batch_norm_train(x, gamma, beta, rm, rv, momentum=0.2)
        np.testing.assert_allclose(out.to_numpy(), want, atol=1e-10)
    np.testing.assert_allclose(bn.running_mean.val().to_numpy(), rm, atol=1e-12)
    np.testing.assert_allclose(bn.running_var.val().to_numpy(), rv, atol=1e-12)
    assert not bn.running_mean.val().is_require_grad()

    valid = bn.valid()
    assert {path: p.id for path, p in valid.named_params()} == ids  # same ParamIds, stats included
    assert all(not p.val().backend.ad_enabled for _, p in valid.named_params())
    x = RNG.standard_normal((2, 3, 2, 3))
    stat = (1, 3, 1, 1)
    want = (x - rm.reshape(stat)) / np.sqrt(rv.reshape(stat) + 1e-5) * gamma.reshape(stat) + beta.reshape(
        stat
    )
    inner = valid.gamma.val().device
    np.testing.assert_allclose(valid(tensor(inner, x)).to_numpy(), want, atol=1e-10)
    np.testing.assert_allclose(valid.running_mean.val().to_numpy(), rm)  # inference never updates


def test_batch_norm_running_stats_are_saved_and_loaded_like_any_param(dev) -> None:
    bn = nn.BatchNormConfig(3).init(dev)
    for _ in range(2):
        bn(floats(dev, 4, 3, 2))
    record = bn.into_record()
    assert list(record) == ["gamma", "beta", "running_mean", "running_var"]
    loaded = nn.BatchNormConfig(3).init(dev).load_record(record)
    for (path, a), (_, b) in zip(loaded.named_params(), bn.named_params(), strict=True):
        assert a.id == b.id and a.require_grad == b.require_grad, path
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy())
    assert not loaded.running_var.require_grad and not loaded.running_var.val().is_require_grad()
    grads = weighted_sum(loaded(floats(dev, 4, 3, 2))).backward()
    assert loaded.running_mean.val().grad(grads) is None and loaded.gamma.val().grad(grads) is not None


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_batch_norm_training_matches_torch(dev) -> None:
    x = RNG.standard_normal((5, 3, 4))
    bn = nn.BatchNormConfig(3).init(dev)
    xt = tensor(dev, x).require_grad()
    out = bn(xt)
    w = RNG.standard_normal(out.shape)
    grads = (out * tensor(dev, w)).sum().backward()

    ref = torch.nn.BatchNorm1d(3, dtype=torch.float64).train()
    x_ref = torch.tensor(x, requires_grad=True)
    out_ref = ref(x_ref)
    (out_ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(out.to_numpy(), out_ref.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(bn.running_mean.val().to_numpy(), ref.running_mean.numpy(), atol=1e-12)
    np.testing.assert_allclose(bn.running_var.val().to_numpy(), ref.running_var.numpy(), atol=1e-12)
    np.testing.assert_allclose(xt.grad(grads).to_numpy(), x_ref.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(bn.gamma.val().grad(grads).to_numpy(), ref.weight.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(bn.beta.val().grad(grads).to_numpy(), ref.bias.grad.numpy(), atol=1e-10)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_lstm_gradients_match_torch(dev) -> None:
    lstm = nn.LstmConfig(3, 4).init(dev)
    p = {path: q.val().to_numpy() for path, q in lstm.named_params()}
    x = RNG.standard_normal((2, 5, 3))
    out, _ = lstm(tensor(dev, x))
    w = RNG.standard_normal(out.shape)
    grads = (out * tensor(dev, w)).sum().backward()

    ref = torch.nn.LSTM(3, 4, batch_first=True).double()
    names = ("input_gate", "forget_gate", "cell_gate", "output_gate")
    with torch.no_grad():
        for kind, attr in (("input", "ih"), ("hidden", "hh")):
            getattr(ref, f"weight_{attr}_l0")[:] = torch.cat(
                [torch.tensor(p[f"{n}.{kind}_transform.weight"].T) for n in names]
            )
            getattr(ref, f"bias_{attr}_l0")[:] = torch.cat(
                [torch.tensor(p[f"{n}.{kind}_transform.bias"]) for n in names]
            )
    out_ref, _ = ref(torch.tensor(x))
    (out_ref * torch.tensor(w)).sum().backward()
    got_w_ih = np.concatenate(
        [lstm_param(lstm, f"{n}.input_transform.weight").grad(grads).to_numpy().T for n in names]
    )
    np.testing.assert_allclose(got_w_ih, ref.weight_ih_l0.grad.numpy(), atol=1e-10)
    got_b_hh = np.concatenate(
        [lstm_param(lstm, f"{n}.hidden_transform.bias").grad(grads).to_numpy() for n in names]
    )
    np.testing.assert_allclose(got_b_hh, ref.bias_hh_l0.grad.numpy(), atol=1e-10)


def lstm_param(module, path):
    return dict(module.named_params())[path].val()


# -- valid(), paths, records ----------------------------------------------------------------------
class Block(Module):
    attn: nn.MultiHeadAttention
    norm: nn.LayerNorm
    act: nn.Gelu


class Model(Module):
    blocks: list
    heads: dict
    pair: tuple
    bn: nn.BatchNorm
    scale: float = 1.0  # a constant: kept, never visited

    def forward(self, x):
        for block in self.blocks:
            x = block.norm(x + block.attn(nn.MhaInput.self_attn(x)).context)
            x = block.act(x)
        return self.heads["cls"](x) + self.pair[0](x).sum_dim(-1) * self.scale


def make_model(dev) -> Model:
    blocks = [
        Block(
            nn.MultiHeadAttentionConfig(4, 2, dropout=0.0).init(dev),
            nn.LayerNormConfig(4).init(dev),
            nn.Gelu(),
        )
        for _ in range(2)
    ]
    heads = {"cls": nn.LinearConfig(4, 3).init(dev), "aux": nn.LinearConfig(4, 1, bias=False).init(dev)}
    return Model(
        blocks=blocks,
        heads=heads,
        pair=(nn.LinearConfig(4, 2).init(dev), nn.Relu()),
        bn=nn.BatchNormConfig(3).init(dev),
    )


def test_nested_module_paths_are_deterministic(dev) -> None:
    paths = [path for path, _ in make_model(dev).named_params()]
    assert paths == [path for path, _ in make_model(dev).named_params()]
    assert paths[:2] == ["blocks.0.attn.query.weight", "blocks.0.attn.query.bias"]
    assert (
        paths.index("blocks.1.norm.beta") < paths.index("heads.cls.weight") < paths.index("heads.aux.weight")
    )
    assert paths[-6:] == [
        "pair.0.weight",
        "pair.0.bias",
        "bn.gamma",
        "bn.beta",
        "bn.running_mean",
        "bn.running_var",
    ]
    assert "heads.aux.bias" not in paths


def test_valid_keeps_param_ids_and_moves_to_the_inner_backend(AD, dev) -> None:  # noqa: N803
    model = make_model(dev)
    x = floats(dev, 2, 3, 4)
    trained_out = model(x)  # initializes every used param on the autodiff backend
    ids = [(path, p.id) for path, p in model.named_params()]
    valid = model.valid()
    assert [(path, p.id) for path, p in valid.named_params()] == ids
    assert valid.scale == 1.0 and valid.pair[1] is model.pair[1]
    for path, p in valid.named_params():
        assert not p.require_grad, path
        assert p.device.owner is AD.inner, path
    inner_x = x.inner()
    np.testing.assert_allclose(valid(inner_x).to_numpy(), trained_out.to_numpy(), atol=1e-12)
    # A record of the valid model loads back into a fresh autodiff model with the same ids.
    reloaded = make_model(dev).load_record(valid.into_record())
    assert [(path, p.id) for path, p in reloaded.named_params()] == ids
    assert all(p.require_grad for path, p in reloaded.named_params() if "running" not in path)


def test_valid_on_an_unused_lazy_model_stays_lazy(AD, dev) -> None:  # noqa: N803
    valid = make_model(dev).valid()
    assert all(not p.is_initialized for _, p in valid.named_params())
    assert all(p.device.owner is AD.inner for _, p in valid.named_params())


def test_a_few_sgd_steps_reduce_the_loss(dev) -> None:
    from burn import optim

    model = nn.LinearConfig(4, 3).init(dev)
    loss_fn = nn.CrossEntropyLossConfig(smoothing=0.05).init(dev)
    xs = RNG.standard_normal((32, 4))
    x, y = tensor(dev, xs), tensor(dev, (xs @ RNG.standard_normal((4, 3))).argmax(1), kind=burn.Int)
    opt = optim.SgdConfig().init()
    losses = []
    for _ in range(20):
        loss = loss_fn(model(x), y)
        losses.append(loss.item())
        model = opt.step(1.0, model, optim.GradientsParams.from_grads(loss.backward(), model))
    assert all(b < a for a, b in zip(losses, losses[1:], strict=False)) and losses[-1] < 0.6 * losses[0]
