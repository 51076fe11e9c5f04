"""The fast paths of convolution and max pooling against the general ones and NumPy references.

Max pooling's running-maximum forward must equal the argmax path exactly (values and indices,
ties included: the first maximum in kernel order), and its per-tap backward must equal the
bincount scatter exactly. Convolutions run channels-last inside with two im2col layouts; both
must agree with the loop reference of test_module_ops, whatever the input's memory layout.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_module_ops import naive_conv2d

from burn_ndarray import NdArray
from burn_ndarray.ops import conv, pool
from burn_ndarray.ops.windows import channels_last

I32, I64 = np.dtype(np.int32), np.dtype(np.int64)

# (x shape, kernel, stride, padding, dilation)
POOL = [
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1)),  # the common case
    ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0), (1, 1)),  # odd edges dropped
    ((1, 4, 9, 8), (3, 3), (2, 2), (1, 1), (1, 1)),  # overlapping windows, padding
    ((2, 2, 7, 9), (2, 3), (3, 3), (1, 1), (1, 1)),  # stride > kernel, padding
    ((1, 3, 9, 9), (2, 2), (3, 3), (0, 1), (2, 2)),  # dilated, still disjoint
    ((1, 2, 7, 7), (2, 2), (1, 1), (0, 0), (2, 2)),  # dilated, overlapping
    ((1, 2, 1, 11), (1, 3), (1, 3), (0, 1), (1, 1)),  # a 1-D pooling as 2-D
    ((1, 1, 5, 5), (5, 5), (5, 5), (0, 0), (1, 1)),  # one window
]


def _layouts(x: np.ndarray) -> list[np.ndarray]:
    """`x` as NCHW memory, as NHWC memory (as a conv2d output is) and as a strided view."""
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    strided = np.repeat(x, 2, axis=3)[..., ::2]
    return [np.ascontiguousarray(x), nhwc, strided]


def _tied(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """Few distinct values, -inf and both zeros included: most windows hold ties."""
    values = np.array([-np.inf, -1.0, -0.0, 0.0, 2.0], dtype=dtype)
    return values[rng.integers(0, len(values), shape)]


@pytest.mark.parametrize("case", POOL, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["normal", "tied"])
def test_max_pool_forward_equals_argmax_path(
    rng: np.random.Generator, case: tuple, dtype: type, kind: str
) -> None:
    shape, k, s, p, d = case
    x = rng.standard_normal(shape).astype(dtype) if kind == "normal" else _tied(rng, shape, dtype)
    want_values, want_index = pool.max_pool2d_with_indices_argmax(x, k, s, p, d, I64)
    for layout in _layouts(x):
        for index_dtype in (I32, I64):
            values, index = pool.max_pool2d_with_indices(layout, k, s, p, d, index_dtype)
            assert index.dtype == index_dtype and values.dtype == x.dtype
            np.testing.assert_array_equal(index, want_index)
            np.testing.assert_array_equal(values, want_values)
        np.testing.assert_array_equal(pool.max_pool2d(layout, k, s, p, d), want_values)


def test_max_pool_keeps_the_channels_last_layout(rng: np.random.Generator) -> None:
    x = _layouts(rng.standard_normal((2, 4, 6, 6)))[1]
    values, index = pool.max_pool2d_with_indices(x, (2, 2), (2, 2), (0, 0), (1, 1), I64)
    assert channels_last(values) and channels_last(index)
    dx = pool.max_pool2d_backward(x, np.ones(values.shape), index, (2, 2), (2, 2), (0, 0), (1, 1))
    assert channels_last(dx)


@pytest.mark.parametrize("case", POOL[:3], ids=str)
def test_max_pool_forward_with_nan_is_the_argmax_path(rng: np.random.Generator, case: tuple) -> None:
    shape, k, s, p, d = case
    x = _tied(rng, shape, np.float64)
    x.flat[rng.choice(x.size, 5, replace=False)] = np.nan  # the first NaN of a window wins
    want_values, want_index = pool.max_pool2d_with_indices_argmax(x, k, s, p, d, I64)
    values, index = pool.max_pool2d_with_indices(x, k, s, p, d, I64)
    np.testing.assert_array_equal(index, want_index)
    np.testing.assert_array_equal(values, want_values)


@pytest.mark.parametrize("case", POOL, ids=str)
@pytest.mark.parametrize("grad_kind", ["normal", "non-finite", "float64"])
def test_max_pool_backward_equals_scatter(rng: np.random.Generator, case: tuple, grad_kind: str) -> None:
    shape, k, s, p, d = case
    x = _tied(rng, shape, np.float32)
    _, index = pool.max_pool2d_with_indices_argmax(x, k, s, p, d, I64)
    g = rng.standard_normal(index.shape).astype(np.float64 if grad_kind == "float64" else np.float32)
    if grad_kind == "non-finite":
        g.flat[:3] = [np.inf, np.nan, -np.inf]
    want = pool.max_pool2d_backward_scatter(x, g, index)
    for layout in _layouts(x):
        for grad in _layouts(g):
            got = pool.max_pool2d_backward(layout, grad, index, k, s, p, d)
            assert got.dtype == x.dtype and got.shape == x.shape
            np.testing.assert_array_equal(got, want)


# (n, c, h, w, o, kernel, stride, padding, dilation, groups): both im2col layouts, groups.
CONV = [
    (2, 1, 9, 9, 4, (3, 3), (1, 1), (0, 0), (1, 1), 1),  # C < OW: transposed columns
    (2, 8, 6, 6, 5, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # C > OW: channels-innermost columns
    (1, 3, 9, 8, 6, (3, 2), (2, 1), (1, 0), (1, 2), 3),  # depthwise-like, strided, dilated
    (2, 4, 10, 11, 6, (2, 3), (1, 1), (2, 1), (2, 1), 2),  # groups, transposed columns
    (1, 6, 7, 7, 4, (3, 3), (2, 2), (1, 1), (1, 1), 2),  # groups, stride 2
]


@pytest.mark.parametrize("case", CONV, ids=str)
def test_conv2d_and_gradients_in_every_layout(B64: NdArray, rng: np.random.Generator, case: tuple) -> None:
    n, c, h, w, o, k, s, p, d, g = case
    x = rng.standard_normal((n, c, h, w))
    wt = rng.standard_normal((o, c // g, *k))
    b = rng.standard_normal(o)
    want = naive_conv2d(x, wt, b, s, p, d, g)
    gy = rng.standard_normal(want.shape)
    dx0 = conv.conv2d_x_backward(x, wt, gy, s, p, d, g)
    dw0 = conv.conv2d_weight_backward(x, wt, gy, s, p, d, g)
    inner = np.sum((want - b.reshape(-1, 1, 1)) * gy)
    np.testing.assert_allclose(np.sum(x * dx0), inner, rtol=1e-10)
    np.testing.assert_allclose(np.sum(wt * dw0), inner, rtol=1e-10)
    for layout in _layouts(x):
        out = B64.conv2d(layout, wt, b, s, p, d, g)
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
        assert channels_last(out) or o == 1
        for grad in _layouts(gy):
            np.testing.assert_allclose(conv.conv2d_x_backward(layout, wt, grad, s, p, d, g), dx0, atol=1e-12)
            np.testing.assert_allclose(
                conv.conv2d_weight_backward(layout, wt, grad, s, p, d, g), dw0, atol=1e-12
            )


def test_conv2d_float32_and_mixed_dtypes(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 8, 8))
    wt = rng.standard_normal((4, 3, 3, 3))
    b = rng.standard_normal(4)
    want = naive_conv2d(x, wt, b, (1, 1), (1, 1), (1, 1), 1)
    out = conv.conv2d(
        x.astype(np.float32), wt.astype(np.float32), b.astype(np.float32), (1, 1), (1, 1), (1, 1), 1
    )
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    mixed = conv.conv2d(x.astype(np.float32), wt, None, (1, 1), (1, 1), (1, 1), 1)
    assert mixed.dtype == np.float64
    np.testing.assert_allclose(mixed, want - b.reshape(-1, 1, 1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(0, 3, 5, 5), (2, 3, 2, 5)], ids=str)
def test_conv2d_empty_batch_or_output(shape: tuple[int, ...]) -> None:
    x, w, b = np.zeros(shape), np.ones((4, 3, 3, 3)), np.ones(4)
    out = conv.conv2d(x, w, b, (1, 1), (0, 0), (1, 1), 1)
    assert out.shape == (shape[0], 4, shape[2] - 2, 3)
    g = np.ones(out.shape)
    assert conv.conv2d_x_backward(x, w, g, (1, 1), (0, 0), (1, 1), 1).shape == shape
    np.testing.assert_array_equal(conv.conv2d_weight_backward(x, w, g, (1, 1), (0, 0), (1, 1), 1), 0)
