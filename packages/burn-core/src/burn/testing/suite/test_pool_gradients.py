"""Gradients of the pooling ops against central finite differences (float64): max pooling (with
indices), average pooling (``count_include_pad``) and adaptive average pooling in 1-D, 2-D and
3-D, and pooling's ``ceil_mode`` composed at the Tensor level.

Max pooling's inputs are distinct, so the gradient is taken away from ties.
"""

from __future__ import annotations

from burn.testing.gradcheck import Case, distinct, finite_difference_test, inputs, op, u
from burn.testing.helpers import tensor_module

CASES = [
    Case(
        "max_pool2d",
        ("max_pool2d",),
        lambda x: op("max_pool2d", x, (2, 3), (2, 1), (1, 1), (1, 1)),
        inputs(distinct((1, 2, 5, 5))),
    ),
    Case(
        "max_pool2d_with_indices",
        ("max_pool2d_with_indices",),
        lambda x: op("max_pool2d_with_indices", x, (2, 2), (1, 2), (0, 1), (2, 1)),
        inputs(distinct((2, 1, 5, 5))),
    ),
    Case(
        "max_pool1d", ("max_pool1d",), lambda x: op("max_pool1d", x, 3, 2, 1, 1), inputs(distinct((2, 2, 7)))
    ),
    Case(
        "max_pool1d_with_indices",
        ("max_pool1d_with_indices",),
        lambda x: op("max_pool1d_with_indices", x, 2, 1, 0, 2),
        inputs(distinct((1, 2, 6))),
    ),
    Case(
        "avg_pool2d",
        ("avg_pool2d",),
        lambda x: op("avg_pool2d", x, (2, 3), (2, 2), (1, 1), True),
        inputs(u((1, 2, 5, 5))),
    ),
    Case(
        "avg_pool2d_exclude_pad",
        ("avg_pool2d",),
        lambda x: op("avg_pool2d", x, (3, 2), (1, 2), (1, 1), False),
        inputs(u((2, 1, 4, 5))),
    ),
    Case("avg_pool1d", ("avg_pool1d",), lambda x: op("avg_pool1d", x, 3, 2, 1, False), inputs(u((2, 2, 7)))),
    Case(
        "avg_pool1d_include_pad",
        ("avg_pool1d",),
        lambda x: op("avg_pool1d", x, 2, 1, 1, True),
        inputs(u((1, 2, 5))),
    ),
    Case(
        "adaptive_avg_pool2d",
        ("adaptive_avg_pool2d",),
        lambda x: op("adaptive_avg_pool2d", x, (3, 4)),
        inputs(u((1, 2, 5, 7))),
    ),
    Case(
        "adaptive_avg_pool1d",
        ("adaptive_avg_pool1d",),
        lambda x: op("adaptive_avg_pool1d", x, 3),
        inputs(u((2, 2, 7))),
    ),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)


# 3-D pooling, and ceil_mode (an option of every rank, composed at the Tensor level): a test
# of their own, under its established id.
CASES_3D = [
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


# ceil_mode, composed at the Tensor level (explicit padding, then the floor-mode op).
COMPOSED_3D = [
    Case(
        "max_pool2d_ceil",
        (),
        lambda x: tensor_module().max_pool2d(x, (2, 3), (2, 2), (1, 1), ceil_mode=True),
        inputs(distinct((1, 2, 4, 6))),
    ),
    Case(
        "max_pool1d_ceil",
        (),
        lambda x: tensor_module().max_pool1d(x, 2, 2, 0, ceil_mode=True),
        inputs(distinct((2, 1, 5))),
    ),
    Case(
        "max_pool3d_ceil",
        (),
        lambda x: tensor_module().max_pool3d(x, 2, 2, ceil_mode=True),
        inputs(distinct((1, 1, 3, 3, 3))),
    ),
    Case(
        "avg_pool2d_ceil",
        (),
        lambda x: tensor_module().avg_pool2d(x, 3, 2, 1, count_include_pad=True, ceil_mode=True),
        inputs(u((1, 1, 6, 5))),
    ),
    Case(
        "avg_pool1d_ceil_exclude_pad",
        (),
        lambda x: tensor_module().avg_pool1d(x, 3, 2, 1, count_include_pad=False, ceil_mode=True),
        inputs(u((1, 2, 6))),
    ),
    Case(
        "avg_pool3d_ceil",
        (),
        lambda x: tensor_module().avg_pool3d(x, 2, 2, count_include_pad=False, ceil_mode=True),
        inputs(u((1, 1, 3, 3, 2))),
    ),
]


test_gradient_matches_finite_differences_3d = finite_difference_test(
    CASES_3D + COMPOSED_3D, __name__, "test_gradient_matches_finite_differences_3d"
)
