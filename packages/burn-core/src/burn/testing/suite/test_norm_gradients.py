"""Gradients of layer normalization with respect to x, gamma and beta against central finite
differences (float64): with and without a shift, over several leading dims."""

from __future__ import annotations

from typing import Any

from burn.testing.gradcheck import Case, finite_difference_test, inputs, u


def _layer_norm(*args: Any, **kw: Any) -> Any:
    from burn.tensor import module

    return module.layer_norm(*args, **kw)


CASES = [
    Case(
        "layer_norm",
        ("layer_norm",),
        lambda x, g, b: _layer_norm(x, g, b, epsilon=1e-3),
        inputs(u((2, 3, 5)), u((5,)), u((5,))),
    ),
    Case(
        "layer_norm_no_beta",
        ("layer_norm",),
        lambda x, g: _layer_norm(x, g, epsilon=0.1),
        inputs(u((4, 6)), u((6,))),
    ),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
