"""Gradients of the cross-entropy loss op with every reduction against central finite
differences (float64).
"""

from __future__ import annotations

from burn.testing.gradcheck import Case, const, finite_difference_test, inputs, op, u

CASES = [
    Case(
        "cross_entropy_none",
        ("cross_entropy",),
        lambda x, t: op("cross_entropy", x, t, "none"),
        inputs(u((4, 3), -3, 3), const([0, 2, 2, 1])),
    ),
    Case(
        "cross_entropy_sum",
        ("cross_entropy",),
        lambda x, t: op("cross_entropy", x, t, "sum"),
        inputs(u((3, 5), -3, 3), const([4, 0, 4])),
    ),
    Case(
        "cross_entropy_mean",
        ("cross_entropy",),
        lambda x, t: op("cross_entropy", x, t, "mean"),
        inputs(u((5, 2), -3, 3), const([1, 1, 0, 1, 0])),
    ),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
