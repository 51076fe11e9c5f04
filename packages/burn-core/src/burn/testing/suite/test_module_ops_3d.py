"""3-D convolution and pooling, 1-D/3-D transposed convolution, their backward helpers, and the
options of every rank: pooling's ``ceil_mode`` and asymmetric convolution padding.

Forward ops go through `burn.tensor.module`; backward helpers are called on the primitives.
References: `burn.testing.nn_reference_3d` (float64, PyTorch's semantics); shapes are small.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing import nn_reference_3d as ref
from burn.testing.helpers import check_float, check_indices, f64, make, rand_float
from burn.testing.nn_reference import vjp_linear


def _module() -> Any:
    from burn.tensor import module

    return module


def _wrap_float(backend: Any, primitive: Any) -> Any:
    from burn import Float
    from burn.tensor._base import wrap

    return wrap(primitive, backend, Float)


def _inputs(backend: Any, rng: Any, dtype: DType, *shapes: tuple[int, ...]) -> list[tuple[np.ndarray, Any]]:
    out = []
    for shape in shapes:
        x = rand_float(rng, shape, dtype, -1, 1)
        out.append((f64(x), make(backend, x, dtype)))
    return out


def _distinct(rng: Any, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    """Distinct values exact in every dtype: the maximum is unambiguous."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / 8.0 - n / 16.0).astype(dtype.numpy)


def _sym(padding: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((p, p) for p in padding)


# -- convolution ---------------------------------------------------------------------------------
# (x shape, weight shape, bias, stride, padding, dilation, groups)
CONV3D = [
    ((2, 2, 3, 4, 4), (3, 2, 2, 3, 2), True, (1, 1, 1), (0, 1, 0), (1, 1, 1), 1),
    ((1, 4, 4, 3, 5), (4, 2, 2, 2, 3), False, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2),
]


@covers("conv3d")
@pytest.mark.parametrize("case", CONV3D, ids=str)
def test_conv3d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, has_bias, stride, padding, dilation, groups = case
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    out = _module().conv3d(tx, tw, tb if has_bias else None, stride, padding, dilation, groups)
    expected = ref.conv_nd(x, w, b if has_bias else None, stride, _sym(padding), dilation, groups)
    check_float(out, expected, float_dtype, terms=int(np.prod(ws[1:])) + 1, what="conv3d")


@covers("conv3d_x_backward", "conv3d_weight_backward")
@pytest.mark.parametrize("case", CONV3D, ids=str)
def test_conv3d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, dilation, groups = case
    (x, tx), (w, tw) = _inputs(backend, rng, float_dtype, xs, ws)
    pads = _sym(padding)
    out_shape = ref.conv_nd(x, w, None, stride, pads, dilation, groups).shape
    ((g, tg),) = _inputs(backend, rng, float_dtype, out_shape)
    args = (stride, padding, dilation, groups)
    dx = backend.conv3d_x_backward(tx._p, tw._p, tg._p, *args)
    dw = backend.conv3d_weight_backward(tx._p, tw._p, tg._p, *args)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        _wrap_float(backend, dx),
        vjp_linear(lambda v: ref.conv_nd(v, w, None, stride, pads, dilation, groups), xs, g),
        float_dtype,
        terms=terms,
        what="conv3d_x_backward",
    )
    check_float(
        _wrap_float(backend, dw),
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
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (ws[1] * groups,))
    out = _module().conv_transpose1d(
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
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (ws[1] * groups,))
    out = _module().conv_transpose3d(
        tx, tw, tb if has_bias else None, stride, padding, padding_out, dilation, groups
    )
    args = (stride, padding, padding_out, dilation, groups)
    expected = ref.conv_transpose_nd(x, w, b if has_bias else None, *args)
    check_float(out, expected, float_dtype, terms=xs[1] * int(np.prod(ws[2:])) + 1, what="conv_transpose3d")


@covers("conv_transpose3d_x_backward", "conv_transpose3d_weight_backward")
@pytest.mark.parametrize("case", CONV_T3D, ids=str)
def test_conv_transpose3d_backward_helpers(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, ws, _, stride, padding, padding_out, dilation, groups = case
    (x, tx), (w, tw) = _inputs(backend, rng, float_dtype, xs, ws)
    args = (stride, padding, padding_out, dilation, groups)
    out_shape = ref.conv_transpose_nd(x, w, None, *args).shape
    ((g, tg),) = _inputs(backend, rng, float_dtype, out_shape)
    dx = backend.conv_transpose3d_x_backward(tx._p, tw._p, tg._p, *args)
    dw = backend.conv_transpose3d_weight_backward(tx._p, tw._p, tg._p, *args)
    terms = int(np.prod(out_shape[1:]))
    check_float(
        _wrap_float(backend, dx),
        vjp_linear(lambda v: ref.conv_transpose_nd(v, w, None, *args), xs, g),
        float_dtype,
        terms=terms,
        what="conv_transpose3d_x_backward",
    )
    check_float(
        _wrap_float(backend, dw),
        vjp_linear(lambda v: ref.conv_transpose_nd(x, v, None, *args), ws, g),
        float_dtype,
        terms=terms * xs[0],
        what="conv_transpose3d_weight_backward",
    )


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
    (x, tx), (w, tw), (b, tb) = _inputs(backend, rng, float_dtype, xs, ws, (ws[0],))
    rank = len(xs) - 2
    conv = getattr(_module(), f"conv{rank}d")
    out = conv(tx, tw, tb, 1, padding, 1, 1)
    expected = ref.conv_nd(x, w, b, (1,) * rank, pairs, (1,) * rank, 1)
    check_float(out, expected, float_dtype, terms=int(np.prod(ws[1:])) + 1, what=f"conv{rank}d asymmetric")


# -- pooling -------------------------------------------------------------------------------------
# (x shape, kernel, stride, padding, dilation, ceil_mode)
MAX_POOL3D = [
    ((1, 2, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
    ((1, 1, 5, 4, 5), (3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 1, 2), False),
    ((2, 1, 5, 5, 4), (2, 3, 2), (2, 2, 3), (1, 1, 0), (1, 1, 1), True),
]


@covers("max_pool3d", "max_pool3d_with_indices")
@pytest.mark.parametrize("case", MAX_POOL3D, ids=str)
def test_max_pool3d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation, ceil = case
    x = _distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation, ceil)
    m = _module()
    out = m.max_pool3d(tx, kernel, stride, padding, dilation, ceil)
    check_float(out, values, float_dtype, what="max_pool3d")
    out, idx = m.max_pool3d_with_indices(tx, kernel, stride, padding, dilation, ceil)
    check_float(out, values, float_dtype, what="max_pool3d_with_indices values")
    check_indices(idx, index, backend, what="max_pool3d_with_indices indices (d * H * W + h * W + w)")


@covers("max_pool3d_with_indices_backward")
@pytest.mark.parametrize("case", MAX_POOL3D[:2], ids=str)
def test_max_pool3d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation, _ = case
    x = _distinct(rng, xs, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation)
    ((g, tg),) = _inputs(backend, rng, float_dtype, values.shape)
    tidx = make(backend, index, backend.int_dtype)
    dx = backend.max_pool3d_with_indices_backward(
        make(backend, x, float_dtype)._p, kernel, stride, padding, dilation, tg._p, tidx._p
    )
    n, c = xs[:2]
    expected = np.zeros((n, c, int(np.prod(xs[2:]))))
    for i in range(n):
        for j in range(c):
            np.add.at(expected[i, j], index[i, j].reshape(-1), g[i, j].reshape(-1))
    check_float(_wrap_float(backend, dx), expected.reshape(xs), float_dtype, terms=8,
                what="max_pool3d_with_indices_backward")


# (x shape, kernel, stride, padding, count_include_pad, ceil_mode)
AVG_POOL3D = [
    ((1, 2, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), True, False),
    ((1, 1, 3, 5, 4), (3, 3, 2), (2, 2, 1), (1, 1, 1), False, False),
    ((1, 1, 5, 4, 5), (2, 3, 3), (2, 2, 2), (1, 1, 0), True, True),
    ((1, 1, 5, 4, 5), (2, 3, 3), (2, 2, 2), (1, 1, 0), False, True),
]


@covers("avg_pool3d")
@pytest.mark.parametrize("case", AVG_POOL3D, ids=str)
def test_avg_pool3d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, include, ceil = case
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out = _module().avg_pool3d(tx, kernel, stride, padding, include, ceil)
    expected = ref.avg_pool_nd(x, kernel, stride, padding, include, ceil)
    check_float(out, expected, float_dtype, terms=int(np.prod(kernel)), what="avg_pool3d")


@covers("avg_pool3d_backward")
@pytest.mark.parametrize("case", AVG_POOL3D[:2], ids=str)
def test_avg_pool3d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, include, _ = case
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out_shape = ref.avg_pool_nd(x, kernel, stride, padding, include).shape
    ((g, tg),) = _inputs(backend, rng, float_dtype, out_shape)
    dx = backend.avg_pool3d_backward(tx._p, tg._p, kernel, stride, padding, include)
    expected = vjp_linear(lambda v: ref.avg_pool_nd(v, kernel, stride, padding, include), xs, g)
    check_float(_wrap_float(backend, dx), expected, float_dtype, terms=8, what="avg_pool3d_backward")


ADAPTIVE3D = [((1, 2, 4, 5, 3), (2, 3, 3)), ((1, 1, 3, 2, 4), (4, 1, 3))]


@covers("adaptive_avg_pool3d")
@pytest.mark.parametrize(("xs", "size"), ADAPTIVE3D, ids=str)
def test_adaptive_avg_pool3d(backend: Any, float_dtype: DType, xs: Any, size: Any, rng: Any) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    out = _module().adaptive_avg_pool3d(tx, size)
    check_float(out, ref.adaptive_avg_pool_nd(x, size), float_dtype, terms=int(np.prod(xs[2:])),
                what="adaptive_avg_pool3d")


@covers("adaptive_avg_pool3d_backward")
@pytest.mark.parametrize(("xs", "size"), ADAPTIVE3D, ids=str)
def test_adaptive_avg_pool3d_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, rng: Any
) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    ((g, tg),) = _inputs(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.adaptive_avg_pool3d_backward(tx._p, tg._p)
    expected = vjp_linear(lambda v: ref.adaptive_avg_pool_nd(v, size), xs, g)
    check_float(_wrap_float(backend, dx), expected, float_dtype, terms=8, what="adaptive_avg_pool3d_backward")


# ceil_mode of the 1-D and 2-D pools (the 3-D ones are in the cases above): a last partial window
# where it starts inside the input or the left padding, PyTorch's divisors for it.
@covers("max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices")
@pytest.mark.parametrize(
    ("xs", "kernel", "stride", "padding", "dilation"),
    [((2, 2, 7), (2,), (2,), (0,), (1,)), ((1, 2, 6, 5), (3, 2), (2, 2), (1, 1), (1, 2))],
    ids=["1d", "2d"],
)
def test_max_pool_ceil_mode(
    backend: Any, float_dtype: DType, xs: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, rng: Any
) -> None:
    x = _distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation, True)
    assert values.shape != ref.max_pool_nd(f64(x), kernel, stride, padding, dilation, False)[0].shape
    m, rank = _module(), len(kernel)
    args = (kernel, stride, padding, dilation)
    if rank == 1:
        args = tuple(a[0] for a in args)
    check_float(getattr(m, f"max_pool{rank}d")(tx, *args, ceil_mode=True), values, float_dtype, what="ceil")
    out, idx = getattr(m, f"max_pool{rank}d_with_indices")(tx, *args, ceil_mode=True)
    check_float(out, values, float_dtype, what="ceil values")
    check_indices(idx, index, backend, what="ceil indices")


@covers("avg_pool1d", "avg_pool2d")
@pytest.mark.parametrize("include", [True, False])
@pytest.mark.parametrize(
    ("xs", "kernel", "stride", "padding"),
    [((2, 2, 8), (3,), (2,), (1,)), ((1, 2, 5, 6), (2, 3), (2, 2), (1, 1))],
    ids=["1d", "2d"],
)
def test_avg_pool_ceil_mode(
    backend: Any, float_dtype: DType, xs: Any, kernel: Any, stride: Any, padding: Any, include: bool, rng: Any
) -> None:
    ((x, tx),) = _inputs(backend, rng, float_dtype, xs)
    expected = ref.avg_pool_nd(x, kernel, stride, padding, include, True)
    assert expected.shape != ref.avg_pool_nd(x, kernel, stride, padding, include, False).shape
    rank = len(kernel)
    args = (kernel[0], stride[0], padding[0]) if rank == 1 else (kernel, stride, padding)
    out = getattr(_module(), f"avg_pool{rank}d")(tx, *args, count_include_pad=include, ceil_mode=True)
    check_float(out, expected, float_dtype, terms=int(np.prod(kernel)), what=f"avg_pool{rank}d ceil")


# -- errors --------------------------------------------------------------------------------------
@covers("conv3d", "conv_transpose1d", "conv_transpose3d", "max_pool3d", "avg_pool3d")
def test_3d_module_ops_errors(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    ((_, x),) = _inputs(backend, rng, dtype, (1, 2, 3, 3, 3))
    ((_, x1),) = _inputs(backend, rng, dtype, (1, 2, 4))
    m = _module()
    with pytest.raises(ShapeError, match="conv3d: the input must have rank 5"):
        m.conv3d(x1, x1)
    ((_, w),) = _inputs(backend, rng, dtype, (2, 3, 1, 1, 1))
    with pytest.raises(ShapeError, match="conv3d: weight .* expects 3 input channels"):
        m.conv3d(x, w)
    ((_, wt1),) = _inputs(backend, rng, dtype, (2, 2, 3))
    with pytest.raises(ValueError, match="conv_transpose1d: padding_out"):
        m.conv_transpose1d(x1, wt1, stride=2, padding_out=2)
    ((_, wt3),) = _inputs(backend, rng, dtype, (2, 2, 2, 2, 2))
    with pytest.raises(ValueError, match="conv_transpose3d: padding_out"):
        m.conv_transpose3d(x, wt3, stride=(2, 2, 2), padding_out=(0, 2, 0))
    with pytest.raises(ValueError, match="max_pool3d: padding .* at most half the kernel"):
        m.max_pool3d(x, 2, padding=(0, 2, 0))
    with pytest.raises(ShapeError, match="avg_pool3d: input depth 3 is too small"):
        m.avg_pool3d(x, (4, 1, 1))
    with pytest.raises(ValueError, match=r"conv3d: padding must be .* \(before, after\) pairs"):
        m.conv3d(x, wt3, padding=((1, 0), (1, 0)))
