"""Gradients of the shape/indexing ops of `burn.backend.layout_ops` (unfold, gather_nd,
scatter_nd in every mode, assign-mode scatter/select, cross) and of the Tensor methods composed
from other ops (pad, roll, tril, mask_select...), against central finite differences (float64).

Inputs of max/min scatters are distinct and the scattered values differ from the tensor's, so
the gradient is taken away from ties.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, const, distinct, inputs, op, u

_IDX_ND = [[1, 0], [0, 2], [1, 0]]  # a repeated index: accumulation and "last wins" are exercised
_SCATTER_MODES = ("add", "mul", "max", "min", "assign")

CASES = [
    Case("unfold", ("float_unfold",), lambda a: op("float_unfold", a, 1, 2, 1), inputs(u((2, 4)))),
    Case("unfold_step", ("float_unfold",), lambda a: op("float_unfold", a, 0, 2, 2), inputs(u((5, 2)))),
    Case(
        "gather_nd",
        ("float_gather_nd",),
        lambda a, i: op("float_gather_nd", a, i),
        inputs(u((2, 3)), const(_IDX_ND)),
    ),
    Case(
        "gather_nd_rows",
        ("float_gather_nd",),
        lambda a, i: op("float_gather_nd", a, i),
        inputs(u((3, 2)), const([[2], [0], [2]])),
    ),
    *(
        Case(
            f"scatter_nd_{mode}",
            ("float_scatter_nd",),
            lambda a, i, v, mode=mode: op("float_scatter_nd", a, i, v, mode),
            inputs(distinct((2, 3)), const(_IDX_ND), distinct((3,))),
        )
        for mode in _SCATTER_MODES
    ),
    Case(
        "scatter_nd_rows_max",
        ("float_scatter_nd",),
        lambda a, i, v: op("float_scatter_nd", a, i, v, "max"),
        inputs(distinct((3, 2)), const([[2], [0], [2]]), distinct((3, 2))),
    ),
    Case(
        "scatter_assign",
        ("float_scatter_assign",),
        lambda a, i, v: op("float_scatter_assign", 1, a, i, v),
        inputs(u((2, 3)), const([[2, 0], [1, 1]]), u((2, 2))),
    ),
    Case(
        "select_assign",
        ("float_select_assign",),
        lambda a, i, v: op("float_select_assign", a, 1, i, v),
        inputs(u((2, 3)), const([2, 0, 2]), u((2, 3))),
    ),
    Case("cross", ("float_cross",), lambda a, b: op("float_cross", a, b, 1), inputs(u((2, 3)), u((2, 3)))),
    # -- Tensor methods composed from other ops ------------------------------------------------
    Case("tensor_pad_constant", (), lambda a: a.pad((1, 2, 0, 1), value=0.5), inputs(u((2, 3)))),
    Case("tensor_pad_reflect", (), lambda a: a.pad((2, 1), mode="reflect"), inputs(u((2, 3)))),
    Case("tensor_pad_edge", (), lambda a: a.pad((1, 2), mode="edge"), inputs(u((2, 3)))),
    Case("tensor_roll", (), lambda a: a.roll([1, -1], [0, 1]), inputs(u((2, 3)))),
    Case("tensor_tril", (), lambda a: a.tril(-1), inputs(u((3, 3)))),
    Case("tensor_triu", (), lambda a: a.triu(1), inputs(u((2, 3, 3)))),
    Case("tensor_take", (), lambda a, i: a.take(1, i), inputs(u((2, 3)), const([[2, 0], [2, 2]]))),
    Case("tensor_movedim", (), lambda a: a.movedim(0, -1) * 1.0, inputs(u((2, 3, 2)))),
    Case("tensor_mask_select", (), lambda a: a.mask_select(a > 0), inputs(distinct((2, 3)))),
    Case("tensor_slice_negative_step", (), lambda a: a.slice([None, (0, 4, -2)]), inputs(u((2, 4)))),
    Case(
        "tensor_slice_assign_negative_step",
        (),
        lambda a, v: a.slice_assign([slice(None, None, -1)], v),
        inputs(u((3, 2)), u((3, 2))),
    ),
    Case("tensor_dot", (), lambda a, b: a.dot(b), inputs(u((4,)), u((4,)))),
]

_IDS = [c.id for c in CASES]
assert len(set(_IDS)) == len(_IDS), "duplicate gradient case ids"


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_layout_gradient_matches_finite_differences(
    backend: Any, case: Case, rng: np.random.Generator
) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
