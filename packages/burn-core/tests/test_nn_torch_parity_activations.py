"""The activation layers of burn.nn against torch.nn.functional in float64 (<= 1e-10), values and
gradients (on autodiff(ndarray)), and the layers' configs against PyTorch's defaults."""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import nn

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
torch = pytest.importorskip("torch", reason="PyTorch is not installed")
TF = torch.nn.functional

RNG = np.random.default_rng(19)
TOL = 1e-10

# (burn layer, the same function in PyTorch); the input has shape (3, 4, 6).
LAYERS = [
    ("elu", nn.Elu(), TF.elu),
    ("elu_alpha", nn.EluConfig(alpha=0.3).init(), lambda t: TF.elu(t, alpha=0.3)),
    # PyTorch's celu backward rounds 1 / alpha to float32: an alpha with an exact inverse keeps
    # the comparison at float64 precision.
    ("celu", nn.CeluConfig(alpha=2.0).init(), lambda t: TF.celu(t, alpha=2.0)),
    ("selu", nn.Selu(), TF.selu),
    ("relu6", nn.Relu6(), TF.relu6),
    ("hardtanh", nn.Hardtanh(), TF.hardtanh),
    ("hardtanh_bounds", nn.HardtanhConfig(-2.0, 0.5).init(), lambda t: TF.hardtanh(t, -2.0, 0.5)),
    ("hard_swish", nn.HardSwish(), TF.hardswish),
    ("softsign", nn.Softsign(), TF.softsign),
    ("tanhshrink", nn.Tanhshrink(), TF.tanhshrink),
    ("threshold", nn.ThresholdConfig(0.3, -1.5).init(), lambda t: TF.threshold(t, 0.3, -1.5)),
    ("thresholded_relu", nn.ThresholdedReluConfig(0.7).init(), lambda t: TF.threshold(t, 0.7, 0.0)),
    ("glu", nn.Glu(), TF.glu),
    ("glu_dim1", nn.GluConfig(dim=1).init(), lambda t: TF.glu(t, dim=1)),
    ("softmin", nn.Softmin(), lambda t: TF.softmin(t, dim=-1)),
    ("softmin_dim0", nn.SoftminConfig(dim=0).init(), lambda t: TF.softmin(t, dim=0)),
    ("gelu", nn.Gelu(), TF.gelu),
    ("gelu_tanh", nn.GeluConfig(approximate=True).init(), lambda t: TF.gelu(t, approximate="tanh")),
]


@pytest.fixture(scope="module")
def backends():
    inner = nd.NdArray(float_dtype="float64")
    return inner, ad.Autodiff(inner)


@pytest.mark.parametrize(("name", "layer", "reference"), LAYERS, ids=[c[0] for c in LAYERS])
def test_activation_layer_matches_torch(backends, name, layer, reference) -> None:
    _, grad_backend = backends
    x = RNG.standard_normal((3, 4, 6)) * 3
    weights = RNG.standard_normal(reference(torch.from_numpy(x)).shape)

    t = torch.from_numpy(x.copy()).requires_grad_(True)
    want = reference(t)
    (want * torch.from_numpy(weights)).sum().backward()

    xb = burn.Tensor.from_data(x, backend=grad_backend).require_grad()
    got = layer(xb)
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=TOL, atol=TOL)
    grads = (got * burn.Tensor.from_data(weights, backend=grad_backend)).sum().backward()
    np.testing.assert_allclose(xb.grad(grads).to_numpy(), t.grad.numpy(), rtol=TOL, atol=TOL)


def test_functional_forms_match_torch_at_breakpoints(backends) -> None:
    # Values exactly on the kinks, where the branch choice (> versus >=) shows.
    inner, _ = backends
    x = np.array([-3.0, -1.0, 0.0, 0.3, 1.0, 3.0, 6.0])
    xb, t = burn.Tensor.from_data(x, backend=inner), torch.from_numpy(x)
    a = burn.activation
    pairs = [
        (a.relu6(xb), TF.relu6(t)),
        (a.hardtanh(xb), TF.hardtanh(t)),
        (a.hard_swish(xb), TF.hardswish(t)),
        (a.threshold(xb, 0.3, 7.0), TF.threshold(t, 0.3, 7.0)),
        (a.thresholded_relu(xb, 1.0), TF.threshold(t, 1.0, 0.0)),
        (a.elu(xb), TF.elu(t)),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.to_numpy(), want.numpy(), rtol=TOL, atol=TOL)


def test_configs_carry_their_options() -> None:
    assert nn.GeluConfig().init().approximate is False
    assert nn.HardtanhConfig().init().min_val == -1.0
    with pytest.raises(ValueError, match="alpha must not be 0"):
        nn.CeluConfig(alpha=0.0).init()
    with pytest.raises(ValueError, match="exceeds max_val"):
        nn.HardtanhConfig(1.0, -1.0).init()


# -- interpolation, grid sampling, functional linear ---------------------------------------------
def _value_and_grads(backend, fn_burn, fn_torch, arrays):
    """Compare values and the gradients of every input of fn_burn / fn_torch (float64)."""
    ts = [torch.from_numpy(a.copy()).requires_grad_(True) for a in arrays]
    want = fn_torch(*ts)
    weights = RNG.standard_normal(tuple(want.shape))
    (want * torch.from_numpy(weights)).sum().backward()
    bs = [burn.Tensor.from_data(a, backend=backend).require_grad() for a in arrays]
    got = fn_burn(*bs)
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=TOL, atol=TOL)
    grads = (got * burn.Tensor.from_data(weights, backend=backend)).sum().backward()
    for b, t in zip(bs, ts, strict=True):
        np.testing.assert_allclose(b.grad(grads).to_numpy(), t.grad.numpy(), rtol=TOL, atol=TOL)


@pytest.mark.parametrize(
    ("mode", "align"),
    [
        ("nearest", None),
        ("nearest-exact", None),
        ("bilinear", False),
        ("bilinear", True),
        ("bicubic", False),
        ("bicubic", True),
    ],
)
@pytest.mark.parametrize("size", [(9, 7), (3, 4), (5, 11)], ids=str)
def test_interpolate2d_matches_torch(backends, mode, align, size) -> None:
    _, grad_backend = backends
    x = RNG.standard_normal((2, 3, 5, 6))
    kw = {} if align is None else {"align_corners": align}
    layer = nn.Interpolate2dConfig(output_size=size, mode=mode, align_corners=bool(align)).init()
    _value_and_grads(grad_backend, layer, lambda t: TF.interpolate(t, size=size, mode=mode, **kw), [x])


@pytest.mark.parametrize(
    ("mode", "torch_mode", "align"),
    [
        ("nearest", "nearest", None),
        ("nearest-exact", "nearest-exact", None),
        ("linear", "linear", False),
        ("linear", "linear", True),
    ],
)
@pytest.mark.parametrize("scale", [2.0, 0.5, 1.7])
def test_interpolate1d_scale_factor_matches_torch(backends, mode, torch_mode, align, scale) -> None:
    # burn resamples by the computed sizes: PyTorch's recompute_scale_factor=True.
    _, grad_backend = backends
    x = RNG.standard_normal((2, 3, 7))
    kw = {} if align is None else {"align_corners": align}
    layer = nn.Interpolate1dConfig(scale_factor=scale, mode=mode, align_corners=bool(align)).init()

    def reference(t):
        return TF.interpolate(t, scale_factor=scale, mode=torch_mode, recompute_scale_factor=True, **kw)

    _value_and_grads(grad_backend, layer, reference, [x])


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_2d_matches_torch(backends, padding, align) -> None:
    _, grad_backend = backends
    x = RNG.standard_normal((2, 3, 5, 6))
    grid = RNG.uniform(-1.4, 1.4, (2, 4, 3, 2))
    from burn.tensor.module import grid_sample_2d

    _value_and_grads(
        grad_backend,
        lambda a, g: grid_sample_2d(a, g, "bilinear", padding, align),
        lambda a, g: TF.grid_sample(a, g, mode="bilinear", padding_mode=padding, align_corners=align),
        [x, grid],
    )
    # Nearest: values and the input's gradient (the grid's is 0 for both).
    got = grid_sample_2d(
        burn.Tensor.from_data(x, backend=grad_backend),
        burn.Tensor.from_data(grid, backend=grad_backend),
        "nearest",
        padding,
        align,
    )
    want = TF.grid_sample(
        torch.from_numpy(x), torch.from_numpy(grid), mode="nearest", padding_mode=padding, align_corners=align
    )
    np.testing.assert_allclose(got.to_numpy(), want.numpy(), rtol=TOL, atol=TOL)


def test_functional_linear_uses_burns_weight_layout(backends) -> None:
    _, grad_backend = backends
    from burn.tensor.module import linear

    x, w, b = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((3, 5)), RNG.standard_normal(5)
    _value_and_grads(grad_backend, linear, lambda t, wt, bt: TF.linear(t, wt.T, bt), [x, w, b])
