"""Gradients of the embedding op (the table, repeated indices accumulated) against central
finite differences (float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, const, inputs, op, u

CASES = [
    Case(
        "embedding",
        ("embedding",),
        lambda w, i: op("embedding", w, i),
        inputs(u((5, 3)), const([[0, 2, 2], [4, 1, 0]])),
    ),
]


_IDS = [c.id for c in CASES]
assert len(set(_IDS)) == len(_IDS), "duplicate gradient case ids"


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_gradient_matches_finite_differences(backend: Any, case: Case, rng: np.random.Generator) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
