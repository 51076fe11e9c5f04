"""Gradients through the ``float_*_owned`` ops: the same as through the plain ops (a decorator
such as autodiff keeps the defaults, which call the tracked plain op)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.testing import covers

BINARY = ["add", "sub", "mul", "div"]
UNARY = ["exp", "log", "sqrt", "neg", "tanh"]


def _grad(backend: Any, x: np.ndarray, build: Any) -> np.ndarray:
    from burn import Tensor

    t = Tensor.from_data(x, backend=backend).require_grad()
    out = wrap(build(t._p), backend, Float)
    grad = t.grad(out.sum().backward())
    assert grad is not None, "no gradient reached the operand of an owned op"
    return np.array(grad.to_numpy())


@covers(
    *(f"float_{op}_owned" for op in BINARY),
    *(f"float_{op}_scalar_owned" for op in BINARY),
    *(f"float_{op}_owned" for op in UNARY),
)
def test_owned_ops_have_the_plain_gradients(backend: Any, rng: np.random.Generator) -> None:
    if not backend.ad_enabled:
        pytest.skip("needs an autodiff backend")
    x = rng.uniform(0.5, 2.0, size=(3, 4)).astype(np.float64)
    y = backend.float_from_data(TensorData(rng.uniform(0.5, 2.0, size=(4,))), backend.default_device())
    for op in BINARY:
        owned, plain = getattr(backend, f"float_{op}_owned"), getattr(backend, f"float_{op}")
        np.testing.assert_allclose(
            _grad(backend, x, lambda p, o=owned: o(p, y)), _grad(backend, x, lambda p, f=plain: f(p, y))
        )
        owned, plain = getattr(backend, f"float_{op}_scalar_owned"), getattr(backend, f"float_{op}_scalar")
        np.testing.assert_allclose(
            _grad(backend, x, lambda p, o=owned: o(p, 1.5)), _grad(backend, x, lambda p, f=plain: f(p, 1.5))
        )
    for op in UNARY:
        owned, plain = getattr(backend, f"float_{op}_owned"), getattr(backend, f"float_{op}")
        np.testing.assert_allclose(_grad(backend, x, owned), _grad(backend, x, plain))
