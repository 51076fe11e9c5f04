"""Gradients of the cross-entropy loss op with every reduction against central finite
differences (float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, const, inputs, op, u

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


_IDS = [c.id for c in CASES]
assert len(set(_IDS)) == len(_IDS), "duplicate gradient case ids"


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_gradient_matches_finite_differences(backend: Any, case: Case, rng: np.random.Generator) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
