"""Gradients of 3-D convolution and pooling and of the 1-D/3-D transposed convolutions against
central finite differences (float64), plus the Tensor-level compositions of every rank that
autodiff differentiates through: pooling's ``ceil_mode`` and asymmetric convolution padding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, distinct, inputs, op, u


def _f() -> Any:
    from burn.tensor import module

    return module


CASES = [
    Case(
        "conv3d",
        ("conv3d",),
        lambda x, w, b: op("conv3d", x, w, b, (2, 1, 1), (1, 0, 1), (1, 1, 2), 2),
        inputs(u((1, 2, 3, 3, 4)), u((4, 1, 2, 2, 2)), u((4,))),
    ),
    Case(
        "conv3d_no_bias",
        ("conv3d",),
        lambda x, w: op("conv3d", x, w, None, (1, 1, 1), (0, 0, 0), (1, 1, 1), 1),
        inputs(u((2, 2, 2, 3, 2)), u((2, 2, 2, 2, 1))),
    ),
    Case(
        "conv_transpose1d",
        ("conv_transpose1d",),
        lambda x, w, b: op("conv_transpose1d", x, w, b, 2, 1, 1, 1, 2),
        inputs(u((2, 4, 4)), u((4, 1, 3)), u((2,))),
    ),
    Case(
        "conv_transpose3d",
        ("conv_transpose3d",),
        lambda x, w, b: op("conv_transpose3d", x, w, b, (2, 1, 1), (1, 0, 0), (1, 0, 0), (1, 1, 2), 1),
        inputs(u((1, 2, 2, 2, 2)), u((2, 2, 2, 2, 2)), u((2,))),
    ),
    Case(
        "max_pool3d",
        ("max_pool3d",),
        lambda x: op("max_pool3d", x, (2, 2, 2), (1, 2, 1), (1, 0, 1), (1, 1, 1)),
        inputs(distinct((1, 2, 3, 4, 3))),
    ),
    Case(
        "max_pool3d_with_indices",
        ("max_pool3d_with_indices",),
        lambda x: op("max_pool3d_with_indices", x, (2, 2, 2), (2, 1, 2), (0, 1, 0), (1, 2, 1)),
        inputs(distinct((1, 1, 4, 5, 4))),
    ),
    Case(
        "avg_pool3d",
        ("avg_pool3d",),
        lambda x: op("avg_pool3d", x, (2, 3, 2), (1, 2, 2), (1, 1, 0), True),
        inputs(u((1, 2, 3, 4, 3))),
    ),
    Case(
        "avg_pool3d_exclude_pad",
        ("avg_pool3d",),
        lambda x: op("avg_pool3d", x, (2, 2, 2), (2, 1, 1), (1, 1, 1), False),
        inputs(u((1, 1, 3, 3, 3))),
    ),
    Case(
        "adaptive_avg_pool3d",
        ("adaptive_avg_pool3d",),
        lambda x: op("adaptive_avg_pool3d", x, (2, 3, 2)),
        inputs(u((1, 2, 3, 4, 5))),
    ),
]

# Tensor-level options composed from the ops above (explicit padding, then the floor-mode op).
COMPOSED = [
    Case(
        "max_pool2d_ceil",
        (),
        lambda x: _f().max_pool2d(x, (2, 3), (2, 2), (1, 1), ceil_mode=True),
        inputs(distinct((1, 2, 4, 6))),
    ),
    Case(
        "max_pool1d_ceil",
        (),
        lambda x: _f().max_pool1d(x, 2, 2, 0, ceil_mode=True),
        inputs(distinct((2, 1, 5))),
    ),
    Case(
        "max_pool3d_ceil",
        (),
        lambda x: _f().max_pool3d(x, 2, 2, ceil_mode=True),
        inputs(distinct((1, 1, 3, 3, 3))),
    ),
    Case(
        "avg_pool2d_ceil",
        (),
        lambda x: _f().avg_pool2d(x, 3, 2, 1, count_include_pad=True, ceil_mode=True),
        inputs(u((1, 1, 6, 5))),
    ),
    Case(
        "avg_pool1d_ceil_exclude_pad",
        (),
        lambda x: _f().avg_pool1d(x, 3, 2, 1, count_include_pad=False, ceil_mode=True),
        inputs(u((1, 2, 6))),
    ),
    Case(
        "avg_pool3d_ceil",
        (),
        lambda x: _f().avg_pool3d(x, 2, 2, count_include_pad=False, ceil_mode=True),
        inputs(u((1, 1, 3, 3, 2))),
    ),
    Case(
        "conv2d_asymmetric_padding",
        (),
        lambda x, w, b: _f().conv2d(x, w, b, padding=((1, 0), (2, 1))),
        inputs(u((1, 2, 3, 4)), u((2, 2, 2, 2)), u((2,))),
    ),
    Case(
        "conv3d_asymmetric_padding",
        (),
        lambda x, w: _f().conv3d(x, w, None, padding=((0, 1), 1, (1, 0))),
        inputs(u((1, 1, 2, 3, 2)), u((2, 1, 2, 2, 2))),
    ),
]

_IDS = [c.id for c in CASES + COMPOSED]
assert len(set(_IDS)) == len(_IDS), "duplicate gradient case ids"


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES + COMPOSED, ids=_IDS)
def test_gradient_matches_finite_differences_3d(backend: Any, case: Case, rng: np.random.Generator) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
