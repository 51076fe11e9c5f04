"""Functional module ops (`burn.tensor.module`) and activations (`burn.activation`): argument
normalization passed to the backend, shape validation with clear errors, kinds, and a few
end-to-end values against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import Float, Int, Tensor, activation
from burn.errors import BackendMismatchError, KindError, ShapeError
from burn.tensor import module as F

burn_ndarray = pytest.importorskip("burn_ndarray")


class Recording(burn_ndarray.NdArray):
    """ndarray that records the arguments each module op receives (after the Tensor layer)."""

    def __init__(self):
        super().__init__(float_dtype="float64")
        self.calls = []

    def _record(name):  # noqa: N805 - a decorator factory used in the class body
        def method(self, *args):
            self.calls.append((name, args[1:]))  # everything but the input primitive
            parent = super(Recording, self)  # noqa: UP008 - a closure has no __class__ cell
            return getattr(parent, name)(*args)

        return method

    conv1d = _record("conv1d")
    conv2d = _record("conv2d")
    conv_transpose2d = _record("conv_transpose2d")
    max_pool2d = _record("max_pool2d")
    max_pool1d = _record("max_pool1d")
    avg_pool2d = _record("avg_pool2d")
    avg_pool1d = _record("avg_pool1d")
    adaptive_avg_pool2d = _record("adaptive_avg_pool2d")
    interpolate = _record("interpolate")


@pytest.fixture
def R():
    return Recording()


def rand(backend, *shape, seed=0):
    return Tensor.from_data(np.random.default_rng(seed).standard_normal(shape), backend=backend)


# -- argument normalization -------------------------------------------------------------------------
def test_conv2d_normalizes_ints_to_pairs(R):
    x, w = rand(R, 1, 4, 7, 7), rand(R, 6, 2, 3, 3)
    out = F.conv2d(x, w, stride=2, padding=(1, 0), dilation=1, groups=2)
    assert out.shape == (1, 6, 4, 3) and out.kind is Float
    name, args = R.calls[-1]
    assert name == "conv2d" and args[2:] == ((2, 2), (1, 0), (1, 1), 2) and args[1] is None


def test_pool_stride_defaults_to_kernel(R):
    x = rand(R, 2, 3, 8, 8)
    assert F.max_pool2d(x, 2).shape == (2, 3, 4, 4)
    assert R.calls[-1] == ("max_pool2d", ((2, 2), (2, 2), (0, 0), (1, 1)))
    assert F.avg_pool2d(x, (2, 4), stride=1, padding=(1, 2), count_include_pad=False).shape == (2, 3, 9, 9)
    assert R.calls[-1] == ("avg_pool2d", ((2, 4), (1, 1), (1, 2), False))
    assert F.max_pool1d(rand(R, 1, 2, 9), 3).shape == (1, 2, 3)
    assert R.calls[-1] == ("max_pool1d", (3, 3, 0, 1))
    assert F.avg_pool1d(rand(R, 1, 2, 9), 3, stride=2).shape == (1, 2, 4)


def test_other_module_ops_shapes_and_kinds(R):
    x = rand(R, 1, 2, 5, 5)
    out, idx = F.max_pool2d_with_indices(x, 3, stride=1, padding=1)
    assert out.shape == idx.shape == (1, 2, 5, 5) and idx.kind is Int
    out, idx = F.max_pool1d_with_indices(rand(R, 1, 2, 6), 2)
    assert out.shape == (1, 2, 3) and idx.kind is Int
    assert F.adaptive_avg_pool2d(x, 3).shape == (1, 2, 3, 3)
    assert R.calls[-1] == ("adaptive_avg_pool2d", ((3, 3),))
    assert F.adaptive_avg_pool1d(rand(R, 1, 2, 7), 4).shape == (1, 2, 4)
    assert F.interpolate(x, (10, 3), mode="bilinear", align_corners=True).shape == (1, 2, 10, 3)
    assert R.calls[-1] == ("interpolate", ((10, 3), "bilinear", True))
    assert F.conv1d(rand(R, 2, 3, 10), rand(R, 4, 3, 3), rand(R, 4), padding=1).shape == (2, 4, 10)
    assert F.conv_transpose2d(x, rand(R, 2, 3, 3, 3), stride=2, padding_out=1).shape == (1, 3, 12, 12)
    weights = rand(R, 10, 4)
    emb = F.embedding(weights, Tensor.from_data([[1, 2, 3]], backend=R))
    assert emb.shape == (1, 3, 4)
    np.testing.assert_allclose(emb.to_numpy()[0], weights.to_numpy()[[1, 2, 3]])


# -- validation ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda R: F.conv2d(rand(R, 1, 3, 5, 5), rand(R, 4, 2, 3, 3)),
            ShapeError,
            r"conv2d: weight \(4, 2, 3, 3\) expects 2 input channels .* the input \(1, 3, 5, 5\) has 3",
        ),
        (
            lambda R: F.conv2d(rand(R, 3, 5, 5), rand(R, 4, 3, 3, 3)),
            ShapeError,
            r"conv2d: the input must have rank 4 \(\[N, C_in, H, W\]\), got shape \(3, 5, 5\)",
        ),
        (
            lambda R: F.conv2d(rand(R, 1, 4, 5, 5), rand(R, 3, 2, 3, 3), groups=2),
            ShapeError,
            "not divisible by groups=2",
        ),
        (
            lambda R: F.conv2d(rand(R, 1, 3, 2, 2), rand(R, 4, 3, 3, 3)),
            ShapeError,
            "input height 2 is too small for kernel 3",
        ),
        (
            lambda R: F.conv2d(rand(R, 1, 3, 5, 5), rand(R, 4, 3, 3, 3), rand(R, 3)),
            ShapeError,
            r"bias must have shape \(4,\), got \(3,\)",
        ),
        (
            lambda R: F.conv2d(rand(R, 1, 3, 5, 5), rand(R, 4, 3, 3, 3), stride=0),
            ValueError,
            "stride must be >= 1",
        ),
        (
            lambda R: F.conv2d(rand(R, 1, 3, 5, 5), rand(R, 4, 3, 3, 3), padding=(1, 2, 3)),
            ValueError,
            "padding must be an int or a pair",
        ),
        (
            lambda R: F.conv1d(rand(R, 1, 3, 5), rand(R, 4, 3, 3, 3)),
            ShapeError,
            "weight must have shape rank 3",
        ),
        (
            lambda R: F.conv_transpose2d(rand(R, 1, 3, 5, 5), rand(R, 2, 3, 3, 3)),
            ShapeError,
            "expects 2 input channels",
        ),
        (
            lambda R: F.conv_transpose2d(rand(R, 1, 3, 5, 5), rand(R, 3, 3, 3, 3), padding_out=1),
            ValueError,
            "padding_out",
        ),
        (lambda R: F.max_pool2d(rand(R, 1, 1, 4, 4), 2, padding=2), ValueError, "at most half the kernel"),
        (lambda R: F.avg_pool1d(rand(R, 1, 1, 2), 3), ShapeError, "input length 2 is too small"),
        (lambda R: F.adaptive_avg_pool2d(rand(R, 1, 1, 0, 4), 2), ShapeError, "empty spatial dim"),
        (lambda R: F.interpolate(rand(R, 1, 1, 4, 4), 8, mode="area"), ValueError, "mode must be one of"),
        (lambda R: F.embedding(rand(R, 10), Tensor.from_data([1], backend=R)), ShapeError, r"shape \[V, D\]"),
        (lambda R: F.embedding(rand(R, 10, 2), rand(R, 3)), KindError, "indices must be a Int tensor"),
        (
            lambda R: F.max_pool2d(Tensor.zeros((1, 1, 4, 4), kind=Int, backend=R), 2),
            KindError,
            "max_pool2d: expects a Float input",
        ),
        (
            lambda R: F.conv2d(rand(R, 1, 3, 5, 5), rand(burn_ndarray.NdArray(), 4, 3, 3, 3)),
            BackendMismatchError,
            "two backends",
        ),
    ],
)
def test_module_op_validation(R, call, error, message):
    with pytest.raises(error, match=message):
        call(R)
    assert not R.calls  # rejected before reaching the backend


def test_module_ops_match_pytorch():
    torch = pytest.importorskip("torch")
    B = burn_ndarray.NdArray(float_dtype="float64")
    x, w, b = rand(B, 2, 4, 7, 6, seed=1), rand(B, 6, 2, 3, 2, seed=2), rand(B, 6, seed=3)
    tx, tw, tb = (torch.from_numpy(np.array(t)) for t in (x, w, b))
    np.testing.assert_allclose(
        F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2).to_numpy(),
        torch.nn.functional.conv2d(tx, tw, tb, stride=(2, 1), padding=1, dilation=(1, 2), groups=2).numpy(),
        rtol=1e-10,
        atol=1e-10,
    )
    np.testing.assert_allclose(
        F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False).to_numpy(),
        torch.nn.functional.avg_pool2d(tx, 3, stride=2, padding=1, count_include_pad=False).numpy(),
    )


# -- activations ------------------------------------------------------------------------------------------
def test_activation_namespace():
    assert burn.activation is activation
    import burn.activation as again

    assert again.relu is burn.tensor.activation.relu


@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (activation.relu, lambda x: np.maximum(x, 0)),
        (lambda t: activation.leaky_relu(t, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
        (activation.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
        (activation.log_sigmoid, lambda x: -np.log1p(np.exp(-x))),
        (activation.tanh, np.tanh),
        (activation.silu, lambda x: x / (1 + np.exp(-x))),
        (lambda t: activation.softplus(t, 2.0), lambda x: np.log1p(np.exp(2 * x)) / 2),
        (activation.hard_sigmoid, lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
        (lambda t: activation.softmax(t, -1), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
        (lambda t: activation.log_softmax(t, 0), lambda x: x - np.log(np.exp(x).sum(0, keepdims=True))),
        (activation.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
        (lambda t: activation.prelu(t, 0.25), lambda x: np.where(x > 0, x, 0.25 * x)),
    ],
)
def test_activations(fn, ref):
    B = burn_ndarray.NdArray(float_dtype="float64")
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    out = fn(Tensor.from_data(x, backend=B))
    assert out.kind is Float and out.shape == (3, 4)
    np.testing.assert_allclose(out.to_numpy(), ref(x), rtol=1e-6, atol=1e-7)


def test_gelu_is_exact():
    import math

    B = burn_ndarray.NdArray(float_dtype="float64")
    x = [-2.0, -0.5, 0.0, 1.0, 3.0]
    want = [v * (1 + math.erf(v / math.sqrt(2))) / 2 for v in x]
    np.testing.assert_allclose(activation.gelu(Tensor.from_data(x, backend=B)).tolist(), want, rtol=1e-7)


def test_prelu_per_channel():
    B = burn_ndarray.NdArray(float_dtype="float64")
    x = np.linspace(-2, 2, 24).reshape(2, 3, 4)
    alpha = np.array([0.1, 0.2, 0.3])
    out = activation.prelu(Tensor.from_data(x, backend=B), Tensor.from_data(alpha, backend=B))
    np.testing.assert_allclose(out.to_numpy(), np.where(x > 0, x, alpha[None, :, None] * x))
    with pytest.raises(ShapeError, match="one per channel"):
        activation.prelu(Tensor.from_data(x, backend=B), Tensor.from_data([0.1, 0.2], backend=B))


def test_activation_errors():
    B = burn_ndarray.NdArray()
    i = Tensor.from_data([1, 2], backend=B)
    with pytest.raises(KindError, match="relu: expects a Float tensor, got a Int tensor"):
        activation.relu(i)
    with pytest.raises(TypeError, match="burn.Tensor"):
        activation.sigmoid(np.ones(2))
    with pytest.raises(ShapeError, match="softmax: dim 1 is out of range"):
        activation.softmax(i.float(), 1)
    with pytest.raises(ValueError, match="beta must be positive"):
        activation.softplus(i.float(), 0.0)
