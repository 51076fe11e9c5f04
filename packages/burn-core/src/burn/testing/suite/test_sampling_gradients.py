"""Gradients of the sampling ops against central finite differences (float64): interpolate in
every mode (nearest, nearest-exact, bilinear, bicubic; both corner conventions), and
grid_sample_2d with respect to the input and the grid for every padding mode.

Grid points are drawn at random, so none lies on a pixel boundary (where bilinear weights have
a kink) or a reflection boundary; nearest sampling is checked with respect to the input only
(its gradient with respect to the grid is 0 almost everywhere).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.testing.gradcheck import Case, const, finite_difference_test, inputs, op, u


def _interpolate(size: tuple[int, int], mode: str, align: bool) -> Any:
    return lambda x: op("interpolate", x, size, mode, align)


def _grid_sample(mode: str, padding: str, align: bool) -> Any:
    return lambda x, grid: op("grid_sample_2d", x, grid, mode, padding, align)


# Nearest sampling positions within 0.3 pixel of pixel centres of a 3 x 4 input (align False).
_NEAREST_GRID = const(
    [[[[-0.70, -0.55], [0.30, 0.05], [0.95, 0.60]], [[-0.10, 0.70], [0.62, -0.65], [1.2, 0.1]]]]
)


CASES = [
    Case(
        "interpolate_nearest",
        ("interpolate",),
        lambda x: op("interpolate", x, (5, 7), "nearest", False),
        inputs(u((1, 2, 3, 4))),
    ),
    Case(
        "interpolate_nearest_down",
        ("interpolate",),
        lambda x: op("interpolate", x, (2, 3), "nearest", False),
        inputs(u((1, 1, 5, 7))),
    ),
    Case(
        "interpolate_bilinear",
        ("interpolate",),
        _interpolate((5, 6), "bilinear", False),
        inputs(u((1, 2, 3, 4))),
    ),
    Case(
        "interpolate_bilinear_align",
        ("interpolate",),
        _interpolate((5, 6), "bilinear", True),
        inputs(u((1, 1, 3, 4))),
    ),
    Case(
        "interpolate_bilinear_down",
        ("interpolate",),
        _interpolate((3, 2), "bilinear", False),
        inputs(u((1, 1, 4, 5))),
    ),
    Case(
        "interpolate_bicubic",
        ("interpolate",),
        _interpolate((5, 7), "bicubic", False),
        inputs(u((1, 2, 3, 4))),
    ),
    Case(
        "interpolate_bicubic_align",
        ("interpolate",),
        _interpolate((5, 3), "bicubic", True),
        inputs(u((1, 1, 4, 5))),
    ),
    Case(
        "interpolate_bicubic_down",
        ("interpolate",),
        _interpolate((2, 3), "bicubic", False),
        inputs(u((1, 1, 5, 6))),
    ),
    Case(
        "interpolate_nearest_exact",
        ("interpolate",),
        _interpolate((5, 3), "nearest-exact", False),
        inputs(u((1, 2, 3, 4))),
    ),
    Case(
        "grid_sample_zeros",
        ("grid_sample_2d",),
        _grid_sample("bilinear", "zeros", False),
        inputs(u((2, 2, 3, 4)), u((2, 2, 3, 2), -1.3, 1.3)),
    ),
    Case(
        "grid_sample_zeros_align",
        ("grid_sample_2d",),
        _grid_sample("bilinear", "zeros", True),
        inputs(u((1, 2, 3, 4)), u((1, 3, 2, 2), -1.3, 1.3)),
    ),
    Case(
        "grid_sample_border",
        ("grid_sample_2d",),
        _grid_sample("bilinear", "border", False),
        inputs(u((1, 2, 3, 4)), u((1, 3, 3, 2), -0.9, 0.9)),
    ),
    Case(
        "grid_sample_reflection",
        ("grid_sample_2d",),
        _grid_sample("bilinear", "reflection", False),
        inputs(u((1, 1, 3, 4)), u((1, 3, 3, 2), -1.8, 1.8)),
    ),
    Case(
        "grid_sample_reflection_align",
        ("grid_sample_2d",),
        _grid_sample("bilinear", "reflection", True),
        inputs(u((1, 1, 4, 3)), u((1, 2, 3, 2), -1.8, 1.8)),
    ),
    Case(
        "grid_sample_nearest",
        ("grid_sample_2d",),
        lambda x: op("grid_sample_2d", x, _fixed_grid(x), "nearest", "zeros", False),
        inputs(u((1, 2, 3, 4))),
    ),
]


def _fixed_grid(x: Any) -> Any:
    from burn import Tensor

    return Tensor.from_data(_NEAREST_GRID(np.random.default_rng(0)), backend=x.backend)


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
