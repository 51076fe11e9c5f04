"""Gradients of the recurrent-cell ops (the LSTM and GRU cells) against central finite
differences (float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, inputs, op, u

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


_IDS = [c.id for c in CASES]
assert len(set(_IDS)) == len(_IDS), "duplicate gradient case ids"


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_gradient_matches_finite_differences(backend: Any, case: Case, rng: np.random.Generator) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
