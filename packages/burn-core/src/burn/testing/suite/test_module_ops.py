"""Module ops: convolution, pooling, embedding, interpolation, and their backward helpers.

Forward ops go through `burn.tensor.module`; the backward helpers have no Tensor method and are
called on the backend's primitives directly. References: `burn.testing.nn_reference` (float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing import nn_reference as ref
from burn.testing.helpers import check_float, check_indices, f64, make, rand_float


def _module() -> Any:
    from burn.tensor import module

    return module


def _wrap_float(backend: Any, primitive: Any) -> Any:
    """A Float tensor around a primitive a backward helper returned (no Tensor method exists)."""
    from burn import Float
    from burn.tensor._base import wrap

    return wrap(primitive, backend, Float)


def _p(t: Any) -> Any:
    return t._p


def _inputs(backend: Any, rng: Any, dtype: DType, *shapes: tuple[int, ...]) -> list[tuple[np.ndarray, Any]]:
    out = []
    for shape in shapes:
        x = rand_float(rng, shape, dtype, -1, 1)
        out.append((f64(x), make(backend, x, dtype)))
    return out


# -- convolution ---------------------------------------------------------------------------------
# (x shape, weight shape, bias, stride, padding, dilation, groups)
CONV2D = [
    ((2, 3, 5, 5), (4, 3, 3, 3), True, (1, 1), (0, 0), (1, 1), 1),
    ((1, 4, 6, 5), (6, 2, 3, 2), True, (2, 1), (1, 2), (1, 1), 2),
    ((2, 2, 7, 7), (3, 2, 3, 3), False, (1, 2), (2, 1), (2, 2), 1),
    ((1, 4, 4, 4), (4, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 4),
    ((1, 1, 1, 1), (2, 1, 1, 1), True, (1, 1), (0, 0), (1, 1), 1),
]


@covers("conv2d")
@pytest.mark.parametrize("case", CONV2D, ids=str)
def test_conv2d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = _module().conv2d(
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
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = _module().conv2d(tx, tw, tb, stride=(1, 1), padding=padding)
    expected = ref.conv2d(x, w, b, (1, 1), padding, (1, 1), 1)
    check_float(out, expected, float_dtype, terms=ws[1] * 9 + 1, what="conv2d")


@covers("conv2d_x_backward", "conv2d_weight_backward")
@pytest.mark.parametrize("case", CONV2D_3X3, ids=str)
def test_conv2d_3x3_large_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, padding = case
    (x, tx), (w, tw) = _inputs(backend, rng, float_dtype, xs, ws)
    out_shape = ref.conv2d(x, w, None, (1, 1), padding, (1, 1), 1).shape
    ((g, tg),) = _inputs(backend, rng, float_dtype, out_shape)
    hyper = ((1, 1), padding, (1, 1), 1)
    dx = backend.conv2d_x_backward(_p(tx), _p(tw), _p(tg), *hyper)
    dw = backend.conv2d_weight_backward(_p(tx), _p(tw), _p(tg), *hyper)
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
    check_float(_wrap_float(backend, dx), want_dx, float_dtype, terms=terms, what="conv2d_x_backward")
    check_float(
        _wrap_float(backend, dw), want_dw, float_dtype, terms=xs[0] * ho * wo, what="conv2d_weight_backward"
    )


@covers("conv2d")
def test_conv2d_int_arguments(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    (x, tx), (w, tw) = _inputs(backend, rng, dtype, (1, 2, 6, 6), (3, 2, 3, 3))
    out = _module().conv2d(tx, tw, stride=2, padding=1, dilation=1, groups=1)
    check_float(out, ref.conv2d(x, w, None, (2, 2), (1, 1), (1, 1), 1), dtype, terms=18, what="conv2d ints")


CONV1D = [
    ((2, 3, 10), (4, 3, 3), True, 2, 1, 1, 1),
    ((1, 4, 9), (2, 2, 3), False, 1, 2, 2, 2),
    ((1, 1, 4), (1, 1, 4), True, 1, 0, 1, 1),
]


@covers("conv1d")
@pytest.mark.parametrize("case", CONV1D, ids=str)
def test_conv1d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = _module().conv1d(
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
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (c_out,))
    out = _module().conv_transpose2d(
        tx,
        tw,
        tb if has_bias else None,
        stride=stride,
        padding=padding,
        padding_out=padding_out,
        dilation=dilation,
        groups=groups,
    )
    expected = ref.conv_transpose2d(
        x, w, b if has_bias else None, stride, padding, padding_out, dilation, groups
    )
    check_float(out, expected, float_dtype, terms=xs[1] * ws[2] * ws[3] + 1, what="conv_transpose2d")


@covers("conv2d_x_backward", "conv2d_weight_backward")
@pytest.mark.parametrize("case", CONV2D[:4], ids=str)
def test_conv2d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, dilation, groups = case
    (x, tx), (w, tw) = _inputs(backend, rng, float_dtype, xs, ws)
    out_shape = ref.conv2d(x, w, None, stride, padding, dilation, groups).shape
    ((g, tg),) = _inputs(backend, rng, float_dtype, out_shape)
    dx = backend.conv2d_x_backward(_p(tx), _p(tw), _p(tg), stride, padding, dilation, groups)
    dw = backend.conv2d_weight_backward(_p(tx), _p(tw), _p(tg), stride, padding, dilation, groups)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        _wrap_float(backend, dx),
        ref.vjp_linear(lambda v: ref.conv2d(v, w, None, stride, padding, dilation, groups), xs, g),
        float_dtype,
        terms=terms,
        what="conv2d_x_backward",
    )
    check_float(
        _wrap_float(backend, dw),
        ref.vjp_linear(lambda v: ref.conv2d(x, v, None, stride, padding, dilation, groups), ws, g),
        float_dtype,
        terms=terms * xs[0],
        what="conv2d_weight_backward",
    )


@covers("conv_transpose2d_x_backward", "conv_transpose2d_weight_backward")
@pytest.mark.parametrize("case", CONV_T, ids=str)
def test_conv_transpose2d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, padding_out, dilation, groups = case
    (x, tx), (w, tw) = _inputs(backend, rng, float_dtype, xs, ws)
    out_shape = ref.conv_transpose2d(x, w, None, stride, padding, padding_out, dilation, groups).shape
    ((g, tg),) = _inputs(backend, rng, float_dtype, out_shape)
    args = (stride, padding, padding_out, dilation, groups)
    dx = backend.conv_transpose2d_x_backward(_p(tx), _p(tw), _p(tg), *args)
    dw = backend.conv_transpose2d_weight_backward(_p(tx), _p(tw), _p(tg), *args)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        _wrap_float(backend, dx),
        ref.vjp_linear(lambda v: ref.conv_transpose2d(v, w, None, *args), xs, g),
        float_dtype,
        terms=terms,
        what="conv_transpose2d_x_backward",
    )
    check_float(
        _wrap_float(backend, dw),
        ref.vjp_linear(lambda v: ref.conv_transpose2d(x, v, None, *args), ws, g),
        float_dtype,
        terms=terms * xs[0],
        what="conv_transpose2d_weight_backward",
    )


# -- pooling -------------------------------------------------------------------------------------
# (x shape, kernel, stride, padding, dilation)
MAX_POOL = [
    ((2, 3, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((1, 2, 7, 5), (3, 2), (2, 1), (1, 1), (1, 1)),
    ((1, 1, 7, 7), (2, 2), (1, 1), (0, 0), (2, 2)),
]


def _distinct(rng: Any, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    """Distinct values (a shuffled grid exact in every dtype): the maximum is unambiguous."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / 8.0 - n / 16.0).astype(dtype.numpy)


@covers("max_pool2d", "max_pool2d_with_indices")
@pytest.mark.parametrize("case", MAX_POOL, ids=str)
def test_max_pool2d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation = case
    x = _distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool2d_with_indices(f64(x), kernel, stride, padding, dilation)
    m = _module()
    check_float(
        m.max_pool2d(tx, kernel, stride=stride, padding=padding, dilation=dilation),
        values,
        float_dtype,
        what="max_pool2d",
    )
    out, idx = m.max_pool2d_with_indices(tx, kernel, stride=stride, padding=padding, dilation=dilation)
    check_float(out, values, float_dtype, what="max_pool2d_with_indices values")
    check_indices(idx, index, backend, what="max_pool2d_with_indices indices (h * W + w)")


@covers("max_pool2d")
def test_max_pool2d_default_stride_is_kernel(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    x = _distinct(rng, (1, 2, 6, 4), dtype)
    values, _ = ref.max_pool2d_with_indices(f64(x), (3, 2), (3, 2), (0, 0), (1, 1))
    check_float(_module().max_pool2d(make(backend, x, dtype), (3, 2)), values, dtype, what="stride=None")


@covers("max_pool2d_with_indices_backward")
@pytest.mark.parametrize("case", MAX_POOL, ids=str)
def test_max_pool2d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation = case
    x = _distinct(rng, xs, float_dtype)
    values, index = ref.max_pool2d_with_indices(f64(x), kernel, stride, padding, dilation)
    ((g, tg),) = _inputs(backend, rng, float_dtype, values.shape)
    tidx = make(backend, index, backend.int_dtype)
    dx = backend.max_pool2d_with_indices_backward(
        _p(make(backend, x, float_dtype)), kernel, stride, padding, dilation, _p(tg), _p(tidx)
    )
    n, c, h, w = xs
    expected = np.zeros((n, c, h * w))
    for i in range(n):
        for j in range(c):
            np.add.at(expected[i, j], index[i, j].reshape(-1), g[i, j].reshape(-1))
    check_float(
        _wrap_float(backend, dx),
        expected.reshape(xs),
        float_dtype,
        terms=4,
        what="max_pool2d_with_indices_backward",
    )


MAX_POOL1D = [((2, 3, 10), 3, 2, 1, 1), ((1, 2, 9), 2, 1, 0, 3)]


@covers("max_pool1d", "max_pool1d_with_indices")
@pytest.mark.parametrize("case", MAX_POOL1D, ids=str)
def test_max_pool1d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation = case
    x = _distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool2d_with_indices(
        f64(x)[:, :, None], (1, kernel), (1, stride), (0, padding), (1, dilation)
    )
    m = _module()
    check_float(
        m.max_pool1d(tx, kernel, stride=stride, padding=padding, dilation=dilation),
        values[:, :, 0],
        float_dtype,
        what="max_pool1d",
    )
    out, idx = m.max_pool1d_with_indices(tx, kernel, stride=stride, padding=padding, dilation=dilation)
    check_float(out, values[:, :, 0], float_dtype, what="max_pool1d_with_indices values")
    check_indices(idx, index[:, :, 0], backend, what="max_pool1d_with_indices indices")


# (x shape, kernel, stride, padding, count_include_pad)
AVG_POOL = [
    ((2, 3, 6, 6), (2, 2), (2, 2), (0, 0), True),
    ((1, 2, 7, 5), (3, 3), (2, 2), (1, 1), True),
    ((1, 2, 7, 5), (3, 3), (2, 2), (1, 1), False),
    ((1, 1, 5, 6), (2, 3), (1, 3), (1, 0), False),
]


@covers("avg_pool2d")
@pytest.mark.parametrize("case", AVG_POOL, ids=str)
def test_avg_pool2d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, include = case
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out = _module().avg_pool2d(tx, kernel, stride=stride, padding=padding, count_include_pad=include)
    check_float(
        out,
        ref.avg_pool2d(x, kernel, stride, padding, include),
        float_dtype,
        terms=kernel[0] * kernel[1],
        what="avg_pool2d",
    )


@covers("avg_pool2d_backward")
@pytest.mark.parametrize("case", AVG_POOL, ids=str)
def test_avg_pool2d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, include = case
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out_shape = ref.avg_pool2d(x, kernel, stride, padding, include).shape
    ((g, tg),) = _inputs(backend, rng, float_dtype, out_shape)
    dx = backend.avg_pool2d_backward(_p(tx), _p(tg), kernel, stride, padding, include)
    expected = ref.vjp_linear(lambda v: ref.avg_pool2d(v, kernel, stride, padding, include), xs, g)
    check_float(_wrap_float(backend, dx), expected, float_dtype, terms=4, what="avg_pool2d_backward")


@covers("avg_pool1d")
@pytest.mark.parametrize(
    ("xs", "kernel", "stride", "padding", "include"),
    [((2, 3, 9), 3, 2, 1, True), ((2, 3, 9), 3, 2, 1, False), ((1, 1, 6), 2, 2, 0, True)],
    ids=str,
)
def test_avg_pool1d(
    backend: Any, float_dtype: DType, xs: Any, kernel: int, stride: int, padding: int, include: bool, rng: Any
) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out = _module().avg_pool1d(tx, kernel, stride=stride, padding=padding, count_include_pad=include)
    expected = ref.avg_pool2d(x[:, :, None], (1, kernel), (1, stride), (0, padding), include)[:, :, 0]
    check_float(out, expected, float_dtype, terms=kernel, what="avg_pool1d")


ADAPTIVE = [
    ((2, 3, 7, 5), (3, 2)),
    ((1, 2, 4, 4), (4, 4)),
    ((1, 1, 5, 7), (1, 1)),
    ((1, 2, 5, 7), (2, 3)),
    ((1, 1, 3, 2), (5, 4)),
]


@covers("adaptive_avg_pool2d")
@pytest.mark.parametrize(("xs", "size"), ADAPTIVE, ids=str)
def test_adaptive_avg_pool2d(backend: Any, float_dtype: DType, xs: Any, size: Any, rng: Any) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out = _module().adaptive_avg_pool2d(tx, size)
    check_float(
        out, ref.adaptive_avg_pool2d(x, size), float_dtype, terms=xs[2] * xs[3], what="adaptive_avg_pool2d"
    )


@covers("adaptive_avg_pool2d_backward")
@pytest.mark.parametrize(("xs", "size"), ADAPTIVE, ids=str)
def test_adaptive_avg_pool2d_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, rng: Any
) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    ((g, tg),) = _inputs(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.adaptive_avg_pool2d_backward(_p(tx), _p(tg))
    expected = ref.vjp_linear(lambda v: ref.adaptive_avg_pool2d(v, size), xs, g)
    check_float(_wrap_float(backend, dx), expected, float_dtype, terms=4, what="adaptive_avg_pool2d_backward")


@covers("adaptive_avg_pool1d")
@pytest.mark.parametrize(("xs", "size"), [((2, 3, 10), 4), ((1, 1, 3), 5), ((1, 2, 6), 1)], ids=str)
def test_adaptive_avg_pool1d(backend: Any, float_dtype: DType, xs: Any, size: int, rng: Any) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out = _module().adaptive_avg_pool1d(tx, size)
    check_float(
        out,
        ref.adaptive_avg_pool2d(x[:, :, None], (1, size))[:, :, 0],
        float_dtype,
        terms=xs[2],
        what="adaptive_avg_pool1d",
    )


# -- embedding -----------------------------------------------------------------------------------
@covers("embedding")
@pytest.mark.parametrize("idx_shape", [(5,), (2, 3), (2, 0)], ids=str)
def test_embedding(backend: Any, float_dtype: DType, idx_shape: Any, rng: Any) -> None:
    ((w, tw),) = _inputs(backend, rng, float_dtype, (10, 4))
    idx = rng.integers(0, 10, size=idx_shape)
    out = _module().embedding(tw, make(backend, idx, backend.int_dtype))
    check_float(out, w[idx], float_dtype, what="embedding")


@covers("embedding_backward")
def test_embedding_backward_helper(backend: Any, float_dtype: DType, rng: Any) -> None:
    ((w, tw),) = _inputs(backend, rng, float_dtype, (6, 3))
    idx = np.array([[0, 5, 5], [2, 0, 5]])
    ((g, tg),) = _inputs(backend, rng, float_dtype, (2, 3, 3))
    dw = backend.embedding_backward(_p(tw), _p(tg), _p(make(backend, idx, backend.int_dtype)))
    expected = np.zeros((6, 3))
    np.add.at(expected, idx.reshape(-1), g.reshape(-1, 3))
    check_float(_wrap_float(backend, dw), expected, float_dtype, terms=3, what="embedding_backward")


# -- interpolation -------------------------------------------------------------------------------
INTERPOLATE = [
    ((1, 2, 4, 4), (8, 8), "nearest", False),
    ((1, 2, 8, 6), (4, 3), "nearest", False),
    ((2, 1, 5, 5), (3, 3), "nearest", False),
    ((1, 2, 4, 5), (7, 9), "bilinear", False),
    ((1, 2, 4, 5), (7, 9), "bilinear", True),
    ((1, 1, 6, 6), (3, 4), "bilinear", False),
    ((1, 1, 6, 6), (3, 4), "bilinear", True),
    ((1, 1, 1, 3), (2, 1), "bilinear", True),
]


@covers("interpolate")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE, ids=str)
def test_interpolate(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out = _module().interpolate(tx, size, mode=mode, align_corners=align)
    check_float(out, ref.interpolate(x, size, mode, align), float_dtype, terms=4, what=f"interpolate {mode}")


@covers("interpolate_backward")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE, ids=str)
def test_interpolate_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    ((g, tg),) = _inputs(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.interpolate_backward(_p(tx), _p(tg), size, mode, align)
    expected = ref.vjp_linear(lambda v: ref.interpolate(v, size, mode, align), xs, g)
    check_float(_wrap_float(backend, dx), expected, float_dtype, terms=8, what=f"interpolate_backward {mode}")
