"""Convolution ops: 1-D, 2-D and 3-D convolution, transposed convolution, deformable convolution,
im2col and col2im (``unfold4d`` / ``fold4d``), their backward helpers, and the options of every
rank (groups, dilation, ``padding_out``, asymmetric padding).

Forward ops go through `burn.tensor.module`; the backward helpers have no Tensor method and are
called on the backend's primitives directly. References: `burn.testing.reference.conv` (float64,
PyTorch's and torchvision's semantics); shapes are small.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import KindError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    check_float,
    f64,
    float_inputs,
    make,
    prim,
    rand_float,
    tensor_module,
    wrap_float,
)
from burn.testing.reference import activation as ref_act
from burn.testing.reference import conv as ref
from burn.testing.reference import vjp_linear

# -- 1-D and 2-D convolution, 2-D transposed convolution -------------------------------------------
# (x shape, weight shape, bias, stride, padding, dilation, groups)
CONV2D = [
    ((2, 3, 5, 5), (4, 3, 3, 3), True, (1, 1), (0, 0), (1, 1), 1),
    ((1, 4, 6, 5), (6, 2, 3, 2), True, (2, 1), (1, 2), (1, 1), 2),
    ((2, 2, 7, 7), (3, 2, 3, 3), False, (1, 2), (2, 1), (2, 2), 1),
    ((1, 4, 4, 4), (4, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 4),
    ((1, 1, 1, 1), (2, 1, 1, 1), True, (1, 1), (0, 0), (1, 1), 1),
]

# Depthwise and grouped (few channels per group: burn-ndarray's direct kernels): channel
# multiplier 1 and 2, stride 2, dilation 2, a 3x5 kernel with unequal padding, C/G = 2 and 4, and
# one large enough to be split between threads (forward only: the backward reference takes one
# convolution per input element). burn-ndarray runs depthwise layers of up to 32 channels over
# whole rows: the 16-channel stride-2 case with an odd width has column phases of unequal length.
GROUPED_CONV2D = [
    ((2, 6, 9, 8), (6, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 6),
    ((1, 16, 15, 13), (16, 1, 3, 3), True, (2, 2), (1, 1), (1, 1), 16),
    ((2, 4, 9, 8), (8, 1, 3, 3), True, (2, 2), (1, 1), (1, 1), 4),
    ((1, 5, 10, 11), (5, 1, 3, 5), False, (2, 1), (2, 1), (2, 2), 5),
    ((1, 8, 7, 7), (8, 2, 3, 3), True, (1, 2), (0, 2), (1, 1), 4),
    ((1, 8, 7, 6), (16, 4, 2, 3), True, (2, 1), (1, 0), (1, 2), 2),
    ((2, 24, 20, 20), (24, 1, 7, 7), True, (1, 1), (3, 3), (1, 1), 24),
]


@covers("conv2d")
@pytest.mark.parametrize("case", CONV2D + GROUPED_CONV2D, ids=str)
def test_conv2d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = tensor_module().conv2d(
        tx, tw, tb if has_bias else None, stride=stride, padding=padding, dilation=dilation, groups=groups
    )
    expected = ref.conv2d(x, w, b if has_bias else None, stride, padding, dilation, groups)
    check_float(out, expected, float_dtype, terms=ws[1] * ws[2] * ws[3] + 1, what="conv2d")


# 3x3, stride 1, large enough for a backend's fast path (burn-ndarray's Winograd convolution
# starts at 256 2x2 output tiles and tiles x C x O = 2^16); odd output sizes exercise partial edge
# tiles.
CONV2D_3X3 = [
    ((4, 16, 16, 15), (24, 16, 3, 3), (1, 1)),
    ((8, 16, 13, 13), (32, 16, 3, 3), (0, 0)),
    ((8, 16, 10, 12), (32, 16, 3, 3), (2, 1)),
]


@covers("conv2d")
@pytest.mark.parametrize("case", CONV2D_3X3, ids=str)
def test_conv2d_3x3_large(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, padding = case
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = tensor_module().conv2d(tx, tw, tb, stride=(1, 1), padding=padding)
    expected = ref.conv2d(x, w, b, (1, 1), padding, (1, 1), 1)
    check_float(out, expected, float_dtype, terms=ws[1] * 9 + 1, what="conv2d")


@covers("conv2d_x_backward", "conv2d_weight_backward")
@pytest.mark.parametrize("case", CONV2D_3X3, ids=str)
def test_conv2d_3x3_large_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, padding = case
    (x, tx), (w, tw) = float_inputs(backend, rng, float_dtype, xs, ws)
    out_shape = ref.conv2d(x, w, None, (1, 1), padding, (1, 1), 1).shape
    ((g, tg),) = float_inputs(backend, rng, float_dtype, out_shape)
    hyper = ((1, 1), padding, (1, 1), 1)
    dx = backend.conv2d_x_backward(prim(tx), prim(tw), prim(tg), *hyper)
    dw = backend.conv2d_weight_backward(prim(tx), prim(tw), prim(tg), *hyper)
    # The adjoints in closed form: dx correlates the gradient, padded by 2 - padding, with the
    # flipped filter; dw sums the gradient against each tap's window of the padded input.
    flipped = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
    want_dx = ref.conv2d(g, flipped, None, (1, 1), (2 - padding[0], 2 - padding[1]), (1, 1), 1)
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    ho, wo = out_shape[2:]
    want_dw = np.stack(
        [
            np.stack([np.einsum("nohw,nchw->oc", g, xp[:, :, i : i + ho, j : j + wo]) for j in range(3)], -1)
            for i in range(3)
        ],
        -2,
    )
    terms = ws[0] * 9
    check_float(wrap_float(backend, dx), want_dx, float_dtype, terms=terms, what="conv2d_x_backward")
    check_float(
        wrap_float(backend, dw), want_dw, float_dtype, terms=xs[0] * ho * wo, what="conv2d_weight_backward"
    )


@covers("conv2d")
def test_conv2d_int_arguments(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    (x, tx), (w, tw) = float_inputs(backend, rng, dtype, (1, 2, 6, 6), (3, 2, 3, 3))
    out = tensor_module().conv2d(tx, tw, stride=2, padding=1, dilation=1, groups=1)
    check_float(out, ref.conv2d(x, w, None, (2, 2), (1, 1), (1, 1), 1), dtype, terms=18, what="conv2d ints")


CONV1D = [
    ((2, 3, 10), (4, 3, 3), True, 2, 1, 1, 1),
    ((1, 4, 9), (2, 2, 3), False, 1, 2, 2, 2),
    ((1, 1, 4), (1, 1, 4), True, 1, 0, 1, 1),
    # depthwise: channel multiplier 2 with stride 2, then dilation 2
    ((2, 6, 20), (12, 1, 5), True, 2, 2, 1, 6),
    ((1, 8, 17), (8, 1, 3), False, 1, 2, 2, 8),
]


@covers("conv1d")
@pytest.mark.parametrize("case", CONV1D, ids=str)
def test_conv1d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = tensor_module().conv1d(
        tx, tw, tb if has_bias else None, stride=stride, padding=padding, dilation=dilation, groups=groups
    )
    expected = ref.conv2d(
        x[:, :, None],
        w[:, :, None],
        b if has_bias else None,
        (1, stride),
        (0, padding),
        (1, dilation),
        groups,
    )[:, :, 0]
    check_float(out, expected, float_dtype, terms=ws[1] * ws[2] + 1, what="conv1d")


# (x shape, weight shape [C_in, C_out/groups, KH, KW], bias, stride, padding, padding_out, dilation, groups)
CONV_T = [
    ((2, 3, 4, 4), (3, 2, 3, 3), True, (2, 2), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 3, 5), (4, 1, 2, 3), True, (1, 2), (0, 1), (0, 1), (2, 1), 2),
    ((1, 2, 3, 3), (2, 3, 3, 3), False, (1, 1), (0, 0), (0, 0), (1, 1), 1),
]


@covers("conv_transpose2d")
@pytest.mark.parametrize("case", CONV_T, ids=str)
def test_conv_transpose2d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, padding_out, dilation, groups = case
    c_out = ws[1] * groups
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (c_out,))
    out = tensor_module().conv_transpose2d(
        tx,
        tw,
        tb if has_bias else None,
        stride=stride,
        padding=padding,
        padding_out=padding_out,
        dilation=dilation,
        groups=groups,
    )
    expected = ref.conv_transpose_nd(
        x, w, b if has_bias else None, stride, padding, padding_out, dilation, groups
    )
    check_float(out, expected, float_dtype, terms=xs[1] * ws[2] * ws[3] + 1, what="conv_transpose2d")


@covers("conv2d_x_backward", "conv2d_weight_backward")
@pytest.mark.parametrize("case", CONV2D[:4] + GROUPED_CONV2D[:-1], ids=str)
def test_conv2d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, dilation, groups = case
    (x, tx), (w, tw) = float_inputs(backend, rng, float_dtype, xs, ws)
    out_shape = ref.conv2d(x, w, None, stride, padding, dilation, groups).shape
    ((g, tg),) = float_inputs(backend, rng, float_dtype, out_shape)
    dx = backend.conv2d_x_backward(prim(tx), prim(tw), prim(tg), stride, padding, dilation, groups)
    dw = backend.conv2d_weight_backward(prim(tx), prim(tw), prim(tg), stride, padding, dilation, groups)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        wrap_float(backend, dx),
        vjp_linear(lambda v: ref.conv2d(v, w, None, stride, padding, dilation, groups), xs, g),
        float_dtype,
        terms=terms,
        what="conv2d_x_backward",
    )
    check_float(
        wrap_float(backend, dw),
        vjp_linear(lambda v: ref.conv2d(x, v, None, stride, padding, dilation, groups), ws, g),
        float_dtype,
        terms=terms * xs[0],
        what="conv2d_weight_backward",
    )


@covers("conv_transpose2d_x_backward", "conv_transpose2d_weight_backward")
@pytest.mark.parametrize("case", CONV_T, ids=str)
def test_conv_transpose2d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, padding_out, dilation, groups = case
    (x, tx), (w, tw) = float_inputs(backend, rng, float_dtype, xs, ws)
    out_shape = ref.conv_transpose_nd(x, w, None, stride, padding, padding_out, dilation, groups).shape
    ((g, tg),) = float_inputs(backend, rng, float_dtype, out_shape)
    args = (stride, padding, padding_out, dilation, groups)
    dx = backend.conv_transpose2d_x_backward(prim(tx), prim(tw), prim(tg), *args)
    dw = backend.conv_transpose2d_weight_backward(prim(tx), prim(tw), prim(tg), *args)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        wrap_float(backend, dx),
        vjp_linear(lambda v: ref.conv_transpose_nd(v, w, None, *args), xs, g),
        float_dtype,
        terms=terms,
        what="conv_transpose2d_x_backward",
    )
    check_float(
        wrap_float(backend, dw),
        vjp_linear(lambda v: ref.conv_transpose_nd(x, v, None, *args), ws, g),
        float_dtype,
        terms=terms * xs[0],
        what="conv_transpose2d_weight_backward",
    )


# -- 3-D convolution, 1-D and 3-D transposed convolution, asymmetric padding -----------------------
# (x shape, weight shape, bias, stride, padding, dilation, groups)
CONV3D = [
    ((2, 2, 3, 4, 4), (3, 2, 2, 3, 2), True, (1, 1, 1), (0, 1, 0), (1, 1, 1), 1),
    ((1, 4, 4, 3, 5), (4, 2, 2, 2, 3), False, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2),
]


@covers("conv3d")
@pytest.mark.parametrize("case", CONV3D, ids=str)
def test_conv3d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = tensor_module().conv3d(tx, tw, tb if has_bias else None, stride, padding, dilation, groups)
    expected = ref.conv_nd(x, w, b if has_bias else None, stride, _sym(padding), dilation, groups)
    check_float(out, expected, float_dtype, terms=int(np.prod(ws[1:])) + 1, what="conv3d")


@covers("conv3d_x_backward", "conv3d_weight_backward")
@pytest.mark.parametrize("case", CONV3D, ids=str)
def test_conv3d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, dilation, groups = case
    (x, tx), (w, tw) = float_inputs(backend, rng, float_dtype, xs, ws)
    pads = _sym(padding)
    out_shape = ref.conv_nd(x, w, None, stride, pads, dilation, groups).shape
    ((g, tg),) = float_inputs(backend, rng, float_dtype, out_shape)
    args = (stride, padding, dilation, groups)
    dx = backend.conv3d_x_backward(tx._p, tw._p, tg._p, *args)
    dw = backend.conv3d_weight_backward(tx._p, tw._p, tg._p, *args)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        wrap_float(backend, dx),
        vjp_linear(lambda v: ref.conv_nd(v, w, None, stride, pads, dilation, groups), xs, g),
        float_dtype,
        terms=terms,
        what="conv3d_x_backward",
    )
    check_float(
        wrap_float(backend, dw),
        vjp_linear(lambda v: ref.conv_nd(x, v, None, stride, pads, dilation, groups), ws, g),
        float_dtype,
        terms=terms * xs[0],
        what="conv3d_weight_backward",
    )


# (x shape, weight shape [C_in, C_out/groups, *kernel], bias, stride, padding, padding_out, dilation, groups)
CONV_T1D = [
    ((2, 3, 5), (3, 2, 3), True, 2, 1, 1, 1, 1),
    ((1, 4, 4), (4, 1, 2), False, 1, 0, 1, 2, 2),
]


@covers("conv_transpose1d")
@pytest.mark.parametrize("case", CONV_T1D, ids=str)
def test_conv_transpose1d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, padding_out, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[1] * groups,))
    out = tensor_module().conv_transpose1d(
        tx, tw, tb if has_bias else None, stride, padding, padding_out, dilation, groups
    )
    expected = ref.conv_transpose_nd(
        x, w, b if has_bias else None, (stride,), (padding,), (padding_out,), (dilation,), groups
    )
    check_float(out, expected, float_dtype, terms=xs[1] * ws[2] + 1, what="conv_transpose1d")


CONV_T3D = [
    ((1, 2, 2, 3, 2), (2, 2, 2, 2, 3), True, (2, 1, 2), (1, 0, 1), (1, 0, 0), (1, 1, 1), 1),
    ((1, 4, 2, 2, 3), (4, 1, 2, 3, 2), False, (1, 2, 1), (0, 1, 0), (0, 1, 1), (1, 1, 2), 2),
]


@covers("conv_transpose3d")
@pytest.mark.parametrize("case", CONV_T3D, ids=str)
def test_conv_transpose3d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, padding_out, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[1] * groups,))
    out = tensor_module().conv_transpose3d(
        tx, tw, tb if has_bias else None, stride, padding, padding_out, dilation, groups
    )
    args = (stride, padding, padding_out, dilation, groups)
    expected = ref.conv_transpose_nd(x, w, b if has_bias else None, *args)
    check_float(out, expected, float_dtype, terms=xs[1] * int(np.prod(ws[2:])) + 1, what="conv_transpose3d")


@covers("conv_transpose3d_x_backward", "conv_transpose3d_weight_backward")
@pytest.mark.parametrize("case", CONV_T3D, ids=str)
def test_conv_transpose3d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, padding_out, dilation, groups = case
    (x, tx), (w, tw) = float_inputs(backend, rng, float_dtype, xs, ws)
    args = (stride, padding, padding_out, dilation, groups)
    out_shape = ref.conv_transpose_nd(x, w, None, *args).shape
    ((g, tg),) = float_inputs(backend, rng, float_dtype, out_shape)
    dx = backend.conv_transpose3d_x_backward(tx._p, tw._p, tg._p, *args)
    dw = backend.conv_transpose3d_weight_backward(tx._p, tw._p, tg._p, *args)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        wrap_float(backend, dx),
        vjp_linear(lambda v: ref.conv_transpose_nd(v, w, None, *args), xs, g),
        float_dtype,
        terms=terms,
        what="conv_transpose3d_x_backward",
    )
    check_float(
        wrap_float(backend, dw),
        vjp_linear(lambda v: ref.conv_transpose_nd(x, v, None, *args), ws, g),
        float_dtype,
        terms=terms * xs[0],
        what="conv_transpose3d_weight_backward",
    )


def _sym(padding: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((p, p) for p in padding)


# Asymmetric padding: the difference is padded explicitly, the common part goes to the op.
@covers("conv1d", "conv2d", "conv3d")
@pytest.mark.parametrize(
    ("xs", "ws", "padding", "pairs"),
    [
        ((1, 2, 6), (3, 2, 3), (2, 0), ((2, 0),)),
        ((1, 2, 4, 5), (3, 2, 2, 3), ((1, 0), (0, 2)), ((1, 0), (0, 2))),
        ((1, 2, 3, 3, 4), (2, 2, 2, 2, 2), ((1, 2), 1, (0, 1)), ((1, 2), (1, 1), (0, 1))),
    ],
    ids=["1d", "2d", "3d"],
)
def test_conv_asymmetric_padding(
    backend: Any, float_dtype: DType, xs: Any, ws: Any, padding: Any, pairs: Any, rng: Any
) -> None:
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    rank = len(xs) - 2
    conv = getattr(tensor_module(), f"conv{rank}d")
    out = conv(tx, tw, tb, 1, padding, 1, 1)
    expected = ref.conv_nd(x, w, b, (1,) * rank, pairs, (1,) * rank, 1)
    check_float(out, expected, float_dtype, terms=int(np.prod(ws[1:])) + 1, what=f"conv{rank}d asymmetric")


# -- conv2d_fused: per-side padding and an activation epilogue ------------------------------------
# (x shape, weight shape, stride, (top, bottom, left, right), dilation, groups): the paths
# burn-ndarray takes (im2col + GEMM, a 1x1 GEMM, depthwise over rows and per position, grouped,
# Winograd's 3x3) with symmetric and asymmetric pads.
FUSED_CONV2D = [
    ((2, 3, 6, 7), (4, 3, 3, 3), (2, 2), (0, 1, 1, 0), (1, 1), 1),
    ((2, 8, 5, 5), (6, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((1, 6, 9, 8), (6, 1, 3, 3), (2, 2), (1, 2, 0, 1), (1, 1), 6),
    ((2, 6, 7, 8), (6, 1, 3, 3), (1, 1), (0, 2, 2, 0), (1, 1), 6),
    ((1, 40, 6, 7), (40, 1, 5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 40),
    ((1, 8, 7, 6), (16, 4, 2, 3), (1, 2), (1, 0, 2, 1), (2, 1), 2),
    ((4, 16, 16, 15), (24, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
]
ACTIVATIONS = ["none", "relu", "relu6", "hardswish", "hardsigmoid", "silu", "sigmoid", "gelu"]


def _fused_reference(x: Any, w: Any, b: Any, case: Any, activation: str) -> Any:
    _, _, stride, (top, bottom, left, right), dilation, groups = case
    z = ref.conv_nd(x, w, b, stride, ((top, bottom), (left, right)), dilation, groups)
    return ref_act.conv_epilogue(activation, z)


@covers("conv2d_fused")
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("case", FUSED_CONV2D, ids=str)
def test_conv2d_fused(backend: Any, float_dtype: DType, case: Any, activation: str, rng: Any) -> None:
    xs, ws, stride, sides, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = float_inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    top, bottom, left, right = sides
    out = tensor_module().conv2d(tx, tw, tb, stride, ((top, bottom), (left, right)), dilation, groups,
                                 activation=activation)
    terms = ws[1] * ws[2] * ws[3] + 1
    check_float(out, _fused_reference(x, w, b, case, activation), float_dtype, terms=terms,
                what=f"conv2d activation={activation} padding={sides}")


@covers("conv2d_fused")
def test_conv2d_fused_on_the_backend_op(backend: Any, float_dtype: DType, rng: Any) -> None:
    # The contract op itself, without a bias and with the bottom and right pads larger.
    case = ((1, 3, 5, 6), (2, 3, 3, 2), (2, 1), (0, 2, 1, 3), (1, 2), 1)
    (x, tx), (w, tw) = float_inputs(backend, rng, float_dtype, case[0], case[1])
    out = wrap_float(backend, backend.conv2d_fused(prim(tx), prim(tw), None, *case[2:], "hardswish"))
    check_float(out, _fused_reference(x, w, None, case, "hardswish"), float_dtype, terms=19,
                what="conv2d_fused")


def test_conv2d_rejects_an_unknown_activation(backend: Any) -> None:
    x = make(backend, np.ones((1, 1, 3, 3)), backend.float_dtype)
    w = make(backend, np.ones((1, 1, 2, 2)), backend.float_dtype)
    with pytest.raises(ValueError, match="conv2d: activation must be one of .*got 'tanh'"):
        tensor_module().conv2d(x, w, activation="tanh")


def test_conv2d_checks_kinds_after_a_call_with_the_same_shapes(backend: Any) -> None:
    # The Tensor layer keeps a convolution's resolved arguments per shapes and options; a later
    # call with the same shapes but an Int weight must still be refused.
    x = make(backend, np.ones((1, 2, 4, 4)), backend.float_dtype)
    w = make(backend, np.ones((3, 2, 3, 3)), backend.float_dtype)
    tensor_module().conv2d(x, w, None, 1, ((1, 0), (0, 1)), 1, 1, activation="relu")
    with pytest.raises(KindError, match="conv2d: weight must be a Float tensor"):
        tensor_module().conv2d(x, make(backend, np.ones((3, 2, 3, 3)), backend.int_dtype), None, 1,
                               ((1, 0), (0, 1)), 1, 1, activation="relu")


# -- deformable convolution, im2col, col2im -------------------------------------------------------
Pair = tuple[int, int]


# (x shape, weight shape, stride, padding, dilation, weight_groups, offset_groups, mask, bias)
DEFORM = [
    ((1, 2, 4, 5), (3, 2, 3, 3), (1, 1), (1, 1), (1, 1), 1, 1, False, True),
    ((2, 4, 5, 4), (4, 2, 2, 3), (2, 1), (1, 1), (1, 2), 2, 2, True, False),
    ((1, 4, 3, 3), (2, 4, 1, 1), (1, 1), (0, 0), (1, 1), 1, 4, True, True),
]


def _out(xs: tuple[int, ...], ws: tuple[int, ...], stride: Pair, padding: Pair, dilation: Pair) -> Pair:
    return (
        (xs[2] + 2 * padding[0] - dilation[0] * (ws[2] - 1) - 1) // stride[0] + 1,
        (xs[3] + 2 * padding[1] - dilation[1] * (ws[3] - 1) - 1) // stride[1] + 1,
    )


@covers("deform_conv2d")
@pytest.mark.parametrize("case", DEFORM, ids=str)
def test_deform_conv2d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, stride, padding, dilation, wg, og, has_mask, has_bias = case
    oh, ow = _out(xs, ws, stride, padding, dilation)
    k = ws[2] * ws[3]
    x = rand_float(rng, xs, float_dtype, -1, 1)
    w = rand_float(rng, ws, float_dtype, -1, 1)
    # Offsets up to +-2.5 pixels: samples between pixels, on the border and outside the image.
    off = rand_float(rng, (xs[0], 2 * og * k, oh, ow), float_dtype, -2.5, 2.5)
    m = rand_float(rng, (xs[0], og * k, oh, ow), float_dtype, 0, 1) if has_mask else None
    bias = rand_float(rng, (ws[0],), float_dtype, -1, 1) if has_bias else None
    t = [None if a is None else make(backend, a, float_dtype) for a in (x, off, w, m, bias)]
    out = tensor_module().deform_conv2d(
        t[0], t[1], t[2], t[3], t[4], stride=stride, padding=padding, dilation=dilation,
        weight_groups=wg, offset_groups=og,
    )
    expected = ref.deform_conv2d(
        f64(x), f64(off), f64(w), None if m is None else f64(m), None if bias is None else f64(bias),
        stride, padding, dilation, wg, og,
    )
    check_float(out, expected, float_dtype, terms=4 * ws[1] * k + 1, what="deform_conv2d")


@covers("deform_conv2d")
def test_deform_conv2d_zero_offsets_is_conv2d(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    x = rand_float(rng, (2, 4, 5, 6), dtype, -1, 1)
    w = rand_float(rng, (6, 2, 3, 2), dtype, -1, 1)
    bias = rand_float(rng, (6,), dtype, -1, 1)
    stride, padding, dilation = (2, 1), (1, 2), (1, 2)
    oh, ow = _out(x.shape, w.shape, stride, padding, dilation)
    off = np.zeros((2, 2 * 2 * 6, oh, ow), dtype=x.dtype)
    mask = np.ones((2, 2 * 6, oh, ow), dtype=x.dtype)
    tx, tw, tb, to, tm = (make(backend, a, dtype) for a in (x, w, bias, off, mask))
    expected = ref.conv2d(f64(x), f64(w), f64(bias), stride, padding, dilation, 2)
    for m in (None, tm):
        out = tensor_module().deform_conv2d(tx, to, tw, m, tb, stride, padding, dilation, 2, 2)
        check_float(out, expected, dtype, terms=13, what="deform_conv2d with zero offsets")


@covers("deform_conv2d")
def test_deform_conv2d_checks_shapes(backend: Any, rng: Any) -> None:
    from burn.errors import ShapeError

    dtype = backend.float_dtype
    x = make(backend, rand_float(rng, (1, 4, 4, 4), dtype), dtype)
    w = make(backend, rand_float(rng, (2, 4, 3, 3), dtype), dtype)
    good = make(backend, np.zeros((1, 18, 2, 2), dtype=dtype.numpy), dtype)
    bad = make(backend, np.zeros((1, 18, 3, 3), dtype=dtype.numpy), dtype)
    with pytest.raises(ShapeError, match=r"deform_conv2d: offset must have shape \(1, 18, 2, 2\)"):
        tensor_module().deform_conv2d(x, bad, w)
    with pytest.raises(ShapeError, match="4 input channels are not divisible by offset_groups=3"):
        tensor_module().deform_conv2d(x, good, w, offset_groups=3)
    with pytest.raises(ShapeError, match=r"deform_conv2d: mask must have shape \(1, 9, 2, 2\)"):
        tensor_module().deform_conv2d(x, good, w, mask=good)


# (x shape, kernel, stride, padding, dilation)
WINDOWS = [
    ((2, 3, 5, 6), (2, 3), (1, 1), (0, 0), (1, 1)),
    ((1, 2, 7, 6), (3, 2), (2, 3), (1, 1), (2, 1)),
    ((1, 1, 4, 4), (2, 2), (2, 2), (0, 0), (1, 1)),
]


@covers("unfold4d")
@pytest.mark.parametrize(("xs", "kernel", "stride", "padding", "dilation"), WINDOWS, ids=str)
def test_unfold4d(backend: Any, float_dtype: DType, xs: Any, kernel: Pair, stride: Pair, padding: Pair,
                  dilation: Pair, rng: Any) -> None:
    x = rand_float(rng, xs, float_dtype, -1, 1)
    out = tensor_module().unfold4d(make(backend, x, float_dtype), kernel, stride, padding, dilation)
    expected = ref.unfold4d(f64(x), kernel, stride, padding, dilation)
    check_float(out, expected, float_dtype, what="unfold4d")


@covers("fold4d")
@pytest.mark.parametrize(("xs", "kernel", "stride", "padding", "dilation"), WINDOWS, ids=str)
def test_fold4d(backend: Any, float_dtype: DType, xs: Any, kernel: Pair, stride: Pair, padding: Pair,
                dilation: Pair, rng: Any) -> None:
    size = xs[2:]
    length = ref.unfold4d(np.zeros(xs), kernel, stride, padding, dilation).shape[2]
    cols = rand_float(rng, (xs[0], xs[1] * kernel[0] * kernel[1], length), float_dtype, -1, 1)
    out = tensor_module().fold4d(make(backend, cols, float_dtype), size, kernel, stride, padding, dilation)
    expected = ref.fold4d(f64(cols), size, kernel, stride, padding, dilation)
    check_float(out, expected, float_dtype, terms=kernel[0] * kernel[1], what="fold4d")


@covers("fold4d")
def test_fold4d_checks_the_column_count(backend: Any) -> None:
    from burn.errors import ShapeError

    dtype = backend.float_dtype
    cols = make(backend, np.zeros((1, 8, 10), dtype=dtype.numpy), dtype)
    with pytest.raises(ShapeError, match=r"fold4d: columns \(1, 8, 10\) do not match kernel \(2, 2\)"):
        tensor_module().fold4d(cols, (4, 4), 2)
