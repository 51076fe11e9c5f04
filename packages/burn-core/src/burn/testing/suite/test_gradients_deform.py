"""Gradients of ``deform_conv2d`` (input, offsets, mask, weight, bias), ``unfold4d`` and ``fold4d``
against central finite differences (float64).

Offsets come from `frac`: an integer plus a fraction in [0.1, 0.4], so no finite-difference step
crosses a pixel boundary (where bilinear sampling has a kink), while samples still land inside,
on the border and outside the image.
"""

from __future__ import annotations

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, frac, inputs, op, u

CASES = [
    Case(
        "deform_conv2d",
        ("deform_conv2d",),
        lambda x, o, w, b: op("deform_conv2d", x, o, w, None, b, (1, 1), (0, 0), (1, 1), 1, 1),
        inputs(u((1, 2, 3, 4)), frac((1, 2 * 4, 2, 3)), u((2, 2, 2, 2)), u((2,))),
    ),
    Case(
        "deform_conv2d_mask_groups",
        ("deform_conv2d",),
        lambda x, o, w, m: op("deform_conv2d", x, o, w, m, None, (2, 1), (0, 1), (1, 2), 2, 2),
        inputs(u((1, 4, 4, 4)), frac((1, 2 * 2 * 2, 2, 4)), u((2, 2, 1, 2)), u((1, 2 * 2, 2, 4), 0, 1)),
    ),
    Case(
        "unfold4d",
        ("unfold4d",),
        lambda x: op("unfold4d", x, (2, 3), (2, 1), (1, 0), (1, 2)),
        inputs(u((2, 2, 5, 6))),
    ),
    Case(
        "fold4d",
        ("fold4d",),
        lambda c: op("fold4d", c, (5, 4), (2, 2), (1, 2), (1, 1), (2, 1)),
        inputs(u((1, 2 * 4, 5 * 3))),
    ),
]


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gradient_matches_finite_differences(backend: object, case: Case, rng: np.random.Generator) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
