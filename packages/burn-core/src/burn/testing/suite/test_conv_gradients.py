"""Gradients of the convolution ops against central finite differences (float64): 1-D, 2-D and
3-D convolution and transposed convolution with the options that change index arithmetic (stride,
padding, dilation, groups, ``padding_out``), asymmetric padding, depthwise and grouped 1-D and 2-D
convolutions, and ``deform_conv2d`` (input,
offsets, mask, weight, bias), ``unfold4d`` and ``fold4d``.

Deformable offsets come from `frac`: an integer plus a fraction in [0.1, 0.4], so no
finite-difference step crosses a pixel boundary (where bilinear sampling has a kink), while
samples still land inside, on the border and outside the image.
"""

from __future__ import annotations

from burn.testing.gradcheck import Case, finite_difference_test, frac, inputs, op, u
from burn.testing.helpers import tensor_module

CASES = [
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


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)


# 3-D convolution, 1-D and 3-D transposed convolution, and asymmetric padding (an option of
# every rank, composed at the Tensor level): a test of their own, under its established id.
CASES_3D = [
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
]


# Asymmetric padding, composed at the Tensor level (the difference padded explicitly, then the op).
COMPOSED_3D = [
    Case(
        "conv2d_asymmetric_padding",
        (),
        lambda x, w, b: tensor_module().conv2d(x, w, b, padding=((1, 0), (2, 1))),
        inputs(u((1, 2, 3, 4)), u((2, 2, 2, 2)), u((2,))),
    ),
    Case(
        "conv3d_asymmetric_padding",
        (),
        lambda x, w: tensor_module().conv3d(x, w, None, padding=((0, 1), 1, (1, 0))),
        inputs(u((1, 1, 2, 3, 2)), u((2, 1, 2, 2, 2))),
    ),
]


test_gradient_matches_finite_differences_3d = finite_difference_test(
    CASES_3D + COMPOSED_3D, __name__, "test_gradient_matches_finite_differences_3d"
)


# Depthwise (one input channel per group, channel multiplier 1 and 2) and grouped convolutions
# with few channels per group, 2-D and 1-D: the shapes burn-ndarray computes with direct kernels.
GROUPED = [
    Case(
        "conv2d_depthwise",
        ("conv2d",),
        lambda x, w, b: op("conv2d", x, w, b, (1, 1), (1, 1), (1, 1), 3),
        inputs(u((2, 3, 4, 5)), u((3, 1, 3, 3)), u((3,))),
    ),
    Case(
        "conv2d_depthwise_stride2_odd_width",
        ("conv2d",),
        lambda x, w, b: op("conv2d", x, w, b, (2, 2), (1, 1), (1, 1), 2),
        inputs(u((1, 2, 5, 7)), u((2, 1, 3, 3)), u((2,))),
    ),
    Case(
        "conv2d_depthwise_multiplier_stride",
        ("conv2d",),
        lambda x, w: op("conv2d", x, w, None, (2, 2), (1, 0), (1, 1), 2),
        inputs(u((1, 2, 5, 4)), u((4, 1, 3, 2))),
    ),
    Case(
        "conv2d_depthwise_dilation",
        ("conv2d",),
        lambda x, w, b: op("conv2d", x, w, b, (1, 2), (2, 1), (2, 1), 3),
        inputs(u((1, 3, 5, 6)), u((3, 1, 2, 3)), u((3,))),
    ),
    Case(
        "conv2d_grouped_small",
        ("conv2d",),
        lambda x, w: op("conv2d", x, w, None, (2, 1), (1, 1), (1, 2), 2),
        inputs(u((1, 4, 5, 5)), u((6, 2, 2, 2))),
    ),
    Case(
        "conv2d_depthwise_asymmetric_padding",
        (),
        lambda x, w: tensor_module().conv2d(x, w, None, padding=((1, 0), (2, 1)), groups=2),
        inputs(u((1, 2, 3, 4)), u((2, 1, 2, 3))),
    ),
    Case(
        "conv1d_depthwise",
        ("conv1d",),
        lambda x, w, b: op("conv1d", x, w, b, 2, 1, 1, 3),
        inputs(u((2, 3, 7)), u((6, 1, 3)), u((6,))),
    ),
    Case(
        "conv1d_depthwise_dilation",
        ("conv1d",),
        lambda x, w: op("conv1d", x, w, None, 1, 2, 2, 4),
        inputs(u((1, 4, 6)), u((4, 1, 3))),
    ),
]


test_gradient_matches_finite_differences_grouped = finite_difference_test(
    GROUPED, __name__, "test_gradient_matches_finite_differences_grouped"
)


# conv2d_fused: every activation epilogue (on the pre-activation's kinks the finite difference
# would straddle two pieces; uniform inputs land on one with probability 1), per-side padding.
FUSED = [
    Case(
        f"conv2d_fused_{activation}",
        ("conv2d_fused",),
        lambda x, w, b, a=activation: op("conv2d_fused", x, w, b, (2, 1), (1, 0, 2, 1), (1, 1), 1, a),
        inputs(u((2, 2, 4, 5)), u((3, 2, 2, 3)), u((3,))),
    )
    for activation in ("none", "relu", "relu6", "hardswish", "hardsigmoid", "silu", "sigmoid", "gelu")
] + [
    Case(
        "conv2d_fused_depthwise_silu",
        ("conv2d_fused",),
        lambda x, w: op("conv2d_fused", x, w, None, (2, 2), (0, 1, 1, 2), (1, 1), 3, "silu"),
        inputs(u((1, 3, 5, 4)), u((3, 1, 3, 3))),
    ),
    Case(
        "conv2d_fused_symmetric_relu6",
        ("conv2d_fused",),
        lambda x, w, b: op("conv2d_fused", x, w, b, (1, 1), (1, 1, 1, 1), (1, 1), 2, "relu6"),
        inputs(u((1, 4, 3, 3), -4.0, 4.0), u((2, 2, 3, 3)), u((2,))),
    ),
]


test_gradient_matches_finite_differences_fused = finite_difference_test(
    FUSED, __name__, "test_gradient_matches_finite_differences_fused"
)
