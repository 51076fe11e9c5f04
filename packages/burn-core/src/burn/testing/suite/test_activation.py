"""Activation ops through `burn.activation`, and their backward helpers on primitives: the
element-wise activations (ReLU and its variants, GELU exact and approximate, sigmoid, SiLU,
softplus, ELU/CELU/SELU, hard and soft variants, threshold) and those along a dim (softmax,
log-softmax, softmin, GLU), against NumPy float64 references computed from the inputs rounded to
the dtype under test (`burn.testing.reference.activation`); large inputs stay finite and the
piecewise ones follow PyTorch at their breakpoints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, f64, make, rand_float, wrap_float
from burn.testing.reference import activation as ref


def _act() -> Any:
    import burn

    return burn.activation


@dataclass(frozen=True)
class Activation:
    op: str
    call: Callable[[Any, Any], Any]  # (burn.activation, tensor) -> tensor
    ref: Callable[[np.ndarray], np.ndarray]


ACTIVATIONS = [
    Activation("relu", lambda a, t: a.relu(t), lambda x: np.maximum(x, 0.0)),
    Activation("leaky_relu", lambda a, t: a.leaky_relu(t, 0.1), lambda x: np.where(x >= 0, x, 0.1 * x)),
    Activation("leaky_relu", lambda a, t: a.leaky_relu(t), lambda x: np.where(x >= 0, x, 0.01 * x)),
    Activation("gelu", lambda a, t: a.gelu(t), ref.gelu),
    Activation("sigmoid", lambda a, t: a.sigmoid(t), ref.sigmoid),
    Activation("log_sigmoid", lambda a, t: a.log_sigmoid(t), ref.log_sigmoid),
    Activation("silu", lambda a, t: a.silu(t), lambda x: x * ref.sigmoid(x)),
    Activation("softplus", lambda a, t: a.softplus(t), lambda x: ref.softplus(x, 1.0)),
    Activation("softplus", lambda a, t: a.softplus(t, beta=2.0), lambda x: ref.softplus(x, 2.0)),
    Activation("hard_sigmoid", lambda a, t: a.hard_sigmoid(t), lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
    Activation(
        "hard_sigmoid",
        lambda a, t: a.hard_sigmoid(t, alpha=0.5, beta=0.25),
        lambda x: np.clip(0.5 * x + 0.25, 0, 1),
    ),
    Activation("softmax", lambda a, t: a.softmax(t, -1), lambda x: ref.softmax(x, -1)),
    Activation("softmax", lambda a, t: a.softmax(t, 0), lambda x: ref.softmax(x, 0)),
    Activation("log_softmax", lambda a, t: a.log_softmax(t, -1), lambda x: ref.log_softmax(x, -1)),
    Activation("log_softmax", lambda a, t: a.log_softmax(t, 0), lambda x: ref.log_softmax(x, 0)),
]


@covers(*{c.op for c in ACTIVATIONS})
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("case", ACTIVATIONS, ids=lambda c: c.op)
def test_activation(backend: Any, float_dtype: DType, case: Activation, shape: Any, rng: Any) -> None:
    x = rand_float(rng, shape, float_dtype, -4, 4)
    out = case.call(_act(), make(backend, x, float_dtype))
    check_float(out, case.ref(f64(x)), float_dtype, terms=4, what=case.op)


@covers("relu", "leaky_relu", "gelu", "sigmoid", "log_sigmoid", "silu", "softplus", "hard_sigmoid")
@pytest.mark.parametrize("shape", [(), (0, 3)], ids=str)
def test_activation_edge_shapes(backend: Any, shape: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    x = rand_float(rng, shape, dtype, -4, 4)
    t = make(backend, x, dtype)
    for case in ACTIVATIONS:
        if case.op in ("softmax", "log_softmax"):
            continue
        check_float(case.call(_act(), t), case.ref(f64(x)), dtype, terms=4, what=f"{case.op} on {shape}")


@covers("sigmoid", "log_sigmoid", "softplus", "softmax", "log_softmax", "silu")
def test_activations_are_stable_for_large_inputs(backend: Any, float_dtype: DType) -> None:
    a = _act()
    big = 60.0 if float_dtype is DType.F16 else 500.0  # exp(60) already overflows float16
    x = np.array([-big, -30.0, 0.0, 30.0, big])
    t = make(backend, x, float_dtype)
    with np.errstate(over="ignore"):
        check_float(a.sigmoid(t), ref.sigmoid(x), float_dtype, what="sigmoid")
        check_float(a.log_sigmoid(t), ref.log_sigmoid(x), float_dtype, what="log_sigmoid")
        check_float(a.softplus(t), ref.softplus(x, 1.0), float_dtype, what="softplus")
        check_float(a.silu(t), x * ref.sigmoid(x), float_dtype, what="silu")
    rows = make(backend, np.array([[big, big - 1.0, 0.0], [-big, -big, -big]]), float_dtype)
    wide = f64(np.array([[big, big - 1.0, 0.0], [-big, -big, -big]]).astype(float_dtype.numpy))
    check_float(a.softmax(rows, 1), ref.softmax(wide, 1), float_dtype, what="softmax with large logits")
    check_float(
        a.log_softmax(rows, 1), ref.log_softmax(wide, 1), float_dtype, what="log_softmax with large logits"
    )


@covers("relu_backward", "sigmoid_backward", "gelu_backward")
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4)], ids=str)
def test_activation_backward_helpers(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    x = f64(rand_float(rng, shape, float_dtype, -3, 3))
    g = f64(rand_float(rng, shape, float_dtype, -1, 1))
    tg = make(backend, g, float_dtype)
    relu_out = np.maximum(x, 0.0)
    sig_out = f64(ref.sigmoid(x).astype(float_dtype.numpy))
    relu_grad = backend.relu_backward(make(backend, relu_out, float_dtype)._p, tg._p)
    check_float(
        wrap_float(backend, relu_grad), np.where(relu_out > 0, g, 0.0), float_dtype, what="relu_backward"
    )
    sig_grad = backend.sigmoid_backward(make(backend, sig_out, float_dtype)._p, tg._p)
    check_float(
        wrap_float(backend, sig_grad),
        g * sig_out * (1 - sig_out),
        float_dtype,
        terms=2,
        what="sigmoid_backward",
    )
    gelu_grad = backend.gelu_backward(make(backend, x, float_dtype)._p, tg._p)
    check_float(
        wrap_float(backend, gelu_grad), g * ref.gelu_grad(x), float_dtype, terms=4, what="gelu_backward"
    )


@covers("gelu_approximate_backward")
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4), (3, 700)], ids=str)  # (3, 700): compiled paths
def test_gelu_approximate_backward_helper(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    x = f64(rand_float(rng, shape, float_dtype, -5, 5))
    g = f64(rand_float(rng, shape, float_dtype, -1, 1))
    tx, tg = make(backend, x, float_dtype), make(backend, g, float_dtype)
    got = backend.gelu_approximate_backward(tx._p, tg._p)
    # d/dx x (1 + tanh u) / 2 = (1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2, u = c (x + k x^3)
    c, k = np.sqrt(2.0 / np.pi), 0.044715
    th = np.tanh(c * (x + k * x**3))
    slope = 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * c * (1.0 + 3.0 * k * x * x)
    # the slope is a sum of terms up to ~4 in size, in the dtype: an error of a few of their ulps
    check_float(wrap_float(backend, got), g * slope, float_dtype, terms=8, what="gelu_approximate_backward")


SELU_ALPHA = 1.6732632423543772848170429916717


SELU_SCALE = 1.0507009873554804934193349852946


def _elu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def _glu(x: np.ndarray, dim: int) -> np.ndarray:
    a, b = np.split(x, 2, axis=dim)
    return a * ref.sigmoid(b)


ELEMENTWISE = [
    Activation("elu", lambda a, t: a.elu(t), lambda x: _elu(x, 1.0)),
    Activation("elu", lambda a, t: a.elu(t, alpha=0.5), lambda x: _elu(x, 0.5)),
    Activation(
        "celu", lambda a, t: a.celu(t, alpha=2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2))
    ),
    Activation("selu", lambda a, t: a.selu(t), lambda x: SELU_SCALE * _elu(x, SELU_ALPHA)),
    Activation("relu6", lambda a, t: a.relu6(t * 2.0), lambda x: np.clip(2.0 * x, 0.0, 6.0)),
    Activation("hardtanh", lambda a, t: a.hardtanh(t), lambda x: np.clip(x, -1.0, 1.0)),
    Activation("hardtanh", lambda a, t: a.hardtanh(t, -0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    Activation("hard_swish", lambda a, t: a.hard_swish(t), lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0),
    Activation("softsign", lambda a, t: a.softsign(t), lambda x: x / (1.0 + np.abs(x))),
    Activation("tanhshrink", lambda a, t: a.tanhshrink(t), lambda x: x - np.tanh(x)),
    Activation("threshold", lambda a, t: a.threshold(t, 0.5, -2.0), lambda x: np.where(x > 0.5, x, -2.0)),
    Activation("thresholded_relu", lambda a, t: a.thresholded_relu(t), lambda x: np.where(x > 1.0, x, 0.0)),
    Activation(
        "thresholded_relu",
        lambda a, t: a.thresholded_relu(t, alpha=-0.5),
        lambda x: np.where(x > -0.5, x, 0.0),
    ),
    Activation("gelu_approximate", lambda a, t: a.gelu_approximate(t), _gelu_tanh),
    Activation("gelu_approximate", lambda a, t: a.gelu(t, approximate="tanh"), _gelu_tanh),
]


ALONG_DIM = [
    Activation("glu", lambda a, t: a.glu(t), lambda x: _glu(x, -1)),
    Activation("glu", lambda a, t: a.glu(t, 0), lambda x: _glu(x, 0)),
    Activation("softmin", lambda a, t: a.softmin(t, -1), lambda x: ref.softmax(-x, -1)),
    Activation("softmin", lambda a, t: a.softmin(t, 0), lambda x: ref.softmax(-x, 0)),
]


@covers(*{c.op for c in ELEMENTWISE})
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("case", ELEMENTWISE, ids=lambda c: c.op)
def test_elementwise_activation(
    backend: Any, float_dtype: DType, case: Activation, shape: Any, rng: Any
) -> None:
    x = rand_float(rng, shape, float_dtype, -4, 4)
    out = case.call(_act(), make(backend, x, float_dtype))
    check_float(out, case.ref(f64(x)), float_dtype, terms=4, what=case.op)


@covers(*{c.op for c in ALONG_DIM})
@pytest.mark.parametrize("case", ALONG_DIM, ids=lambda c: c.op)
def test_activation_along_dim(backend: Any, float_dtype: DType, case: Activation, rng: Any) -> None:
    x = rand_float(rng, (4, 3, 6), float_dtype, -4, 4)
    out = case.call(_act(), make(backend, x, float_dtype))
    check_float(out, case.ref(f64(x)), float_dtype, terms=4, what=case.op)


@covers("elu", "celu", "selu", "softsign", "gelu_approximate", "softmin")
def test_activations_stay_finite_for_large_inputs(backend: Any) -> None:
    a = _act()
    x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    t = make(backend, x, backend.float_dtype)
    dtype = backend.float_dtype
    check_float(a.elu(t), _elu(x, 1.0), dtype, what="elu")
    check_float(
        a.celu(t, 0.5), np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0) / 0.5)), dtype, what="celu"
    )
    check_float(a.selu(t), SELU_SCALE * _elu(x, SELU_ALPHA), dtype, what="selu")
    check_float(a.softsign(t), x / (1 + np.abs(x)), dtype, what="softsign")
    check_float(a.gelu_approximate(t), np.where(x > 0, x, 0.0), dtype, what="gelu_approximate")
    check_float(a.softmin(t, 0), ref.softmax(-x, 0), dtype, what="softmin")


@covers("relu6", "hardtanh", "threshold", "thresholded_relu")
def test_piecewise_activations_at_their_breakpoints(backend: Any) -> None:
    # Exactly at a threshold the value is the "else" branch (``x > threshold`` is strict).
    a = _act()
    dtype = backend.float_dtype
    t = make(backend, np.array([-1.0, 0.0, 1.0, 6.0]), dtype)
    check_float(a.relu6(t), [0.0, 0.0, 1.0, 6.0], dtype, what="relu6")
    check_float(a.hardtanh(t, 0.0, 1.0), [0.0, 0.0, 1.0, 1.0], dtype, what="hardtanh")
    check_float(a.threshold(t, 1.0, 9.0), [9.0, 9.0, 9.0, 6.0], dtype, what="threshold")
    check_float(a.thresholded_relu(t, 0.0), [0.0, 0.0, 1.0, 6.0], dtype, what="thresholded_relu")


def test_activation_argument_errors(backend: Any) -> None:
    a = _act()
    t = make(backend, np.zeros((2, 3)), backend.float_dtype)
    with pytest.raises(ShapeError, match="glu: dim 1 of shape .* odd size 3"):
        a.glu(t, 1)
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        a.gelu(t, approximate="erf")
    with pytest.raises(ValueError, match="celu: alpha must not be 0"):
        a.celu(t, 0.0)
    with pytest.raises(ValueError, match="hardtanh: min_val 2.0 must not exceed max_val 1.0"):
        a.hardtanh(t, 2.0, 1.0)
