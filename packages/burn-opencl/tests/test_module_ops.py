"""Module ops against direct NumPy references: grouped/strided/dilated conv and its gradients,
transposed conv, pooling, interpolation, embedding, softmax."""

from __future__ import annotations

import numpy as np
import pytest


def conv2d_ref(x, w, stride, padding, dilation, groups):
    N, C, H, W = x.shape
    Co, Cg, KH, KW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    OH = (H + 2 * padding[0] - dilation[0] * (KH - 1) - 1) // stride[0] + 1
    OW = (W + 2 * padding[1] - dilation[1] * (KW - 1) - 1) // stride[1] + 1
    out = np.zeros((N, Co, OH, OW))
    per = Co // groups
    for o in range(Co):
        g = o // per
        for i in range(OH):
            for j in range(OW):
                patch = xp[
                    :,
                    g * Cg : (g + 1) * Cg,
                    i * stride[0] : i * stride[0] + dilation[0] * (KH - 1) + 1 : dilation[0],
                    j * stride[1] : j * stride[1] + dilation[1] * (KW - 1) + 1 : dilation[1],
                ]
                out[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    return out


@pytest.mark.parametrize(
    "stride,padding,dilation,groups", [((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 2), 2)]
)
def test_conv2d_and_gradients(B, up, down, rng, stride, padding, dilation, groups):
    x = rng.standard_normal((2, 4, 7, 8))
    w = rng.standard_normal((6, 4 // groups, 3, 2))
    bias = rng.standard_normal(6)
    out = down(B.conv2d(up(x), up(w), up(bias), stride, padding, dilation, groups))
    ref = conv2d_ref(x, w, stride, padding, dilation, groups) + bias[None, :, None, None]
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-10)
    # Gradients checked through linearity: <grad, dx> equals conv(x + dx) - conv(x) contracted with grad.
    g = rng.standard_normal(ref.shape)
    dx = down(B.conv2d_x_backward(up(x), up(w), up(g), stride, padding, dilation, groups))
    dw = down(B.conv2d_weight_backward(up(x), up(w), up(g), stride, padding, dilation, groups))
    ex, ew_ = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    np.testing.assert_allclose(
        (dx * ex).sum(), (g * conv2d_ref(ex, w, stride, padding, dilation, groups)).sum()
    )
    np.testing.assert_allclose(
        (dw * ew_).sum(), (g * conv2d_ref(x, ew_, stride, padding, dilation, groups)).sum()
    )


def test_conv_transpose2d_is_adjoint_of_conv2d(B, up, down, rng):
    stride, padding, dilation, groups = (2, 2), (1, 0), (1, 1), 2
    x = rng.standard_normal((2, 4, 4, 3))  # transposed-conv input
    w = rng.standard_normal((4, 3, 3, 3))  # [C_in, C_out / groups, KH, KW]
    out = down(B.conv_transpose2d(up(x), up(w), None, stride, padding, (1, 0), dilation, groups))
    assert out.shape == (2, 6, 8, 7)
    y = rng.standard_normal(out.shape)
    # <conv_transpose(x), y> == <x, conv2d(y)> with the same weight.
    np.testing.assert_allclose(
        (out * y).sum(), (x * conv2d_ref(y, w, stride, padding, dilation, groups)).sum()
    )
    gw = down(
        B.conv_transpose2d_weight_backward(up(x), up(w), up(y), stride, padding, (1, 0), dilation, groups)
    )
    e = rng.standard_normal(w.shape)
    moved = down(B.conv_transpose2d(up(x), up(e), None, stride, padding, (1, 0), dilation, groups))
    np.testing.assert_allclose((gw * e).sum(), (moved * y).sum())


def test_conv1d(B, up, down, rng):
    x = rng.standard_normal((2, 3, 10))
    w = rng.standard_normal((5, 3, 3))
    out = down(B.conv1d(up(x), up(w), None, 2, 1, 1, 1))
    ref = conv2d_ref(x[:, :, None], w[:, :, None], (1, 2), (0, 1), (1, 1), 1)[:, :, 0]
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)


def test_max_pool_with_indices_and_backward(B, up, down, rng):
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    out, idx = B.max_pool2d_with_indices(up(x), (3, 2), (2, 2), (1, 0), (1, 1))
    out, idx = down(out), down(idx)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)), constant_values=-np.inf)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            win = xp[0, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 2].reshape(2, -1)
            np.testing.assert_array_equal(out[0, :, i, j], win.max(1))
    flat = x.reshape(2, -1)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, idx.reshape(2, -1), 1).reshape(out.shape[1:]), out[0]
    )
    g = np.ones_like(out)
    gx = down(B.max_pool2d_with_indices_backward(up(x), (3, 2), (2, 2), (1, 0), (1, 1), up(g), up(idx)))
    expect = np.zeros_like(flat)
    np.add.at(expect, (np.arange(2)[:, None], idx.reshape(2, -1)), 1.0)
    np.testing.assert_array_equal(gx.reshape(2, -1), expect)


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool_and_backward(B, up, down, rng, count_include_pad):
    x = rng.standard_normal((1, 1, 5, 5))
    out = down(B.avg_pool2d(up(x), (3, 3), (2, 2), (1, 1), count_include_pad))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones_like(x), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i in range(3):
        for j in range(3):
            s = xp[0, 0, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].sum()
            n = 9 if count_include_pad else ones[0, 0, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].sum()
            assert out[0, 0, i, j] == pytest.approx(s / n)
    g = rng.standard_normal(out.shape)
    gx = down(B.avg_pool2d_backward(up(x), up(g), (3, 3), (2, 2), (1, 1), count_include_pad))
    e = rng.standard_normal(x.shape)
    moved = down(B.avg_pool2d(up(e), (3, 3), (2, 2), (1, 1), count_include_pad))
    np.testing.assert_allclose((gx * e).sum(), (g * moved).sum())


def test_adaptive_pool_and_interpolate(B, up, down, rng):
    x = rng.standard_normal((2, 3, 7, 5))
    out = down(B.adaptive_avg_pool2d(up(x), (3, 2)))
    for i in range(3):
        h0, h1 = (i * 7) // 3, -(-((i + 1) * 7) // 3)
        for j in range(2):
            w0, w1 = (j * 5) // 2, -(-((j + 1) * 5) // 2)
            np.testing.assert_allclose(out[:, :, i, j], x[:, :, h0:h1, w0:w1].mean(axis=(2, 3)))
    near = down(B.interpolate(up(x), (14, 3), "nearest", False))
    np.testing.assert_array_equal(near, x[:, :, (np.arange(14) * 7) // 14][:, :, :, (np.arange(3) * 5) // 3])
    bil = down(B.interpolate(up(x), (13, 9), "bilinear", True))
    np.testing.assert_allclose(bil[:, :, ::2, ::2], x, rtol=1e-12)  # align_corners hits the input grid
    g = rng.standard_normal(bil.shape)
    gx = down(B.interpolate_backward(up(x), up(g), (13, 9), "bilinear", True))
    e = rng.standard_normal(x.shape)
    np.testing.assert_allclose(
        (gx * e).sum(), (g * down(B.interpolate(up(e), (13, 9), "bilinear", True))).sum()
    )


def test_embedding_and_softmax(B, up, down, rng):
    w = rng.standard_normal((10, 4)).astype(np.float32)
    idx = np.array([[1, 9], [1, 0]])
    np.testing.assert_array_equal(down(B.embedding(up(w), up(idx))), w[idx])
    g = np.ones((2, 2, 4), np.float32)
    expect = np.zeros_like(w)
    np.add.at(expect, idx.reshape(-1), 1.0)
    np.testing.assert_array_equal(down(B.embedding_backward(up(w), up(g), up(idx))), expect)
    x = rng.standard_normal((3, 5)) * 50
    sm = down(B.softmax(up(x), 1))
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(sm, ref / ref.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(
        down(B.log_softmax(up(x), 1)), np.log(ref / ref.sum(1, keepdims=True)), rtol=1e-10, atol=1e-12
    )
