"""Gradients of the ops of `burn.backend.math_ops` (and of the Tensor methods composed from
them or from other ops) against central finite differences in float64.

As in ``test_gradients.py``, each contract op is called directly (through `op`) with inputs
away from kinks, ties and jumps; the ``tensor_*`` cases differentiate Tensor-level compositions.
Skipped (with the reason) on backends without autodiff.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, const, distinct, frac, inputs, nz, op, u


def _fmod_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    y = rng.uniform(1.0, 2.0, size=(2, 3)) * np.where(rng.random((2, 3)) < 0.5, -1.0, 1.0)
    x = (rng.integers(-2, 3, size=(2, 3)) + rng.uniform(0.2, 0.8, size=(2, 3))) * y  # x/y far from integers
    return [x, y]


def _atan2_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    # every quadrant, away from the branch cut (x < 0, y = 0) and the origin
    return [nz((2, 3), 0.3, 2.0)(rng), nz((3,), 0.3, 2.0)(rng)]


CASES = [
    # -- trigonometric and hyperbolic --------------------------------------------------------
    Case("tan", ("float_tan",), lambda a: op("float_tan", a), inputs(u((2, 3), -1.2, 1.2))),
    Case("sinh", ("float_sinh",), lambda a: op("float_sinh", a), inputs(u((2, 3)))),
    Case("cosh", ("float_cosh",), lambda a: op("float_cosh", a), inputs(u((2, 3)))),
    Case("asin", ("float_asin",), lambda a: op("float_asin", a), inputs(u((2, 3), -0.9, 0.9))),
    Case("acos", ("float_acos",), lambda a: op("float_acos", a), inputs(u((2, 3), -0.9, 0.9))),
    Case("atan", ("float_atan",), lambda a: op("float_atan", a), inputs(u((2, 3), -4, 4))),
    Case("asinh", ("float_asinh",), lambda a: op("float_asinh", a), inputs(u((2, 3), -4, 4))),
    Case("acosh", ("float_acosh",), lambda a: op("float_acosh", a), inputs(u((2, 3), 1.2, 4))),
    Case("atanh", ("float_atanh",), lambda a: op("float_atanh", a), inputs(u((2, 3), -0.9, 0.9))),
    Case("atan2", ("float_atan2",), lambda y, x: op("float_atan2", y, x), _atan2_inputs),
    # -- rounding, fmod ----------------------------------------------------------------------
    Case("trunc", ("float_trunc",), lambda a: op("float_trunc", a), inputs(frac((2, 3)))),
    Case("fmod", ("float_fmod",), lambda a, b: op("float_fmod", a, b), _fmod_inputs),
    Case(
        "fmod_bcast",
        ("float_fmod",),
        lambda a, b: op("float_fmod", a, b),
        inputs(frac((2, 3), 0.2, 0.8), const([1.0, -1.0, 1.0])),
    ),
    Case(
        "fmod_scalar",
        ("float_fmod_scalar",),
        lambda a: op("float_fmod_scalar", a, -1.0),
        inputs(frac((2, 3), 0.2, 0.8)),
    ),
    # -- cumulative (differentiated through their default composition) -----------------------
    Case("cumprod", ("float_cumprod",), lambda a: op("float_cumprod", a, 1), inputs(nz((2, 4)))),
    Case(
        "cumprod_zero",
        ("float_cumprod",),
        lambda a: op("float_cumprod", a, 0),
        inputs(const([[1.5, -0.5], [0.0, 2.0], [0.7, 0.0], [1.2, 0.9]])),
    ),
    Case("cummax", ("float_cummax",), lambda a: op("float_cummax", a, 1), inputs(distinct((2, 5)))),
    Case("cummin", ("float_cummin",), lambda a: op("float_cummin", a, 0), inputs(distinct((4, 2)))),
    # -- Tensor compositions -----------------------------------------------------------------
    Case("tensor_sum_dims", (), lambda a: a.sum_dims([0, 2]), inputs(u((2, 3, 2)))),
    Case("tensor_mean_dims", (), lambda a: a.mean_dims([1, 2]), inputs(u((2, 3, 2)))),
    Case("tensor_max_dims", (), lambda a: a.max_dims([0, 1]), inputs(distinct((2, 3, 2)))),
    Case("tensor_prod_dims", (), lambda a: a.prod_dims([0, 1]), inputs(nz((2, 2, 2)))),
    Case("tensor_max_abs_dims", (), lambda a: a.max_abs_dims([1]), inputs(distinct((2, 3)))),
    Case("tensor_max_pair", (), lambda a, b: a.max_pair(b), inputs(distinct((2, 3)), distinct((3,)))),
    Case("tensor_min_pair", (), lambda a, b: a.min_pair(b), inputs(distinct((2, 3)), distinct((2, 1)))),
    Case("tensor_median", (), lambda a: a.median(1), inputs(distinct((2, 5)))),
    Case("tensor_var_mean", (), lambda a: sum(a.var_mean(1)), inputs(u((2, 4)))),
    Case("tensor_var_mean_bias", (), lambda a: a.var_mean_bias(0)[0], inputs(u((3, 2)))),
    Case("tensor_cov", (), lambda a: a.cov(1), inputs(u((2, 5)))),
    Case("tensor_hypot", (), lambda a, b: a.hypot(b), inputs(nz((2, 3)), nz((3,)))),
    Case("tensor_square", (), lambda a: a.square(), inputs(u((2, 3)))),
    Case("tensor_deg2rad", (), lambda a: a.deg2rad() + a.rad2deg(), inputs(u((2, 3)))),
]

_IDS = [c.id for c in CASES]
assert len(set(_IDS)) == len(_IDS), "duplicate gradient case ids"


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_math_gradient_matches_finite_differences(backend: Any, case: Case, rng: np.random.Generator) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
