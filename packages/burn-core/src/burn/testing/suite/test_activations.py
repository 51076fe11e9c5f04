"""Activation ops through `burn.activation`, and their backward helpers on primitives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing import nn_reference as ref
from burn.testing.helpers import check_float, f64, make, rand_float


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


def _wrap_float(backend: Any, primitive: Any) -> Any:
    from burn import Float
    from burn.tensor._base import wrap

    return wrap(primitive, backend, Float)


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
        _wrap_float(backend, relu_grad), np.where(relu_out > 0, g, 0.0), float_dtype, what="relu_backward"
    )
    sig_grad = backend.sigmoid_backward(make(backend, sig_out, float_dtype)._p, tg._p)
    check_float(
        _wrap_float(backend, sig_grad),
        g * sig_out * (1 - sig_out),
        float_dtype,
        terms=2,
        what="sigmoid_backward",
    )
    gelu_grad = backend.gelu_backward(make(backend, x, float_dtype)._p, tg._p)
    check_float(
        _wrap_float(backend, gelu_grad), g * ref.gelu_grad(x), float_dtype, terms=4, what="gelu_backward"
    )
