"""Pooling ops: max pooling (with indices), average pooling and adaptive average pooling in 1-D,
2-D and 3-D, their backward helpers, and the options of every rank (dilation, padding,
``count_include_pad``, ``ceil_mode``).

Forward ops go through `burn.tensor.module`; the backward helpers have no Tensor method and are
called on the backend's primitives directly. References: `burn.testing.reference.pool` (float64,
PyTorch's semantics); shapes are small.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    check_float,
    check_indices,
    f64,
    float_inputs,
    make,
    prim,
    rand_distinct,
    tensor_module,
    wrap_float,
)
from burn.testing.reference import pool as ref
from burn.testing.reference import vjp_linear

# -- 1-D and 2-D pooling ---------------------------------------------------------------------------
# (x shape, kernel, stride, padding, dilation)
MAX_POOL = [
    ((2, 3, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((1, 2, 7, 5), (3, 2), (2, 1), (1, 1), (1, 1)),
    ((1, 1, 7, 7), (2, 2), (1, 1), (0, 0), (2, 2)),
]


@covers("max_pool2d", "max_pool2d_with_indices")
@pytest.mark.parametrize("case", MAX_POOL, ids=str)
def test_max_pool2d(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation = case
    x = rand_distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation)
    m = tensor_module()
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
    x = rand_distinct(rng, (1, 2, 6, 4), dtype)
    values, _ = ref.max_pool_nd(f64(x), (3, 2), (3, 2), (0, 0), (1, 1))
    check_float(
        tensor_module().max_pool2d(make(backend, x, dtype), (3, 2)), values, dtype, what="stride=None"
    )


@covers("max_pool2d_with_indices_backward")
@pytest.mark.parametrize("case", MAX_POOL, ids=str)
def test_max_pool2d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation = case
    x = rand_distinct(rng, xs, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation)
    ((g, tg),) = float_inputs(backend, rng, float_dtype, values.shape)
    tidx = make(backend, index, backend.int_dtype)
    dx = backend.max_pool2d_with_indices_backward(
        prim(make(backend, x, float_dtype)), kernel, stride, padding, dilation, prim(tg), prim(tidx)
    )
    n, c, h, w = xs
    expected = np.zeros((n, c, h * w))
    for i in range(n):
        for j in range(c):
            np.add.at(expected[i, j], index[i, j].reshape(-1), g[i, j].reshape(-1))
    check_float(
        wrap_float(backend, dx),
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
    x = rand_distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool_nd(f64(x)[:, :, None], (1, kernel), (1, stride), (0, padding), (1, dilation))
    m = tensor_module()
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
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out = tensor_module().avg_pool2d(tx, kernel, stride=stride, padding=padding, count_include_pad=include)
    check_float(
        out,
        ref.avg_pool_nd(x, kernel, stride, padding, include),
        float_dtype,
        terms=kernel[0] * kernel[1],
        what="avg_pool2d",
    )


@covers("avg_pool2d_backward")
@pytest.mark.parametrize("case", AVG_POOL, ids=str)
def test_avg_pool2d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, include = case
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out_shape = ref.avg_pool_nd(x, kernel, stride, padding, include).shape
    ((g, tg),) = float_inputs(backend, rng, float_dtype, out_shape)
    dx = backend.avg_pool2d_backward(prim(tx), prim(tg), kernel, stride, padding, include)
    expected = vjp_linear(lambda v: ref.avg_pool_nd(v, kernel, stride, padding, include), xs, g)
    check_float(wrap_float(backend, dx), expected, float_dtype, terms=4, what="avg_pool2d_backward")


@covers("avg_pool1d")
@pytest.mark.parametrize(
    ("xs", "kernel", "stride", "padding", "include"),
    [((2, 3, 9), 3, 2, 1, True), ((2, 3, 9), 3, 2, 1, False), ((1, 1, 6), 2, 2, 0, True)],
    ids=str,
)
def test_avg_pool1d(
    backend: Any, float_dtype: DType, xs: Any, kernel: int, stride: int, padding: int, include: bool, rng: Any
) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out = tensor_module().avg_pool1d(tx, kernel, stride=stride, padding=padding, count_include_pad=include)
    expected = ref.avg_pool_nd(x[:, :, None], (1, kernel), (1, stride), (0, padding), include)[:, :, 0]
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
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out = tensor_module().adaptive_avg_pool2d(tx, size)
    check_float(
        out, ref.adaptive_avg_pool_nd(x, size), float_dtype, terms=xs[2] * xs[3], what="adaptive_avg_pool2d"
    )


@covers("adaptive_avg_pool2d_backward")
@pytest.mark.parametrize(("xs", "size"), ADAPTIVE, ids=str)
def test_adaptive_avg_pool2d_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, rng: Any
) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    ((g, tg),) = float_inputs(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.adaptive_avg_pool2d_backward(prim(tx), prim(tg))
    expected = vjp_linear(lambda v: ref.adaptive_avg_pool_nd(v, size), xs, g)
    check_float(wrap_float(backend, dx), expected, float_dtype, terms=4, what="adaptive_avg_pool2d_backward")


@covers("adaptive_avg_pool1d")
@pytest.mark.parametrize(("xs", "size"), [((2, 3, 10), 4), ((1, 1, 3), 5), ((1, 2, 6), 1)], ids=str)
def test_adaptive_avg_pool1d(backend: Any, float_dtype: DType, xs: Any, size: int, rng: Any) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out = tensor_module().adaptive_avg_pool1d(tx, size)
    check_float(
        out,
        ref.adaptive_avg_pool_nd(x[:, :, None], (1, size))[:, :, 0],
        float_dtype,
        terms=xs[2],
        what="adaptive_avg_pool1d",
    )


# -- 3-D pooling; ceil_mode of every rank ----------------------------------------------------------
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
    x = rand_distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation, ceil)
    m = tensor_module()
    out = m.max_pool3d(tx, kernel, stride, padding, dilation, ceil)
    check_float(out, values, float_dtype, what="max_pool3d")
    out, idx = m.max_pool3d_with_indices(tx, kernel, stride, padding, dilation, ceil)
    check_float(out, values, float_dtype, what="max_pool3d_with_indices values")
    check_indices(idx, index, backend, what="max_pool3d_with_indices indices (d * H * W + h * W + w)")


@covers("max_pool3d_with_indices_backward")
@pytest.mark.parametrize("case", MAX_POOL3D[:2], ids=str)
def test_max_pool3d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, dilation, _ = case
    x = rand_distinct(rng, xs, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation)
    ((g, tg),) = float_inputs(backend, rng, float_dtype, values.shape)
    tidx = make(backend, index, backend.int_dtype)
    dx = backend.max_pool3d_with_indices_backward(
        make(backend, x, float_dtype)._p, kernel, stride, padding, dilation, tg._p, tidx._p
    )
    n, c = xs[:2]
    expected = np.zeros((n, c, int(np.prod(xs[2:]))))
    for i in range(n):
        for j in range(c):
            np.add.at(expected[i, j], index[i, j].reshape(-1), g[i, j].reshape(-1))
    check_float(wrap_float(backend, dx), expected.reshape(xs), float_dtype, terms=8,
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
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out = tensor_module().avg_pool3d(tx, kernel, stride, padding, include, ceil)
    expected = ref.avg_pool_nd(x, kernel, stride, padding, include, ceil)
    check_float(out, expected, float_dtype, terms=int(np.prod(kernel)), what="avg_pool3d")


@covers("avg_pool3d_backward")
@pytest.mark.parametrize("case", AVG_POOL3D[:2], ids=str)
def test_avg_pool3d_backward_helper(backend: Any, float_dtype: DType, case: Any, rng: Any) -> None:
    xs, kernel, stride, padding, include, _ = case
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out_shape = ref.avg_pool_nd(x, kernel, stride, padding, include).shape
    ((g, tg),) = float_inputs(backend, rng, float_dtype, out_shape)
    dx = backend.avg_pool3d_backward(tx._p, tg._p, kernel, stride, padding, include)
    expected = vjp_linear(lambda v: ref.avg_pool_nd(v, kernel, stride, padding, include), xs, g)
    check_float(wrap_float(backend, dx), expected, float_dtype, terms=8, what="avg_pool3d_backward")


ADAPTIVE3D = [((1, 2, 4, 5, 3), (2, 3, 3)), ((1, 1, 3, 2, 4), (4, 1, 3))]


@covers("adaptive_avg_pool3d")
@pytest.mark.parametrize(("xs", "size"), ADAPTIVE3D, ids=str)
def test_adaptive_avg_pool3d(backend: Any, float_dtype: DType, xs: Any, size: Any, rng: Any) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out = tensor_module().adaptive_avg_pool3d(tx, size)
    check_float(out, ref.adaptive_avg_pool_nd(x, size), float_dtype, terms=int(np.prod(xs[2:])),
                what="adaptive_avg_pool3d")


@covers("adaptive_avg_pool3d_backward")
@pytest.mark.parametrize(("xs", "size"), ADAPTIVE3D, ids=str)
def test_adaptive_avg_pool3d_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, rng: Any
) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    ((g, tg),) = float_inputs(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.adaptive_avg_pool3d_backward(tx._p, tg._p)
    expected = vjp_linear(lambda v: ref.adaptive_avg_pool_nd(v, size), xs, g)
    check_float(wrap_float(backend, dx), expected, float_dtype, terms=8, what="adaptive_avg_pool3d_backward")


# ceil_mode of the 1-D and 2-D pools (the 3-D ones are in the cases above): a last partial window
# where it starts inside the input or the left padding, PyTorch's divisors for it; a kernel longer
# than the padded input is one window over it (ONNX's ceil-mode size, EfficientNet's export).
@covers("max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices")
@pytest.mark.parametrize(
    ("xs", "kernel", "stride", "padding", "dilation"),
    [
        ((2, 2, 7), (2,), (2,), (0,), (1,)),
        ((1, 2, 6, 5), (3, 2), (2, 2), (1, 1), (1, 2)),
        ((1, 2, 3, 4), (5, 6), (5, 6), (0, 1), (1, 1)),
    ],
    ids=["1d", "2d", "2d_kernel_over_input"],
)
def test_max_pool_ceil_mode(
    backend: Any, float_dtype: DType, xs: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, rng: Any
) -> None:
    x = rand_distinct(rng, xs, float_dtype)
    tx = make(backend, x, float_dtype)
    values, index = ref.max_pool_nd(f64(x), kernel, stride, padding, dilation, True)
    assert values.shape != ref.max_pool_nd(f64(x), kernel, stride, padding, dilation, False)[0].shape
    m, rank = tensor_module(), len(kernel)
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
    [
        ((2, 2, 8), (3,), (2,), (1,)),
        ((1, 2, 5, 6), (2, 3), (2, 2), (1, 1)),
        ((2, 2, 5), (8,), (2,), (1,)),
        ((1, 2, 5, 6), (7, 9), (7, 3), (0, 1)),
    ],
    ids=["1d", "2d", "1d_kernel_over_input", "2d_kernel_over_input"],
)
def test_avg_pool_ceil_mode(
    backend: Any, float_dtype: DType, xs: Any, kernel: Any, stride: Any, padding: Any, include: bool, rng: Any
) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    expected = ref.avg_pool_nd(x, kernel, stride, padding, include, True)
    assert expected.shape != ref.avg_pool_nd(x, kernel, stride, padding, include, False).shape
    rank = len(kernel)
    args = (kernel[0], stride[0], padding[0]) if rank == 1 else (kernel, stride, padding)
    out = getattr(tensor_module(), f"avg_pool{rank}d")(tx, *args, count_include_pad=include, ceil_mode=True)
    check_float(out, expected, float_dtype, terms=int(np.prod(kernel)), what=f"avg_pool{rank}d ceil")
