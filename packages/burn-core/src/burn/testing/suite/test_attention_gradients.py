"""Gradients of scaled dot-product attention with respect to query, key and value against central
finite differences (float64): plain, causal, and with a Bool mask that leaves one query no key."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.testing.gradcheck import Case, const, finite_difference_test, inputs, u

_MASK = np.array([[False, True, False, True], [True, True, True, True], [False, False, True, False]])


def _attention(*args: Any, **kw: Any) -> Any:
    from burn.tensor import module

    return module.attention(*args, **kw)


CASES = [
    Case(
        "attention",
        ("attention",),
        lambda q, k, v: _attention(q, k, v),
        inputs(u((2, 3, 4)), u((2, 4, 4)), u((2, 4, 2))),
    ),
    Case(
        "attention_causal",
        ("attention",),
        lambda q, k, v: _attention(q, k, v, causal=True, scale=0.8),
        inputs(u((1, 2, 4, 3)), u((1, 2, 4, 3)), u((1, 2, 4, 3))),
    ),
    Case(
        "attention_masked",
        ("attention",),
        lambda q, k, v, m: _attention(q, k, v, m),
        inputs(u((2, 3, 4)), u((2, 4, 4)), u((2, 4, 2)), const(_MASK)),
    ),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
