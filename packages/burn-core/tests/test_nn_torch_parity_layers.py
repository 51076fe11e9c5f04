"""The layers added for issue 19 against PyTorch on the same weights, in float64: forward outputs
and the gradients of every input and param (within 1e-10).

DeformConv2d: torchvision is not a dependency, so its PyTorch reference is built here from
``F.grid_sample`` (bilinear, zero padding, ``align_corners=True`` maps pixel centres exactly),
which samples the way torchvision's ``deform_conv2d`` does; its forward is also checked against
the NumPy definition of the conformance suite.
"""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import nn
from burn.testing.reference.conv import deform_conv2d as deform_conv2d_reference

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
torch = pytest.importorskip("torch", reason="PyTorch is not installed")
TF = torch.nn.functional

RNG = np.random.default_rng(1919)
TOL = 1e-10


@pytest.fixture(scope="module")
def dev():
    return ad.Autodiff(nd.NdArray(float_dtype="float64")).default_device()


def tensor(dev, array, **kw):
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


def tt(a, grad=False):
    return torch.tensor(np.array(a, dtype=np.float64), requires_grad=grad)


def close(actual, expected, tol=TOL):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol)


def burn_run(dev, layer, inputs, weight_out=None):
    """Run `layer` on float64 `inputs` (tracked); return output, upstream weights, input grads and
    param grads by path (loss = sum(out * W) with random W)."""
    xs = [tensor(dev, a).require_grad() for a in inputs]
    out = layer(*xs)
    w = RNG.standard_normal(out.shape) if weight_out is None else weight_out
    grads = (out * tensor(dev, w)).sum().backward()
    params = {path: p.val().grad(grads) for path, p in layer.named_params() if p.require_grad}
    return out.to_numpy(), w, [x.grad(grads).to_numpy() for x in xs], params


def torch_run(fn, inputs, params, w):
    """`fn(*inputs, **params)` on leaf tensors; returns output, input grads and param grads."""
    xs = [tt(a, True) for a in inputs]
    ps = {k: tt(v, True) for k, v in params.items()}
    out = fn(*xs, **ps)
    out.backward(tt(w))
    return out.detach().numpy(), [x.grad.numpy() for x in xs], {k: p.grad.numpy() for k, p in ps.items()}


def weights(layer):
    return {path: p.val().to_numpy() for path, p in layer.named_params()}


def compare(burn_result, torch_result, names):
    """`names`: burn param path -> torch param name."""
    out, _, gx, gp = burn_result
    t_out, t_gx, t_gp = torch_result
    close(out, t_out)
    for a, b in zip(gx, t_gx, strict=True):
        close(a, b)
    for path, name in names.items():
        assert gp[path] is not None, path
        close(gp[path].to_numpy(), t_gp[name])


# -- norms ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 2, 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_instance_norm_matches_torch(dev, shape, affine) -> None:
    layer = nn.InstanceNormConfig(shape[1], epsilon=1e-4, affine=affine).init(dev)
    # Non-trivial affine params (not the ones / zeros they start as).
    layer = layer.map(lambda _p, q: q.map(lambda t: t + tensor(dev, RNG.standard_normal(t.shape))))
    x = RNG.standard_normal(shape) * 3 + 1
    res = burn_run(dev, layer, [x])
    p = weights(layer)
    params = {"weight": p["gamma"], "bias": p["beta"]} if affine else {}
    ref = torch_run(lambda x, **kw: TF.instance_norm(x, eps=1e-4, **kw), [x], params, res[1])
    compare(res, ref, {"gamma": "weight", "beta": "bias"} if affine else {})
    assert [q for q, _ in layer.named_params()] == (["gamma", "beta"] if affine else [])


def test_instance_norm_default_is_affine_and_checks_the_input(dev) -> None:
    layer = nn.InstanceNormConfig(3).init(dev)
    assert layer.gamma is not None and layer.beta is not None
    with pytest.raises(burn.errors.ShapeError, match=r"InstanceNorm: expected an input \[N, 3, \.\.\.\]"):
        layer(tensor(dev, np.zeros((2, 3))))


@pytest.mark.parametrize(
    ("size", "alpha", "beta", "k"), [(5, 1e-4, 0.75, 1.0), (2, 0.5, 0.6, 2.0), (4, 2.0, 1.2, 0.5)]
)
def test_local_response_norm_matches_torch(dev, size, alpha, beta, k) -> None:
    layer = nn.LocalResponseNormConfig(size, alpha=alpha, beta=beta, k=k).init()
    for shape in ((2, 6, 5), (1, 7, 3, 4)):
        x = RNG.standard_normal(shape) * 2
        res = burn_run(dev, layer, [x])
        ref = torch_run(lambda x: TF.local_response_norm(x, size, alpha, beta, k), [x], {}, res[1])
        compare(res, ref, {})


def test_layer_norm_without_bias_matches_torch(dev) -> None:
    layer = nn.LayerNormConfig(6, bias=False).init(dev)
    layer = layer.map(lambda _p, q: q.map(lambda t: t + tensor(dev, RNG.standard_normal(t.shape))))
    assert [path for path, _ in layer.named_params()] == ["gamma"]
    x = RNG.standard_normal((2, 3, 6))
    res = burn_run(dev, layer, [x])
    ref_layer = torch.nn.LayerNorm(6, bias=False, dtype=torch.float64)
    with torch.no_grad():
        ref_layer.weight[:] = tt(weights(layer)["gamma"])
    xt = tt(x, True)
    out = ref_layer(xt)
    out.backward(tt(res[1]))
    close(res[0], out.detach().numpy())
    close(res[2][0], xt.grad.numpy())
    close(res[3]["gamma"].to_numpy(), ref_layer.weight.grad.numpy())


# -- deformable convolution -----------------------------------------------------------------------
def torch_deform_conv2d(
    x, offset, weight, mask, bias, stride, padding, dilation, weight_groups, offset_groups
):
    """torchvision's deform_conv2d from `F.grid_sample` (an independent PyTorch implementation)."""
    n, c_in, h, w = x.shape
    c_out, c_in_wg, kh, kw = weight.shape
    oh, ow = offset.shape[2:]
    k, cpg = kh * kw, c_in // offset_groups
    base_y = (torch.arange(oh, dtype=x.dtype) * stride[0] - padding[0]).view(oh, 1)
    base_x = (torch.arange(ow, dtype=x.dtype) * stride[1] - padding[1]).view(1, ow)
    cols = []
    for g in range(offset_groups):
        xg = x[:, g * cpg:(g + 1) * cpg]
        taps = []
        for t in range(k):
            i, j = divmod(t, kw)
            y = base_y + i * dilation[0] + offset[:, 2 * (g * k + t)]
            xx = base_x + j * dilation[1] + offset[:, 2 * (g * k + t) + 1]
            grid = torch.stack((2 * xx / (w - 1) - 1, 2 * y / (h - 1) - 1), dim=-1)
            s = TF.grid_sample(xg, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
            if mask is not None:
                s = s * mask[:, g * k + t].unsqueeze(1)
            taps.append(s)
        cols.append(torch.stack(taps, dim=2))  # [N, cpg, K, OH, OW]
    cols = torch.cat(cols, dim=1).reshape(n, weight_groups, c_in_wg * k, oh * ow)
    wm = weight.reshape(weight_groups, c_out // weight_groups, c_in_wg * k)
    out = torch.einsum("gok,ngkl->ngol", wm, cols).reshape(n, c_out, oh, ow)
    return out if bias is None else out + bias.view(1, -1, 1, 1)


DEFORM_LAYERS = [
    # (channels, kernel, stride, padding, dilation, weight_groups, offset_groups, mask, bias)
    ((2, 3), (3, 3), (1, 1), (1, 1), (1, 1), 1, 1, False, True),
    ((4, 4), (2, 3), (2, 1), (1, 1), (1, 2), 2, 2, True, False),
    ((4, 2), (3, 2), (1, 2), (0, 1), (2, 1), 1, 4, True, True),
]


@pytest.mark.parametrize("case", DEFORM_LAYERS, ids=str)
def test_deform_conv2d_matches_torch_and_the_definition(dev, case) -> None:
    channels, kernel, stride, padding, dilation, wg, og, has_mask, has_bias = case
    layer = nn.DeformConv2dConfig(
        channels, kernel, stride=stride, padding=padding, dilation=dilation, weight_groups=wg,
        offset_groups=og, bias=has_bias,
    ).init(dev)
    x = RNG.standard_normal((2, channels[0], 5, 6))
    oh = (5 + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (6 + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    k = kernel[0] * kernel[1]
    offset = RNG.uniform(-2.5, 2.5, (2, 2 * og * k, oh, ow))
    mask = RNG.uniform(0, 1, (2, og * k, oh, ow))
    inputs = [x, offset, mask] if has_mask else [x, offset]
    res = burn_run(dev, layer, inputs)
    p = weights(layer)
    params = {"weight": p["weight"], **({"bias": p["bias"]} if has_bias else {})}

    def fn(x, offset, mask=None, weight=None, bias=None):
        return torch_deform_conv2d(x, offset, weight, mask, bias, stride, padding, dilation, wg, og)

    ref = torch_run(fn, inputs, params, res[1])
    compare(res, ref, {"weight": "weight", **({"bias": "bias"} if has_bias else {})})
    expected = deform_conv2d_reference(
        x, offset, p["weight"], mask if has_mask else None, p.get("bias"), stride, padding, dilation, wg, og
    )
    close(res[0], expected)


def test_deform_conv2d_zero_offsets_match_torch_conv2d(dev) -> None:
    layer = nn.DeformConv2dConfig((4, 6), (3, 3), padding="same", weight_groups=2, offset_groups=2).init(dev)
    x = RNG.standard_normal((1, 4, 5, 5))
    out = layer(tensor(dev, x), tensor(dev, np.zeros((1, 2 * 2 * 9, 5, 5))))
    p = weights(layer)
    close(out.to_numpy(), TF.conv2d(tt(x), tt(p["weight"]), tt(p["bias"]), padding=1, groups=2).numpy())


# -- im2col / col2im, pixel shuffle -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"),
    [((2, 3), (1, 1), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 2), (1, 2))],
)
def test_unfold4d_and_fold4d_match_torch(dev, kernel, stride, padding, dilation) -> None:
    x = RNG.standard_normal((2, 3, 6, 7))
    unfold = nn.Unfold4dConfig(kernel, stride=stride, dilation=dilation, padding=padding).init()
    res = burn_run(dev, unfold, [x])
    ref = torch_run(lambda x: TF.unfold(x, kernel, dilation, padding, stride), [x], {}, res[1])
    compare(res, ref, {})

    fold = nn.Fold4dConfig((6, 7), kernel, stride=stride, dilation=dilation, padding=padding).init()
    cols = RNG.standard_normal(res[0].shape)
    res = burn_run(dev, fold, [cols])
    ref = torch_run(lambda c: TF.fold(c, (6, 7), kernel, dilation, padding, stride), [cols], {}, res[1])
    compare(res, ref, {})


@pytest.mark.parametrize("shape", [(2, 12, 3, 4), (8, 5, 2)])
def test_pixel_shuffle_and_unshuffle_match_torch(dev, shape) -> None:
    x = RNG.standard_normal(shape)
    res = burn_run(dev, nn.PixelShuffleConfig(2).init(), [x])
    compare(res, torch_run(lambda x: TF.pixel_shuffle(x, 2), [x], {}, res[1]), {})
    y = RNG.standard_normal(res[0].shape)
    res = burn_run(dev, nn.PixelUnshuffleConfig(2).init(), [y])
    compare(res, torch_run(lambda y: TF.pixel_unshuffle(y, 2), [y], {}, res[1]), {})
    np.testing.assert_array_equal(
        nn.PixelUnshuffleConfig(2).init()(nn.PixelShuffleConfig(2).init()(tensor(dev, x))).to_numpy(), x
    )
    with pytest.raises(burn.errors.ShapeError, match="PixelShuffle: expected an input"):
        nn.PixelShuffleConfig(3).init()(tensor(dev, x))


# -- Identity, Bilinear, Embedding -----------------------------------------------------------------
def test_identity_returns_its_input(dev) -> None:
    x = tensor(dev, RNG.standard_normal((2, 3)))
    layer = nn.Identity()
    assert layer(x) is x and layer.num_params() == 0 and nn.Identity().train().is_training()


@pytest.mark.parametrize(("lead", "bias"), [((4,), True), ((2, 3), False), ((), True)])
def test_bilinear_matches_torch(dev, lead, bias) -> None:
    layer = nn.BilinearConfig(3, 4, 5, bias=bias).init(dev)
    x1, x2 = RNG.standard_normal((*lead, 3)), RNG.standard_normal((*lead, 4))
    res = burn_run(dev, layer, [x1, x2])
    p = weights(layer)
    params = {"weight": p["weight"], **({"bias": p["bias"]} if bias else {})}
    ref = torch_run(lambda a, b, **kw: TF.bilinear(a, b, **kw), [x1, x2], params, res[1])
    compare(res, ref, {"weight": "weight", **({"bias": "bias"} if bias else {})})
    bound = 1 / np.sqrt(3)
    assert np.all(np.abs(p["weight"]) <= bound) and p["weight"].shape == (5, 3, 4)


@pytest.mark.parametrize("padding_idx", [1, -2])
def test_embedding_padding_idx_matches_torch(dev, padding_idx) -> None:
    layer = nn.EmbeddingConfig(5, 3, padding_idx=padding_idx).init(dev)
    row = padding_idx % 5
    np.testing.assert_array_equal(weights(layer)["weight"][row], 0.0)
    assert np.all(np.delete(weights(layer)["weight"], row, axis=0) != 0.0)
    # A non-zero padding row (e.g. loaded weights) is still read, and still gets no gradient.
    layer = layer.map(lambda _p, q: q.map(lambda t: t + 1.0))
    idx = np.array([[0, row, 3, row], [4, 4, row, 2]])
    out = layer(tensor(dev, idx, kind=burn.Int))
    w = RNG.standard_normal(out.shape)
    grads = (out * tensor(dev, w)).sum().backward()
    ref = torch.nn.Embedding(5, 3, padding_idx=padding_idx, dtype=torch.float64)
    with torch.no_grad():
        ref.weight[:] = tt(weights(layer)["weight"])
    out_ref = ref(torch.tensor(idx))
    out_ref.backward(tt(w))
    close(out.to_numpy(), out_ref.detach().numpy())
    grad = layer.weight.val().grad(grads).to_numpy()
    close(grad, ref.weight.grad.numpy())
    np.testing.assert_array_equal(grad[row], 0.0)
    with pytest.raises(ValueError, match="padding_idx 5 is out of range for 5 embeddings"):
        nn.EmbeddingConfig(5, 3, padding_idx=5).init(dev)
