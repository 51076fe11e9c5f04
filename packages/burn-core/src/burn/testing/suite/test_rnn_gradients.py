"""Gradients of the recurrent-cell ops (the LSTM and GRU cells) against central finite
differences (float64).
"""

from __future__ import annotations

from burn.testing.gradcheck import Case, finite_difference_test, inputs, op, u

CASES = [
    Case(
        "lstm_cell", ("lstm_cell",), lambda g, c: op("lstm_cell", g, c), inputs(u((3, 8), -3, 3), u((3, 2)))
    ),
    Case(
        "gru_cell",
        ("gru_cell",),
        lambda x, h_proj, h: op("gru_cell", x, h_proj, h),
        inputs(u((3, 6), -3, 3), u((3, 6), -3, 3), u((3, 2))),
    ),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
