"""Conv3d, ConvTranspose1d/3d, the 3-D pools, every pool's ``ceil_mode`` and asymmetric conv
padding against PyTorch on the same weights, in float64: forward outputs and the gradients of the
input and of every param (within 1e-10), on ``autodiff(ndarray)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import burn
from burn import nn

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
torch = pytest.importorskip("torch", reason="PyTorch is not installed")
TF = torch.nn.functional

RNG = np.random.default_rng(3319)
TOL = 1e-10


@pytest.fixture(scope="module")
def dev() -> Any:
    return ad.Autodiff(nd.NdArray(float_dtype="float64")).default_device()


def close(actual: Any, expected: Any) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=TOL, atol=TOL)


def check(dev: Any, layer: Any, x: np.ndarray, torch_fn: Callable[..., Any]) -> None:
    """Forward and gradients (loss ``sum(out * W)``, random W) of `layer` against
    ``torch_fn(x, **params)`` with the layer's params by name (weight, bias)."""
    xb = burn.Tensor.from_data(x, device=dev).require_grad()
    out = layer(xb)
    w = RNG.standard_normal(out.shape)
    grads = (out * burn.Tensor.from_data(w, device=dev)).sum().backward()
    params = dict(layer.named_params())
    xt = torch.tensor(x, requires_grad=True)
    pt = {k: torch.tensor(p.val().to_numpy(), requires_grad=True) for k, p in params.items()}
    want = torch_fn(xt, **pt)
    (want * torch.from_numpy(w)).sum().backward()
    close(out.to_numpy(), want.detach().numpy())
    close(xb.grad(grads).to_numpy(), xt.grad.numpy())
    for name, p in params.items():
        close(p.val().grad(grads).to_numpy(), pt[name].grad.numpy())


# -- convolutions ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("stride", "padding", "dilation", "groups", "bias"),
    [((1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True), ((2, 1, 2), (0, 1, 2), (1, 2, 1), 2, False)],
)
def test_conv3d_matches_torch(
    dev: Any, stride: Any, padding: Any, dilation: Any, groups: int, bias: bool
) -> None:
    layer = nn.Conv3dConfig(
        (4, 6), (3, 2, 3), stride=stride, dilation=dilation, groups=groups, padding=padding, bias=bias
    ).init(dev)
    x = RNG.standard_normal((2, 4, 5, 6, 7))
    def torch_fn(x: Any, weight: Any, bias: Any = None) -> Any:
        return TF.conv3d(x, weight, bias, stride, padding, dilation, groups)

    check(dev, layer, x, torch_fn)


def test_conv3d_same_padding_keeps_the_size(dev: Any) -> None:
    layer = nn.Conv3dConfig((2, 3), (3, 3, 1), padding="same").init(dev)
    x = RNG.standard_normal((1, 2, 4, 5, 3))
    check(dev, layer, x, lambda x, weight, bias: TF.conv3d(x, weight, bias, padding=(1, 1, 0)))


@pytest.mark.parametrize(
    ("stride", "padding", "padding_out", "dilation", "groups"), [(1, 0, 0, 1, 1), (3, 1, 2, 2, 2)]
)
def test_conv_transpose1d_matches_torch(
    dev: Any, stride: int, padding: int, padding_out: int, dilation: int, groups: int
) -> None:
    layer = nn.ConvTranspose1dConfig(
        (4, 6), 3, stride=stride, dilation=dilation, padding=padding, padding_out=padding_out, groups=groups
    ).init(dev)
    x = RNG.standard_normal((2, 4, 7))
    check(dev, layer, x, lambda x, weight, bias: TF.conv_transpose1d(
        x, weight, bias, stride, padding, padding_out, groups, dilation
    ))


@pytest.mark.parametrize(
    ("stride", "padding", "padding_out", "dilation", "groups"),
    [((1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1), ((2, 1, 2), (1, 0, 1), (1, 0, 0), (1, 2, 1), 2)],
)
def test_conv_transpose3d_matches_torch(
    dev: Any, stride: Any, padding: Any, padding_out: Any, dilation: Any, groups: int
) -> None:
    layer = nn.ConvTranspose3dConfig(
        (4, 2), (2, 3, 2), stride=stride, dilation=dilation, padding=padding, padding_out=padding_out,
        groups=groups,
    ).init(dev)
    x = RNG.standard_normal((2, 4, 3, 4, 3))
    check(dev, layer, x, lambda x, weight, bias: TF.conv_transpose3d(
        x, weight, bias, stride, padding, padding_out, groups, dilation
    ))


def test_conv1d_asymmetric_padding_matches_torch_pad_then_conv(dev: Any) -> None:
    layer = nn.Conv1dConfig(3, 4, 3, padding=(2, 0)).init(dev)  # Burn's Explicit(left, right)
    assert layer.padding == (2, 0)
    x = RNG.standard_normal((2, 3, 6))
    check(dev, layer, x, lambda x, weight, bias: TF.conv1d(TF.pad(x, (2, 0)), weight, bias))


def test_conv2d_asymmetric_padding_matches_torch_pad_then_conv(dev: Any) -> None:
    # Burn's Explicit(top, left, bottom, right).
    layer = nn.Conv2dConfig((2, 3), (3, 2), stride=(2, 1), padding=(1, 0, 2, 1)).init(dev)
    assert layer.padding == ((1, 2), (0, 1))
    x = RNG.standard_normal((2, 2, 5, 4))
    check(dev, layer, x, lambda x, weight, bias: TF.conv2d(TF.pad(x, (0, 1, 1, 2)), weight, bias, (2, 1)))
    symmetric = nn.Conv2dConfig((2, 3), (3, 3), padding=(1, 2, 1, 2)).init(dev)
    assert symmetric.padding == (1, 2)


# -- pooling --------------------------------------------------------------------------------------
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"),
    [((2, 2, 2), (2, 2, 2), "valid", (1, 1, 1)), ((3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 2, 1))],
)
def test_max_pool3d_matches_torch(
    dev: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> None:
    layer = nn.MaxPool3dConfig(
        kernel, strides=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode
    ).init()
    pad = (0, 0, 0) if padding == "valid" else padding
    x = RNG.standard_normal((2, 2, 5, 6, 7))
    check(dev, layer, x, lambda x: TF.max_pool3d(x, kernel, stride, pad, dilation, ceil_mode=ceil_mode))


@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("include", [True, False])
def test_avg_pool3d_matches_torch(dev: Any, include: bool, ceil_mode: bool) -> None:
    kernel, stride, padding = (2, 3, 3), (2, 2, 2), (1, 1, 1)
    layer = nn.AvgPool3dConfig(
        kernel, strides=stride, padding=padding, count_include_pad=include, ceil_mode=ceil_mode
    ).init()
    x = RNG.standard_normal((2, 3, 5, 6, 7))
    check(dev, layer, x, lambda x: TF.avg_pool3d(
        x, kernel, stride, padding, ceil_mode=ceil_mode, count_include_pad=include
    ))


@pytest.mark.parametrize("size", [(1, 1, 1), (2, 3, 4), (5, 7, 9)])
def test_adaptive_avg_pool3d_matches_torch(dev: Any, size: Any) -> None:
    layer = nn.AdaptiveAvgPool3dConfig(size).init()
    x = RNG.standard_normal((2, 3, 5, 7, 6))
    check(dev, layer, x, lambda x: TF.adaptive_avg_pool3d(x, size))


@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"), [(2, 2, 0, 1), (3, 2, 1, 1), (3, 3, 1, 2), (2, 3, 1, 1)]
)
def test_pool1d_ceil_mode_matches_torch(
    dev: Any, kernel: int, stride: int, padding: int, dilation: int
) -> None:
    x = RNG.standard_normal((2, 3, 11))
    mp = nn.MaxPool1dConfig(kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=True).init()
    check(dev, mp, x, lambda x: TF.max_pool1d(x, kernel, stride, padding, dilation, ceil_mode=True))
    for include in (True, False):
        ap = nn.AvgPool1dConfig(kernel, stride=stride, padding=padding, count_include_pad=include,
                                ceil_mode=True).init()
        check(dev, ap, x, lambda x, include=include: TF.avg_pool1d(
            x, kernel, stride, padding, ceil_mode=True, count_include_pad=include
        ))


@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"),
    [((2, 2), (2, 2), (0, 0), (1, 1)), ((3, 2), (2, 3), (1, 1), (1, 1)), ((3, 3), (2, 2), (1, 0), (2, 1))],
)
def test_pool2d_ceil_mode_matches_torch(
    dev: Any, kernel: Any, stride: Any, padding: Any, dilation: Any
) -> None:
    x = RNG.standard_normal((2, 3, 9, 8))
    mp = nn.MaxPool2dConfig(kernel, strides=stride, padding=padding, dilation=dilation, ceil_mode=True).init()
    check(dev, mp, x, lambda x: TF.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode=True))
    for include in (True, False):
        ap = nn.AvgPool2dConfig(kernel, strides=stride, padding=padding, count_include_pad=include,
                                ceil_mode=True).init()
        check(dev, ap, x, lambda x, include=include: TF.avg_pool2d(
            x, kernel, stride, padding, ceil_mode=True, count_include_pad=include
        ))


def test_max_pool_ceil_mode_indices_match_torch() -> None:
    from burn.tensor import module as F

    x = RNG.standard_normal((2, 2, 5, 7, 6))
    xb = burn.Tensor.from_data(x, backend=nd.NdArray(float_dtype="float64"))
    _, got = F.max_pool3d_with_indices(xb, (2, 3, 2), (2, 2, 2), (1, 1, 0), ceil_mode=True)
    _, want = TF.max_pool3d(torch.from_numpy(x), (2, 3, 2), (2, 2, 2), (1, 1, 0), ceil_mode=True,
                            return_indices=True)
    np.testing.assert_array_equal(got.to_numpy(), want.numpy())
    _, got2 = F.max_pool2d_with_indices(xb[:, :, 0], (3, 3), (2, 2), (1, 1), ceil_mode=True)
    _, want2 = TF.max_pool2d(torch.from_numpy(x[:, :, 0]), 3, 2, 1, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(got2.to_numpy(), want2.numpy())


def test_pool_layers_reject_asymmetric_padding() -> None:
    with pytest.raises(ValueError, match="MaxPool2dConfig: padding must be"):
        nn.MaxPool2dConfig((3, 3), padding=(1, 0, 1, 0)).init()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="AvgPool1dConfig: padding must be"):
        nn.AvgPool1dConfig(3, padding=(1, 0)).init()  # type: ignore[arg-type]
