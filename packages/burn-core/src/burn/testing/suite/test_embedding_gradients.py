"""Gradients of the embedding op (the table, repeated indices accumulated) against central
finite differences (float64).
"""

from __future__ import annotations

from burn.testing.gradcheck import Case, const, finite_difference_test, inputs, op, u

CASES = [
    Case(
        "embedding",
        ("embedding",),
        lambda w, i: op("embedding", w, i),
        inputs(u((5, 3)), const([[0, 2, 2], [4, 1, 0]])),
    ),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
