"""Gradients of the module ops (convolution, pooling, embedding, interpolation), activations,
the cross-entropy loss and the LSTM cell against central finite differences (float64), with the options that
change index arithmetic: stride, padding, dilation, groups, padding_out, count_include_pad,
align_corners."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import Case, check_gradients, const, distinct, inputs, nz, op, u


def _bilinear(size: tuple[int, int], align: bool) -> Any:
    return lambda x: op("interpolate", x, size, "bilinear", align)


CASES = [
    # -- convolution -----------------------------------------------------------------------
    Case(
        "conv1d",
        ("conv1d",),
        lambda x, w, b: op("conv1d", x, w, b, 2, 1, 2, 2),
        inputs(u((2, 4, 7)), u((6, 2, 3)), u((6,))),
    ),
    Case(
        "conv1d_no_bias",
        ("conv1d",),
        lambda x, w: op("conv1d", x, w, None, 1, 0, 1, 1),
        inputs(u((1, 2, 5)), u((3, 2, 2))),
    ),
    Case(
        "conv2d",
        ("conv2d",),
        lambda x, w, b: op("conv2d", x, w, b, (2, 1), (1, 0), (1, 2), 2),
        inputs(u((1, 2, 5, 6)), u((4, 1, 2, 3)), u((4,))),
    ),
    Case(
        "conv2d_no_bias",
        ("conv2d",),
        lambda x, w: op("conv2d", x, w, None, (1, 1), (1, 1), (1, 1), 1),
        inputs(u((2, 2, 3, 3)), u((2, 2, 2, 2))),
    ),
    Case(
        "conv_transpose2d",
        ("conv_transpose2d",),
        lambda x, w, b: op("conv_transpose2d", x, w, b, (2, 1), (1, 0), (1, 0), (1, 1), 2),
        inputs(u((1, 4, 3, 3)), u((4, 2, 3, 2)), u((4,))),
    ),
    Case(
        "conv_transpose2d_dilation",
        ("conv_transpose2d",),
        lambda x, w: op("conv_transpose2d", x, w, None, (1, 2), (0, 1), (0, 1), (2, 1), 1),
        inputs(u((2, 2, 2, 3)), u((2, 3, 2, 2))),
    ),
    # -- pooling ---------------------------------------------------------------------------
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
    # -- embedding, interpolation ----------------------------------------------------------
    Case(
        "embedding",
        ("embedding",),
        lambda w, i: op("embedding", w, i),
        inputs(u((5, 3)), const([[0, 2, 2], [4, 1, 0]])),
    ),
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
    Case("interpolate_bilinear", ("interpolate",), _bilinear((5, 6), False), inputs(u((1, 2, 3, 4)))),
    Case("interpolate_bilinear_align", ("interpolate",), _bilinear((5, 6), True), inputs(u((1, 1, 3, 4)))),
    Case("interpolate_bilinear_down", ("interpolate",), _bilinear((3, 2), False), inputs(u((1, 1, 4, 5)))),
    # -- activations -----------------------------------------------------------------------
    Case("relu", ("relu",), lambda x: op("relu", x), inputs(nz((2, 4), 0.05, 2.0))),
    Case("leaky_relu", ("leaky_relu",), lambda x: op("leaky_relu", x, 0.1), inputs(nz((2, 4), 0.05, 2.0))),
    Case("gelu", ("gelu",), lambda x: op("gelu", x), inputs(u((2, 4), -4, 4))),
    Case("sigmoid", ("sigmoid",), lambda x: op("sigmoid", x), inputs(u((2, 4), -6, 6))),
    Case("log_sigmoid", ("log_sigmoid",), lambda x: op("log_sigmoid", x), inputs(u((2, 4), -6, 6))),
    Case("silu", ("silu",), lambda x: op("silu", x), inputs(u((2, 4), -4, 4))),
    Case("softplus", ("softplus",), lambda x: op("softplus", x, 2.0), inputs(u((2, 4), -4, 4))),
    Case(
        "softplus_large",
        ("softplus",),
        lambda x: op("softplus", x, 1.0),
        inputs(const([-30.0, -5.0, 5.0, 25.0, 40.0])),
    ),
    Case(
        "hard_sigmoid",
        ("hard_sigmoid",),
        lambda x: op("hard_sigmoid", x, 0.2, 0.5),
        inputs(const([-4.0, -2.0, -0.3, 0.0, 1.1, 2.4, 3.0, 6.0])),
    ),
    Case("softmax", ("softmax",), lambda x: op("softmax", x, 1), inputs(u((2, 4)))),
    Case("log_softmax", ("log_softmax",), lambda x: op("log_softmax", x, 0), inputs(u((3, 2)))),
    # -- losses ----------------------------------------------------------------------------
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
    # -- recurrent cells -------------------------------------------------------------------
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


def _activation(name: str) -> Any:
    from burn import activation

    return getattr(activation, name)


# Public compositions of the activation module (not contract ops, but users train with them).
COMPOSED = [
    Case("mish", (), lambda x: _activation("mish")(x), inputs(u((2, 4), -4, 4))),
    Case("prelu", (), lambda x, a: _activation("prelu")(x, a), inputs(nz((2, 3), 0.05, 2.0), u((3,)))),
    Case("tanh", (), lambda x: _activation("tanh")(x), inputs(u((2, 4)))),
]

_IDS = [c.id for c in CASES + COMPOSED]
assert len(set(_IDS)) == len(_IDS), "duplicate gradient case ids"


@covers(*sorted({name for case in CASES for name in case.ops}))
@pytest.mark.parametrize("case", CASES + COMPOSED, ids=_IDS)
def test_gradient_matches_finite_differences(backend: Any, case: Case, rng: np.random.Generator) -> None:
    check_gradients(case.fn, case.inputs(rng), backend, what=case.id)
