"""Gradients of the activation ops against central finite differences (float64), and of the public
compositions of `burn.activation` users train with (mish, prelu, tanh).

Piecewise ops are checked at inputs away from their breakpoints (where the derivative jumps and
a finite difference straddles the jump); their gradients at the breakpoints follow PyTorch
(checked below), their values are in ``test_activation.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.testing import covers
from burn.testing.gradcheck import Case, const, finite_difference_test, inputs, nz, op, u

# Inputs avoiding 0, +-1, 0.5, 3, 6 and -3 (the breakpoints used below) by at least 0.05.
_AWAY = const([-7.0, -4.1, -2.6, -1.4, -0.7, -0.2, 0.3, 0.8, 1.6, 2.2, 4.4, 5.5, 6.7])


CASES = [
    Case("relu", ("relu",), lambda x: op("relu", x), inputs(nz((2, 4), 0.05, 2.0))),
    Case("leaky_relu", ("leaky_relu",), lambda x: op("leaky_relu", x, 0.1), inputs(nz((2, 4), 0.05, 2.0))),
    Case("gelu", ("gelu",), lambda x: op("gelu", x), inputs(u((2, 4), -4, 4))),
    Case("sigmoid", ("sigmoid",), lambda x: op("sigmoid", x), inputs(u((2, 4), -6, 6))),
    Case("log_sigmoid", ("log_sigmoid",), lambda x: op("log_sigmoid", x), inputs(u((2, 4), -6, 6))),
    Case("silu", ("silu",), lambda x: op("silu", x), inputs(u((2, 4), -4, 4))),
    Case("softplus", ("softplus",), lambda x: op("softplus", x, 2.0), inputs(u((2, 4), -4, 4))),
    Case(
        "softplus_large",
        ("softplus",),
        lambda x: op("softplus", x, 1.0),
        inputs(const([-30.0, -5.0, 5.0, 25.0, 40.0])),
    ),
    Case(
        "hard_sigmoid",
        ("hard_sigmoid",),
        lambda x: op("hard_sigmoid", x, 0.2, 0.5),
        inputs(const([-4.0, -2.0, -0.3, 0.0, 1.1, 2.4, 3.0, 6.0])),
    ),
    Case("softmax", ("softmax",), lambda x: op("softmax", x, 1), inputs(u((2, 4)))),
    Case("log_softmax", ("log_softmax",), lambda x: op("log_softmax", x, 0), inputs(u((3, 2)))),
    Case(
        "gelu_approximate",
        ("gelu_approximate",),
        lambda x: op("gelu_approximate", x),
        inputs(u((2, 4), -4, 4)),
    ),
    Case("elu", ("elu",), lambda x: op("elu", x, 0.7), inputs(_AWAY)),
    Case("elu_large", ("elu",), lambda x: op("elu", x, 1.0), inputs(const([-800.0, -30.0, 30.0, 800.0]))),
    Case("celu", ("celu",), lambda x: op("celu", x, 1.5), inputs(_AWAY)),
    Case("selu", ("selu",), lambda x: op("selu", x), inputs(_AWAY)),
    Case("relu6", ("relu6",), lambda x: op("relu6", x), inputs(_AWAY)),
    Case("hardtanh", ("hardtanh",), lambda x: op("hardtanh", x, -1.0, 2.0), inputs(_AWAY)),
    Case("hard_swish", ("hard_swish",), lambda x: op("hard_swish", x), inputs(_AWAY)),
    Case("softsign", ("softsign",), lambda x: op("softsign", x), inputs(u((2, 4), -4, 4))),
    Case("tanhshrink", ("tanhshrink",), lambda x: op("tanhshrink", x), inputs(u((2, 4)))),
    Case("threshold", ("threshold",), lambda x: op("threshold", x, 0.5, -3.0), inputs(_AWAY)),
    Case("thresholded_relu", ("thresholded_relu",), lambda x: op("thresholded_relu", x, 1.0), inputs(_AWAY)),
    Case("glu", ("glu",), lambda x: op("glu", x, 1), inputs(u((2, 6, 3)))),
    Case("glu_last", ("glu",), lambda x: op("glu", x, 2), inputs(u((2, 3, 4)))),
    Case("softmin", ("softmin",), lambda x: op("softmin", x, 1), inputs(u((2, 4)))),
]


def _activation(name: str) -> Any:
    from burn import activation

    return getattr(activation, name)


# Public compositions of the activation module (not contract ops, but users train with them).
COMPOSED = [
    Case("mish", (), lambda x: _activation("mish")(x), inputs(u((2, 4), -4, 4))),
    Case("prelu", (), lambda x, a: _activation("prelu")(x, a), inputs(nz((2, 3), 0.05, 2.0), u((3,)))),
    Case("tanh", (), lambda x: _activation("tanh")(x), inputs(u((2, 4)))),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES + COMPOSED, __name__)


@covers("relu6", "hardtanh", "threshold")
def test_piecewise_gradients_at_breakpoints_follow_pytorch(backend: Any) -> None:
    # PyTorch's hardtanh/relu6 pass no gradient at their bounds, threshold none at its threshold.
    from burn import Tensor
    from burn.testing.gradcheck import require_autodiff

    require_autodiff(backend)
    x = Tensor.from_data(np.array([-1.0, 0.0, 1.0, 6.0]), backend=backend).require_grad()
    loss = op("relu6", x).sum() + op("hardtanh", x, -1.0, 1.0).sum() + op("threshold", x, 1.0, 0.0).sum()
    grad = x.grad(loss.backward())
    assert grad is not None
    # x = -1: all at or outside a bound; 0: hardtanh inside; 1: relu6 inside; 6: threshold above.
    np.testing.assert_array_equal(grad.to_numpy(), [0.0, 1.0, 1.0, 1.0])
