"""burn.nn feed-forward layers against independent NumPy references, and against PyTorch on the
same weights where torch is importable.

Weight conventions when copying to PyTorch: Linear weights are transposed (burn stores
``[d_input, d_output]``, torch ``[out, in]``); convolution weights have the same layout in both.
Everything runs in float64 so references can be tight.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import burn
from burn import nn

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
RNG = np.random.default_rng(1234)


@pytest.fixture(scope="module")
def B():  # noqa: N802 - a backend, named like the docs name it
    return nd.NdArray(float_dtype="float64")


@pytest.fixture(scope="module")
def dev(B):  # noqa: N803
    return B.default_device()


def tensor(dev, array, **kw):
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


def randomized(module, rng=RNG):
    """Every Float param replaced by N(0, 1) values (so gammas, biases... are non-trivial)."""

    def fn(path, p):
        if p.kind is not burn.Float:
            return p
        return p.with_value(burn.Tensor.from_data(rng.standard_normal(p.shape), device=p.device))

    return module.map(fn)


def params(module):
    return {path: p.val().to_numpy() for path, p in module.named_params()}


def close(actual, expected, tol=1e-10):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol)


def tt(a):
    return torch.from_numpy(np.array(a))  # a writable copy


# -- NumPy references -------------------------------------------------------------------------
def np_conv2d(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    n, _, h, wd = x.shape
    c_out, cpg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, c_out, ho, wo))
    opg = c_out // groups
    for g in range(groups):
        xs, ws = xp[:, g * cpg : (g + 1) * cpg], w[g * opg : (g + 1) * opg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dilation[0], j * dilation[1]
                patch = xs[
                    :,
                    :,
                    r0 : r0 + stride[0] * (ho - 1) + 1 : stride[0],
                    c0 : c0 + stride[1] * (wo - 1) + 1 : stride[1],
                ]
                out[:, g * opg : (g + 1) * opg] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def np_conv_transpose2d(x, w, b, stride, padding, padding_out, dilation, groups):
    n, c_in, h, wd = x.shape
    _, opg, kh, kw = w.shape
    ipg = c_in // groups
    full = (
        (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + padding_out[0],
        (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + padding_out[1],
    )
    out = np.zeros((n, opg * groups, *full))
    for g in range(groups):
        xs, ws = x[:, g * ipg : (g + 1) * ipg], w[g * ipg : (g + 1) * ipg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dilation[0], j * dilation[1]
                contrib = np.einsum("nchw,co->nohw", xs, ws[:, :, i, j])
                out[
                    :,
                    g * opg : (g + 1) * opg,
                    r0 : r0 + stride[0] * (h - 1) + 1 : stride[0],
                    c0 : c0 + stride[1] * (wd - 1) + 1 : stride[1],
                ] += contrib
    ho, wo = full[0] - 2 * padding[0], full[1] - 2 * padding[1]
    out = out[:, :, padding[0] : padding[0] + ho, padding[1] : padding[1] + wo]
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def np_windows(x, kernel, stride, padding, dilation, fill):
    """All pooling windows of [N, C, H, W]: -> [N, C, Ho, Wo, KH*KW] (padding filled with `fill`)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2), constant_values=fill)
    ho = (h + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    out = np.empty((n, c, ho, wo, kernel[0] * kernel[1]))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            r0, c0 = i * dilation[0], j * dilation[1]
            out[..., i * kernel[1] + j] = xp[
                :,
                :,
                r0 : r0 + stride[0] * (ho - 1) + 1 : stride[0],
                c0 : c0 + stride[1] * (wo - 1) + 1 : stride[1],
            ]
    return out


def np_adaptive_avg(x, out_size):
    length = x.shape[-1]
    cols = []
    for i in range(out_size):
        start, end = (i * length) // out_size, -((-(i + 1) * length) // out_size)
        cols.append(x[..., start:end].mean(-1))
    return np.stack(cols, -1)


def np_layer_norm(x, gamma, beta, eps):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def np_erf(x):
    return np.vectorize(math.erf)(x)


# -- Linear -----------------------------------------------------------------------------------
def test_linear_matches_numpy_for_ranks_1_to_3(dev) -> None:
    layer = randomized(nn.LinearConfig(5, 3).init(dev))
    p = params(layer)
    assert p["weight"].shape == (5, 3) and p["bias"].shape == (3,)
    for shape in [(5,), (4, 5), (2, 4, 5)]:
        x = RNG.standard_normal(shape)
        close(layer(tensor(dev, x)).to_numpy(), x @ p["weight"] + p["bias"])


def test_linear_without_bias_and_its_default_init_bound(dev) -> None:
    layer = nn.LinearConfig(16, 400, bias=False).init(dev)
    assert layer.bias is None
    w = layer.weight.val().to_numpy()
    bound = 1 / math.sqrt(16)  # KaimingUniform(gain=1/sqrt(3)): PyTorch's default bound
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound


@needs_torch
def test_linear_matches_torch_with_transposed_weight(dev) -> None:
    layer = randomized(nn.LinearConfig(6, 4).init(dev))
    p = params(layer)
    ref = torch.nn.Linear(6, 4).double()
    with torch.no_grad():
        ref.weight.copy_(tt(p["weight"].T))  # burn [in, out] -> torch [out, in]
        ref.bias.copy_(tt(p["bias"]))
    x = RNG.standard_normal((3, 6))
    close(layer(tensor(dev, x)).to_numpy(), ref(tt(x)).detach().numpy())


# -- convolutions -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=(2, 1), padding=(1, 2)),
        dict(padding="same", dilation=(2, 1)),
        dict(groups=2, stride=(2, 2), padding="same"),
    ],
)
def test_conv2d_matches_numpy(dev, kw) -> None:
    layer = randomized(nn.Conv2dConfig((4, 6), (3, 3), **kw).init(dev))
    p = params(layer)
    assert p["weight"].shape == (6, 4 // kw.get("groups", 1), 3, 3)
    x = RNG.standard_normal((2, 4, 7, 8))
    want = np_conv2d(x, p["weight"], p["bias"], layer.stride, layer.padding, layer.dilation, layer.groups)
    got = layer(tensor(dev, x)).to_numpy()
    close(got, want)
    if kw.get("padding") == "same":  # 'same' keeps ceil(size / stride)
        assert got.shape[2:] == tuple(-(-s // st) for s, st in zip((7, 8), layer.stride, strict=True))


def test_conv2d_same_padding_rejects_even_kernels(dev) -> None:
    with pytest.raises(ValueError, match="odd effective kernel"):
        nn.Conv2dConfig((1, 1), (2, 2), padding="same").init(dev)


def test_conv1d_matches_numpy(dev) -> None:
    layer = randomized(nn.Conv1dConfig(3, 4, 3, stride=2, padding=1).init(dev))
    p = params(layer)
    x = RNG.standard_normal((2, 3, 9))
    want = np_conv2d(x[:, :, None], p["weight"][:, :, None], p["bias"], (1, 2), (0, 1))[:, :, 0]
    close(layer(tensor(dev, x)).to_numpy(), want)


def test_conv_transpose2d_matches_numpy(dev) -> None:
    cfg = nn.ConvTranspose2dConfig(
        (4, 6), (3, 2), stride=(2, 3), padding=(1, 0), padding_out=(1, 2), groups=2
    )
    layer = randomized(cfg.init(dev))
    p = params(layer)
    assert p["weight"].shape == (4, 3, 3, 2)
    x = RNG.standard_normal((2, 4, 4, 3))
    want = np_conv_transpose2d(x, p["weight"], p["bias"], (2, 3), (1, 0), (1, 2), (1, 1), 2)
    close(layer(tensor(dev, x)).to_numpy(), want)


@needs_torch
def test_convolutions_match_torch(dev) -> None:
    x = RNG.standard_normal((2, 4, 9, 8))
    conv = randomized(
        nn.Conv2dConfig((4, 6), (3, 3), stride=(2, 1), dilation=(1, 2), groups=2, padding=(1, 1)).init(dev)
    )
    p = params(conv)
    want = TF.conv2d(tt(x), tt(p["weight"]), tt(p["bias"]), (2, 1), (1, 1), (1, 2), 2)
    close(conv(tensor(dev, x)).to_numpy(), want.numpy())

    convt = randomized(
        nn.ConvTranspose2dConfig(
            (4, 2), (3, 3), stride=(2, 2), padding=(1, 1), padding_out=(1, 0), dilation=(1, 2)
        ).init(dev)
    )
    p = params(convt)
    want = TF.conv_transpose2d(tt(x), tt(p["weight"]), tt(p["bias"]), (2, 2), (1, 1), (1, 0), 1, (1, 2))
    close(convt(tensor(dev, x)).to_numpy(), want.numpy())

    x1 = RNG.standard_normal((2, 4, 11))
    conv1 = randomized(nn.Conv1dConfig(4, 2, 5, dilation=2, padding="same").init(dev))
    p = params(conv1)
    want = TF.conv1d(tt(x1), tt(p["weight"]), tt(p["bias"]), 1, 4, 2)
    close(conv1(tensor(dev, x1)).to_numpy(), want.numpy())


# -- pooling ----------------------------------------------------------------------------------
def test_max_and_avg_pool2d_match_numpy(dev) -> None:
    x = RNG.standard_normal((2, 3, 7, 6))
    mp = nn.MaxPool2dConfig((3, 2), strides=(2, 1), padding=(1, 1), dilation=(1, 2)).init()
    want = np_windows(x, (3, 2), (2, 1), (1, 1), (1, 2), -np.inf).max(-1)
    close(mp(tensor(dev, x)).to_numpy(), want)

    for include in (True, False):
        ap = nn.AvgPool2dConfig((3, 3), strides=(2, 2), padding=(1, 1), count_include_pad=include).init()
        sums = np_windows(x, (3, 3), (2, 2), (1, 1), (1, 1), 0.0).sum(-1)
        counts = 9.0 if include else np_windows(np.ones_like(x), (3, 3), (2, 2), (1, 1), (1, 1), 0.0).sum(-1)
        close(ap(tensor(dev, x)).to_numpy(), sums / counts)


def test_pool_configs_default_stride_is_one_as_burn(dev) -> None:
    x = RNG.standard_normal((1, 1, 5, 5))
    out = nn.MaxPool2dConfig((2, 2)).init()(tensor(dev, x))
    assert out.shape == (1, 1, 4, 4)
    out = nn.AvgPool1dConfig(3, padding="same").init()(tensor(dev, x[:, :, 0]))
    assert out.shape == (1, 1, 5)


def test_pool1d_and_adaptive_pools_match_numpy(dev) -> None:
    x = RNG.standard_normal((2, 3, 10))
    want = np_windows(x[:, :, None], (1, 3), (1, 2), (0, 1), (1, 1), -np.inf).max(-1)[:, :, 0]
    close(nn.MaxPool1dConfig(3, stride=2, padding=1).init()(tensor(dev, x)).to_numpy(), want)
    want = np_windows(x[:, :, None], (1, 4), (1, 3), (0, 0), (1, 1), 0.0).mean(-1)[:, :, 0]
    close(nn.AvgPool1dConfig(4, stride=3).init()(tensor(dev, x)).to_numpy(), want)
    close(nn.AdaptiveAvgPool1dConfig(4).init()(tensor(dev, x)).to_numpy(), np_adaptive_avg(x, 4))

    x2 = RNG.standard_normal((2, 3, 7, 5))
    want = np_adaptive_avg(np_adaptive_avg(x2, 2).swapaxes(-1, -2), 3).swapaxes(-1, -2)
    close(nn.AdaptiveAvgPool2dConfig((3, 2)).init()(tensor(dev, x2)).to_numpy(), want)


@needs_torch
def test_pools_match_torch(dev) -> None:
    x = RNG.standard_normal((2, 3, 9, 7))
    got = nn.MaxPool2dConfig((3, 3), strides=(2, 2), padding=(1, 1), dilation=(2, 1)).init()(tensor(dev, x))
    close(got.to_numpy(), TF.max_pool2d(tt(x), 3, 2, 1, (2, 1)).numpy())
    got = nn.AvgPool2dConfig((3, 2), strides=(2, 1), padding=(1, 1), count_include_pad=False).init()(
        tensor(dev, x)
    )
    close(got.to_numpy(), TF.avg_pool2d(tt(x), (3, 2), (2, 1), 1, count_include_pad=False).numpy())
    got = nn.AdaptiveAvgPool2dConfig((4, 3)).init()(tensor(dev, x))
    close(got.to_numpy(), TF.adaptive_avg_pool2d(tt(x), (4, 3)).numpy())


# -- normalization ----------------------------------------------------------------------------
def test_layer_group_and_rms_norm_match_numpy(dev) -> None:
    x = RNG.standard_normal((2, 6, 5))
    ln = randomized(nn.LayerNormConfig(5, epsilon=1e-3).init(dev))
    p = params(ln)
    close(ln(tensor(dev, x)).to_numpy(), np_layer_norm(x, p["gamma"], p["beta"], 1e-3))

    gn = randomized(nn.GroupNormConfig(3, 6).init(dev))
    p = params(gn)
    g = x.reshape(2, 3, -1)
    normed = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    close(gn(tensor(dev, x)).to_numpy(), normed * p["gamma"][:, None] + p["beta"][:, None])
    plain = nn.GroupNormConfig(3, 6, affine=False).init(dev)
    assert list(plain.named_params()) == []
    close(plain(tensor(dev, x)).to_numpy(), normed)

    rms = randomized(nn.RmsNormConfig(5).init(dev))
    p = params(rms)
    close(rms(tensor(dev, x)).to_numpy(), x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * p["gamma"])


def test_batch_norm_inference_uses_running_statistics(dev) -> None:
    bn = randomized(nn.BatchNormConfig(3, epsilon=1e-3).init(dev))
    bn = bn.map(lambda path, p: p.with_value(p.val().abs()) if path == "running_var" else p)
    p = params(bn)
    x = RNG.standard_normal((4, 3, 2, 2))
    stat = (1, 3, 1, 1)
    want = (x - p["running_mean"].reshape(stat)) / np.sqrt(p["running_var"].reshape(stat) + 1e-3)
    want = want * p["gamma"].reshape(stat) + p["beta"].reshape(stat)
    before = p["running_mean"].copy()
    close(bn(tensor(dev, x)).to_numpy(), want)
    close(bn.running_mean.val().to_numpy(), before)  # inference never updates


def test_norms_report_bad_shapes(dev) -> None:
    with pytest.raises(burn.ShapeError, match=r"BatchNorm: expected an input \[N, 3"):
        nn.BatchNormConfig(3).init(dev)(tensor(dev, np.ones((2, 4))))
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNormConfig(4, 6).init(dev)


@needs_torch
def test_norms_match_torch(dev) -> None:
    x = RNG.standard_normal((3, 4, 5))
    ln = randomized(nn.LayerNormConfig(5).init(dev))
    p = params(ln)
    close(
        ln(tensor(dev, x)).to_numpy(), TF.layer_norm(tt(x), (5,), tt(p["gamma"]), tt(p["beta"]), 1e-5).numpy()
    )
    gn = randomized(nn.GroupNormConfig(2, 4).init(dev))
    p = params(gn)
    close(gn(tensor(dev, x)).to_numpy(), TF.group_norm(tt(x), 2, tt(p["gamma"]), tt(p["beta"]), 1e-5).numpy())
    rms = randomized(nn.RmsNormConfig(5, epsilon=1e-4).init(dev))
    p = params(rms)
    close(rms(tensor(dev, x)).to_numpy(), TF.rms_norm(tt(x), (5,), tt(p["gamma"]), 1e-4).numpy())
    bn = randomized(nn.BatchNormConfig(4).init(dev))
    bn = bn.map(lambda path, p: p.with_value(p.val().abs()) if path == "running_var" else p)
    p = params(bn)
    want = TF.batch_norm(
        tt(x),
        tt(p["running_mean"]),
        tt(p["running_var"]),
        tt(p["gamma"]),
        tt(p["beta"]),
        training=False,
        eps=1e-5,
    )
    close(bn(tensor(dev, x)).to_numpy(), want.numpy())


# -- embedding, dropout, activations ----------------------------------------------------------
def test_embedding_looks_up_rows(dev) -> None:
    emb = nn.EmbeddingConfig(7, 3).init(dev)
    w = emb.weight.val().to_numpy()
    idx = np.array([[0, 6, 2], [2, 2, 1]])
    got = emb(tensor(dev, idx, kind=burn.Int))
    close(got.to_numpy(), w[idx])
    if torch is not None:
        close(got.to_numpy(), TF.embedding(tt(idx), tt(w)).numpy())


def test_dropout_is_identity_on_a_plain_backend(dev) -> None:
    x = tensor(dev, RNG.standard_normal((4, 5)))
    assert nn.DropoutConfig(0.5).init()(x) is x
    with pytest.raises(ValueError, match="prob"):
        nn.DropoutConfig(1.0)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x, beta=1.0):
    return np.logaddexp(0, beta * x) / beta


ACTIVATIONS = [
    (nn.Relu(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReluConfig(0.2).init(), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.Gelu(), lambda x: x * (1 + np_erf(x / math.sqrt(2))) / 2),
    (nn.Sigmoid(), _sigmoid),
    (nn.Tanh(), np.tanh),
    (nn.Silu(), lambda x: x * _sigmoid(x)),
    (nn.SoftplusConfig(beta=2.0).init(), lambda x: _softplus(x, 2.0)),
    (nn.Mish(), lambda x: x * np.tanh(_softplus(x))),
    (nn.HardSigmoidConfig().init(), lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
]


@pytest.mark.parametrize("layer,ref", ACTIVATIONS, ids=lambda v: type(v).__name__)
def test_activation_layers_match_numpy(dev, layer, ref) -> None:
    x = RNG.standard_normal((3, 4)) * 3
    close(layer(tensor(dev, x)).to_numpy(), ref(x), tol=1e-9)


def test_prelu_and_swiglu_match_numpy(dev) -> None:
    x = RNG.standard_normal((2, 3, 4))
    prelu = nn.PReluConfig(3, alpha=0.1).init(dev)
    close(prelu.alpha.val().to_numpy(), [0.1] * 3)
    prelu = randomized(prelu)
    a = params(prelu)["alpha"].reshape(1, 3, 1)
    close(prelu(tensor(dev, x)).to_numpy(), np.where(x > 0, x, a * x))

    sw = randomized(nn.SwiGluConfig(4, 5).init(dev))
    p = params(sw)
    assert set(p) == {"linear_inner.weight", "linear_outer.weight"}  # bias=False by default
    inner, outer = x @ p["linear_inner.weight"], x @ p["linear_outer.weight"]
    close(sw(tensor(dev, x)).to_numpy(), inner * _sigmoid(inner) * outer)


@needs_torch
def test_activations_match_torch(dev) -> None:
    x = RNG.standard_normal((3, 4, 2)) * 3
    t = tt(x)
    pairs = [
        (nn.Gelu(), TF.gelu(t)),
        (nn.Mish(), TF.mish(t)),
        (nn.Silu(), TF.silu(t)),
        (nn.SoftplusConfig(beta=1.5).init(), TF.softplus(t, beta=1.5)),
        (nn.LeakyReluConfig().init(), TF.leaky_relu(t, 0.01)),
        (nn.PReluConfig(4, alpha=0.3).init(dev), TF.prelu(t, torch.full((4,), 0.3, dtype=torch.float64))),
    ]
    for layer, want in pairs:
        close(layer(tensor(dev, x)).to_numpy(), want.numpy(), tol=1e-9)
