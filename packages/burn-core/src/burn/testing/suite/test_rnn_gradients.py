"""Gradients of the recurrent ops (the LSTM and GRU cells, the LSTM sequence in both directions)
against central finite differences (float64).
"""

from __future__ import annotations

from burn.testing.gradcheck import Case, finite_difference_test, inputs, op, u

CASES = [
    Case(
        "lstm_cell", ("lstm_cell",), lambda g, c: op("lstm_cell", g, c), inputs(u((3, 8), -3, 3), u((3, 2)))
    ),
    # 3 steps, batch 2, 2 units: the gradient reaches the earlier steps through the recurrent
    # weight and the cell; the gates' own output columns are differentiated too.
    Case(
        "lstm_sequence",
        ("lstm_sequence",),
        lambda p, w, c, h: op("lstm_sequence", p, w, c, h, False),
        inputs(u((3, 2, 8), -2, 2), u((2, 8), -1, 1), u((2, 2)), u((2, 2))),
    ),
    Case(
        "lstm_sequence_reverse",
        ("lstm_sequence",),
        lambda p, w, c, h: op("lstm_sequence", p, w, c, h, True),
        inputs(u((3, 2, 8), -2, 2), u((2, 8), -1, 1), u((2, 2)), u((2, 2))),
    ),
    Case(
        "gru_cell",
        ("gru_cell",),
        lambda x, h_proj, h: op("gru_cell", x, h_proj, h),
        inputs(u((3, 6), -3, 3), u((3, 6), -3, 3), u((3, 2))),
    ),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
