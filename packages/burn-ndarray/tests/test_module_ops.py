"""Module ops against naive loop implementations, adjoint identities, and torch when importable."""

from __future__ import annotations

import itertools
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from burn_ndarray import NdArray

# (N, C_in, H, W, C_out, kernel, stride, padding, dilation, groups)
CONV_CASES = [
    (2, 4, 7, 9, 6, (3, 2), (2, 1), (1, 0), (1, 2), 2),
    (1, 3, 5, 5, 3, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (2, 6, 8, 8, 6, (2, 2), (2, 2), (0, 1), (1, 1), 3),
    (1, 2, 4, 4, 4, (1, 1), (1, 1), (0, 0), (1, 1), 1),
    (1, 2, 6, 5, 2, (3, 3), (3, 2), (2, 2), (2, 1), 2),
]


def naive_conv2d(x, w, b, stride, padding, dilation, groups):  # type: ignore[no-untyped-def]
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for bi, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // og
        for ci, ki, kj in itertools.product(range(cg), range(kh), range(kw)):
            out[bi, oc, i, j] += (
                w[oc, ci, ki, kj]
                * xp[bi, g * cg + ci, i * stride[0] + ki * dilation[0], j * stride[1] + kj * dilation[1]]
            )
    return out + (0 if b is None else b.reshape(-1, 1, 1))


def naive_conv_transpose2d(x, w, b, stride, padding, padding_out, dilation, groups):  # type: ignore[no-untyped-def]
    n, cin, h, wd = x.shape
    _, og, kh, kw = w.shape
    ig = cin // groups
    full = (
        (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + padding_out[0],
        (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + padding_out[1],
    )
    out = np.zeros((n, og * groups) + full)
    for bi, ci, i, j, co, ki, kj in itertools.product(
        range(n), range(cin), range(h), range(wd), range(og), range(kh), range(kw)
    ):
        g = ci // ig
        out[bi, g * og + co, i * stride[0] + ki * dilation[0], j * stride[1] + kj * dilation[1]] += (
            x[bi, ci, i, j] * w[ci, co, ki, kj]
        )
    oh = full[0] - padding_out[0] - 2 * padding[0] + padding_out[0]
    ow = full[1] - padding_out[1] - 2 * padding[1] + padding_out[1]
    out = out[:, :, padding[0] : padding[0] + oh, padding[1] : padding[1] + ow]
    return out + (0 if b is None else b.reshape(-1, 1, 1))


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_against_loops_and_its_adjoints(B64: NdArray, rng: np.random.Generator, case: tuple) -> None:
    n, c, h, w, o, k, s, p, d, g = case
    x = rng.standard_normal((n, c, h, w))
    wt = rng.standard_normal((o, c // g) + k)
    b = rng.standard_normal(o)
    out = B64.conv2d(x, wt, b, s, p, d, g)
    np.testing.assert_allclose(out, naive_conv2d(x, wt, b, s, p, d, g), rtol=1e-12, atol=1e-12)
    # Gradients are the adjoints: <conv(x, w), gy> = <x, dx(gy)> = <w, dw(gy)> (conv is bilinear).
    gy = rng.standard_normal(out.shape)
    dx = B64.conv2d_x_backward(x, wt, gy, s, p, d, g)
    dw = B64.conv2d_weight_backward(x, wt, gy, s, p, d, g)
    assert dx.shape == x.shape and dw.shape == wt.shape
    inner = np.sum(B64.conv2d(x, wt, None, s, p, d, g) * gy)
    np.testing.assert_allclose(np.sum(x * dx), inner, rtol=1e-10)
    np.testing.assert_allclose(np.sum(wt * dw), inner, rtol=1e-10)


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("padding_out", [(0, 0), (1, 0)])
def test_conv_transpose2d_against_loops_and_adjoints(
    B64: NdArray, rng: np.random.Generator, case: tuple, padding_out: tuple[int, int]
) -> None:
    n, c, h, w, o, k, s, p, d, g = case
    if padding_out[0] >= max(s[0], d[0]):
        pytest.skip("output padding must be smaller than stride or dilation")
    x = rng.standard_normal((n, c, h, w))
    wt = rng.standard_normal((c, o // g) + k)
    b = rng.standard_normal(o)
    out = B64.conv_transpose2d(x, wt, b, s, p, padding_out, d, g)
    np.testing.assert_allclose(
        out, naive_conv_transpose2d(x, wt, b, s, p, padding_out, d, g), rtol=1e-12, atol=1e-12
    )
    gy = rng.standard_normal(out.shape)
    dx = B64.conv_transpose2d_x_backward(x, wt, gy, s, p, padding_out, d, g)
    dw = B64.conv_transpose2d_weight_backward(x, wt, gy, s, p, padding_out, d, g)
    assert dx.shape == x.shape and dw.shape == wt.shape
    inner = np.sum(B64.conv_transpose2d(x, wt, None, s, p, padding_out, d, g) * gy)
    np.testing.assert_allclose(np.sum(x * dx), inner, rtol=1e-10)
    np.testing.assert_allclose(np.sum(wt * dw), inner, rtol=1e-10)


def test_conv1d_is_conv2d_with_height_one(B64: NdArray, rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 4, 11))
    w = rng.standard_normal((6, 2, 3))
    b = rng.standard_normal(6)
    got = B64.conv1d(x, w, b, 2, 1, 2, 2)
    want = naive_conv2d(x[:, :, None], w[:, :, None], b, (1, 2), (0, 1), (1, 2), 2)[:, :, 0]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_conv_dtypes_and_non_contiguous_inputs(B: NdArray, rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    ref = naive_conv2d(x.astype(np.float64), w.astype(np.float64), None, (1, 1), (1, 1), (1, 1), 1)
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)  # same values, other strides
    cases: list[tuple[Any, Any, float]] = [
        (x, w, 1e-5),
        (xt, w[:, :, ::-1, ::-1][:, :, ::-1, ::-1], 1e-5),
        (x.astype(np.float16), w.astype(np.float16), 2e-2),
        (x.astype(ml_dtypes.bfloat16), w.astype(ml_dtypes.bfloat16), 1e-1),
    ]
    for xs, ws, tol in cases:
        got = B.conv2d(xs, ws, None, (1, 1), (1, 1), (1, 1), 1)
        assert got.dtype == xs.dtype
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol * 5)


def naive_max_pool2d(x, k, s, p, d):  # type: ignore[no-untyped-def]
    n, c, h, w = x.shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.full((n, c, oh, ow), -np.inf)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for bi, ci, i, j, ki, kj in itertools.product(
        range(n), range(c), range(oh), range(ow), range(k[0]), range(k[1])
    ):
        r, q = i * s[0] - p[0] + ki * d[0], j * s[1] - p[1] + kj * d[1]
        if 0 <= r < h and 0 <= q < w and x[bi, ci, r, q] > out[bi, ci, i, j]:
            out[bi, ci, i, j] = x[bi, ci, r, q]
            idx[bi, ci, i, j] = r * w + q
    return out, idx


def naive_avg_pool2d(x, k, s, p, count_include_pad):  # type: ignore[no-untyped-def]
    n, c, h, w = x.shape
    oh = (h + 2 * p[0] - k[0]) // s[0] + 1
    ow = (w + 2 * p[1] - k[1]) // s[1] + 1
    out = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        r0, q0 = i * s[0] - p[0], j * s[1] - p[1]
        rows = slice(max(r0, 0), min(r0 + k[0], h))
        cols = slice(max(q0, 0), min(q0 + k[1], w))
        total = x[:, :, rows, cols].sum(axis=(2, 3))
        count = k[0] * k[1] if count_include_pad else (rows.stop - rows.start) * (cols.stop - cols.start)
        out[:, :, i, j] = total / count
    return out


POOL_CASES = [
    ((3, 3), (2, 2), (1, 1), (1, 1)),
    ((2, 3), (1, 2), (0, 1), (2, 1)),
    ((2, 2), (2, 2), (0, 0), (1, 1)),
]


@pytest.mark.parametrize("k, s, p, d", POOL_CASES)
def test_max_pool2d_with_indices_and_backward(B64: NdArray, rng: np.random.Generator, k, s, p, d) -> None:  # type: ignore[no-untyped-def]
    x = rng.standard_normal((2, 3, 9, 8))
    want, want_idx = naive_max_pool2d(x, k, s, p, d)
    np.testing.assert_array_equal(B64.max_pool2d(x, k, s, p, d), want)
    values, indices = B64.max_pool2d_with_indices(x, k, s, p, d)
    np.testing.assert_array_equal(values, want)
    np.testing.assert_array_equal(indices, want_idx)
    assert indices.dtype == np.int32  # the backend's int dtype
    gy = rng.standard_normal(want.shape)
    dx = B64.max_pool2d_with_indices_backward(x, k, s, p, d, gy, indices)
    ref = np.zeros(x.shape)
    for bi, ci, i, j in np.ndindex(*want.shape):
        ref[bi, ci].flat[want_idx[bi, ci, i, j]] += gy[bi, ci, i, j]
    np.testing.assert_allclose(dx, ref, rtol=1e-12)


@pytest.mark.parametrize(
    "k, s, p", [((3, 3), (2, 2), (1, 1)), ((2, 3), (1, 2), (0, 1)), ((2, 2), (2, 2), (1, 0))]
)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_and_adjoint(B64: NdArray, rng: np.random.Generator, k, s, p, count_include_pad) -> None:  # type: ignore[no-untyped-def]
    x = rng.standard_normal((2, 3, 9, 8))
    out = B64.avg_pool2d(x, k, s, p, count_include_pad)
    np.testing.assert_allclose(out, naive_avg_pool2d(x, k, s, p, count_include_pad), rtol=1e-12)
    gy = rng.standard_normal(out.shape)
    dx = B64.avg_pool2d_backward(x, gy, k, s, p, count_include_pad)
    np.testing.assert_allclose(np.sum(dx * x), np.sum(out * gy), rtol=1e-10)  # linear: adjoint identity


def test_pool1d(B64: NdArray, rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 11))
    want, want_idx = naive_max_pool2d(x[:, :, None], (1, 3), (1, 2), (0, 1), (1, 2))
    np.testing.assert_array_equal(B64.max_pool1d(x, 3, 2, 1, 2), want[:, :, 0])
    values, indices = B64.max_pool1d_with_indices(x, 3, 2, 1, 2)
    np.testing.assert_array_equal(values, want[:, :, 0])
    np.testing.assert_array_equal(indices, want_idx[:, :, 0])
    np.testing.assert_allclose(
        B64.avg_pool1d(x, 3, 2, 1, False),
        naive_avg_pool2d(x[:, :, None], (1, 3), (1, 2), (0, 1), False)[:, :, 0],
        rtol=1e-12,
    )
    ada = B64.adaptive_avg_pool1d(x, 4)
    bins = [(0, 3), (2, 6), (5, 9), (8, 11)]  # floor(i*11/4) .. ceil((i+1)*11/4)
    np.testing.assert_allclose(ada, np.stack([x[:, :, a:b].mean(2) for a, b in bins], 2), rtol=1e-12)


@pytest.mark.parametrize("out", [(3, 4), (5, 7), (9, 8), (1, 1), (12, 10)])
def test_adaptive_avg_pool2d_against_bins(
    B64: NdArray, rng: np.random.Generator, out: tuple[int, int]
) -> None:
    x = rng.standard_normal((2, 3, 9, 8))
    want = np.zeros((2, 3) + out)
    for i, j in np.ndindex(*out):
        r0, r1 = (i * 9) // out[0], -((-(i + 1) * 9) // out[0])
        c0, c1 = (j * 8) // out[1], -((-(j + 1) * 8) // out[1])
        want[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    got = B64.adaptive_avg_pool2d(x, out)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    gy = rng.standard_normal(got.shape)
    dx = B64.adaptive_avg_pool2d_backward(x, gy)
    np.testing.assert_allclose(np.sum(dx * x), np.sum(got * gy), rtol=1e-10)


def naive_bilinear(x, out, align_corners):  # type: ignore[no-untyped-def]
    h, w = x.shape[2:]

    def src(i, size, o):  # type: ignore[no-untyped-def]
        if align_corners:
            return i * (size - 1) / (o - 1) if o > 1 else 0.0
        return max((i + 0.5) * size / o - 0.5, 0.0)

    res = np.zeros(x.shape[:2] + out)
    for i, j in np.ndindex(*out):
        sy, sx = src(i, h, out[0]), src(j, w, out[1])
        y0, x0 = min(int(sy), h - 1), min(int(sx), w - 1)
        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
        ly, lx = sy - y0, sx - x0
        res[:, :, i, j] = (1 - ly) * ((1 - lx) * x[:, :, y0, x0] + lx * x[:, :, y0, x1]) + ly * (
            (1 - lx) * x[:, :, y1, x0] + lx * x[:, :, y1, x1]
        )
    return res


@pytest.mark.parametrize("out", [(5, 7), (18, 16), (4, 3), (1, 1), (9, 8)])
def test_interpolate_and_adjoint(B64: NdArray, rng: np.random.Generator, out: tuple[int, int]) -> None:
    x = rng.standard_normal((2, 3, 9, 8))
    nearest = B64.interpolate(x, out, "nearest", False)
    rows, cols = (np.arange(out[0]) * 9) // out[0], (np.arange(out[1]) * 8) // out[1]
    np.testing.assert_array_equal(nearest, x[:, :, rows][:, :, :, cols])
    modes = [("nearest", False), ("bilinear", False), ("bilinear", True), ("nearest-exact", False),
             ("bicubic", False), ("bicubic", True)]  # fmt: skip
    for mode, ac in modes:
        got = B64.interpolate(x, out, mode, ac)
        if mode == "bilinear":
            np.testing.assert_allclose(got, naive_bilinear(x, out, ac), rtol=1e-12, atol=1e-12)
        gy = rng.standard_normal(got.shape)
        dx = B64.interpolate_backward(x, gy, out, mode, ac)
        assert dx.shape == x.shape
        np.testing.assert_allclose(np.sum(dx * x), np.sum(got * gy), rtol=1e-10)
    with pytest.raises(ValueError, match="'area'"):
        B64.interpolate(x, out, "area", False)  # type: ignore[arg-type]


def test_embedding_and_backward(B: NdArray, rng: np.random.Generator) -> None:
    weights = rng.standard_normal((10, 4)).astype(np.float32)
    idx = np.array([[1, 3, 1], [9, 1, 0]])
    np.testing.assert_array_equal(B.embedding(weights, idx), weights[idx])
    gy = rng.standard_normal((2, 3, 4)).astype(np.float32)
    dw = B.embedding_backward(weights, gy, idx)
    ref = np.zeros((10, 4))
    for pos in np.ndindex(*idx.shape):
        ref[idx[pos]] += gy[pos]
    assert dw.dtype == np.float32
    np.testing.assert_allclose(dw, ref, rtol=1e-6)
    with pytest.raises(IndexError, match="embedding_backward"):
        B.embedding_backward(weights, gy, idx + 5)


def test_against_torch_when_available(B64: NdArray, rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rng.standard_normal((2, 4, 7, 9))
    w = rng.standard_normal((6, 2, 3, 2))
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    out = F.conv2d(tx, tw, None, (2, 1), (1, 0), (1, 2), 2)
    gy = rng.standard_normal(out.shape)
    out.backward(torch.tensor(gy))
    np.testing.assert_allclose(
        B64.conv2d(x, w, None, (2, 1), (1, 0), (1, 2), 2), out.detach().numpy(), rtol=1e-10
    )
    np.testing.assert_allclose(
        B64.conv2d_x_backward(x, w, gy, (2, 1), (1, 0), (1, 2), 2), tx.grad.numpy(), rtol=1e-10
    )
    np.testing.assert_allclose(
        B64.conv2d_weight_backward(x, w, gy, (2, 1), (1, 0), (1, 2), 2), tw.grad.numpy(), rtol=1e-10
    )
    wt = rng.standard_normal((4, 3, 3, 3))
    ref = F.conv_transpose2d(torch.tensor(x), torch.tensor(wt), None, 2, 1, 1, 2, 1)
    np.testing.assert_allclose(
        B64.conv_transpose2d(x, wt, None, (2, 2), (1, 1), (1, 1), (1, 1), 2), ref.numpy(), rtol=1e-10
    )
    _, idx = F.max_pool2d(torch.tensor(x), 3, 2, 1, 1, return_indices=True)
    np.testing.assert_array_equal(
        B64.max_pool2d_with_indices(x, (3, 3), (2, 2), (1, 1), (1, 1))[1], idx.numpy()
    )
    for size in [(5, 7), (14, 20)]:
        for ac in (False, True):
            ref = F.interpolate(torch.tensor(x), size=size, mode="bilinear", align_corners=ac)
            np.testing.assert_allclose(
                B64.interpolate(x, size, "bilinear", ac), ref.numpy(), rtol=1e-10, atol=1e-12
            )
        ref = F.interpolate(torch.tensor(x), size=size, mode="nearest")
        np.testing.assert_array_equal(B64.interpolate(x, size, "nearest", False), ref.numpy())
    ref = F.adaptive_avg_pool2d(torch.tensor(x), (3, 4))
    np.testing.assert_allclose(B64.adaptive_avg_pool2d(x, (3, 4)), ref.numpy(), rtol=1e-12)
