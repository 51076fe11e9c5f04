"""The nn layers that `test_nn_layers.py` / `test_nn_loss.py` check against NumPy only, against
PyTorch on the same weights: 1d pooling, MSE, the parameter-free activations and SwiGlu.

Weight conventions: burn's Linear weight is ``[d_input, d_output]``, the transpose of PyTorch's
``[out, in]``, so SwiGlu's two linears are passed transposed to ``torch.nn.functional.linear``.
Burn's HardSigmoid is ``clamp(alpha * x + beta, 0, 1)``; PyTorch's is that with alpha 1/6.
"""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import nn

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
torch = pytest.importorskip("torch", reason="PyTorch is not installed")
TF = torch.nn.functional

RNG = np.random.default_rng(2024)


@pytest.fixture(scope="module")
def dev():
    return nd.NdArray(float_dtype="float64").default_device()


def tensor(dev, array, **kw):
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


def tt(a):
    return torch.from_numpy(np.array(a))


def close(actual, expected, tol=1e-10):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"), [(3, 1, 0, 1), (3, 2, 1, 2), (2, 3, 1, 1)]
)
def test_pool1d_matches_torch(dev, kernel, stride, padding, dilation) -> None:
    x = RNG.standard_normal((2, 3, 13))
    mp = nn.MaxPool1dConfig(kernel, stride=stride, padding=padding, dilation=dilation).init()
    close(mp(tensor(dev, x)).to_numpy(), TF.max_pool1d(tt(x), kernel, stride, padding, dilation).numpy())
    for include in (True, False):
        ap = nn.AvgPool1dConfig(kernel, stride=stride, padding=padding, count_include_pad=include).init()
        want = TF.avg_pool1d(tt(x), kernel, stride, padding, count_include_pad=include)
        close(ap(tensor(dev, x)).to_numpy(), want.numpy())


@pytest.mark.parametrize("out", [1, 4, 5, 13])
def test_adaptive_avg_pool1d_matches_torch(dev, out) -> None:
    x = RNG.standard_normal((2, 3, 13))
    got = nn.AdaptiveAvgPool1dConfig(out).init()(tensor(dev, x))
    close(got.to_numpy(), TF.adaptive_avg_pool1d(tt(x), out).numpy())


def test_mse_loss_matches_torch_for_every_reduction(dev) -> None:
    a, b = RNG.standard_normal((3, 4, 2)), RNG.standard_normal((3, 4, 2))
    loss = nn.MseLossConfig().init()
    close(loss(tensor(dev, a), tensor(dev, b)).to_numpy(), [TF.mse_loss(tt(a), tt(b)).item()])
    for reduction in (nn.Reduction.MEAN, nn.Reduction.SUM):
        want = TF.mse_loss(tt(a), tt(b), reduction=reduction.value).item()
        close(loss(tensor(dev, a), tensor(dev, b), reduction).to_numpy(), [want])
    close(
        loss.forward_no_reduction(tensor(dev, a), tensor(dev, b)).to_numpy(),
        TF.mse_loss(tt(a), tt(b), reduction="none").numpy(),
    )


def test_parameter_free_activations_match_torch(dev) -> None:
    x = RNG.standard_normal((3, 4, 5)) * 4
    t = tt(x)
    pairs = [
        (nn.Relu(), TF.relu(t)),
        (nn.Sigmoid(), torch.sigmoid(t)),
        (nn.Tanh(), torch.tanh(t)),
        (nn.HardSigmoidConfig(alpha=1 / 6, beta=0.5).init(), TF.hardsigmoid(t)),
        (nn.LeakyReluConfig(0.3).init(), TF.leaky_relu(t, 0.3)),
    ]
    for layer, want in pairs:
        close(layer(tensor(dev, x)).to_numpy(), want.numpy(), tol=1e-12)


@pytest.mark.parametrize("bias", [False, True])
def test_swiglu_matches_torch_on_the_same_weights(dev, bias) -> None:
    sw = nn.SwiGluConfig(4, 6, bias=bias).init(dev)
    p = {path: tt(q.val().to_numpy()) for path, q in sw.named_params()}
    x = RNG.standard_normal((2, 3, 4))
    inner = TF.linear(tt(x), p["linear_inner.weight"].T, p.get("linear_inner.bias"))
    outer = TF.linear(tt(x), p["linear_outer.weight"].T, p.get("linear_outer.bias"))
    close(sw(tensor(dev, x)).to_numpy(), (TF.silu(inner) * outer).numpy())
