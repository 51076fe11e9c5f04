"""The default module ops of burn-core (convolution, pooling, embedding, interpolation and their
backward helpers), run on backends where they are not overridden (see `_defaults_harness`).

References: naive NumPy loops written here (independent of the im2col/col2im code under test),
`torch.nn.functional` with autograd where torch is installed, and adjoint (dot-product) identities
``<A x, y> == <x, A^T y>`` that tie every backward helper to its forward op.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from _defaults_harness import BACKENDS, Ops, make_ops

from burn.foundations.dtype import DType

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - torch is an optional reference
    torch = None
    F = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (optional reference)")
RTOL, ATOL = 1e-10, 1e-11


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def ops(request: pytest.FixtureRequest) -> Ops:
    return make_ops(request.param)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def close(actual: np.ndarray, expected: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> None:
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def t(array: np.ndarray, grad: bool = False) -> torch.Tensor:
    return torch.tensor(array, dtype=torch.float64, requires_grad=grad)


# -- naive references (loops over output pixels: fine for tiny test sizes only) ------------------
def ref_conv2d(x, w, b, stride, padding, dilation, groups):
    n, _, h, wd = x.shape
    c_out, c_in_g, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c_out, oh, ow))
    c_out_g = c_out // groups
    for co in range(c_out):
        g = co // c_out_g
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * c_in_g:(g + 1) * c_in_g,
                           i * sh:i * sh + dh * (kh - 1) + 1:dh, j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, co, i, j] = (patch * w[co]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


def ref_conv_transpose2d(x, w, b, stride, padding, padding_out, dilation, groups):
    n, c_in, h, wd = x.shape
    _, c_out_g, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    c_in_g = c_in // groups
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + padding_out[0] + 1
    ow = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + padding_out[1] + 1
    full = np.zeros((n, c_out_g * groups, oh + 2 * ph, ow + 2 * pw))
    for ci, i, j, a, c in itertools.product(range(c_in), range(h), range(wd), range(kh), range(kw)):
        g = ci // c_in_g
        full[:, g * c_out_g:(g + 1) * c_out_g, i * sh + a * dh, j * sw + c * dw] += (
            x[:, ci, i, j][:, None] * w[ci, :, a, c][None, :]
        )
    out = full[:, :, ph:ph + oh, pw:pw + ow]
    if b is not None:
        out = out + b[None, :, None, None]
    return out


def ref_max_pool2d(x, kernel, stride, padding, dilation):
    """PyTorch's rule: scan valid positions in kernel order, keep the first maximum."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.full((n, c, oh, ow), -np.inf)
    idx = np.zeros((n, c, oh, ow), dtype=np.int64)
    for b_, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        best, arg = -np.inf, None
        for a, e in itertools.product(range(kh), range(kw)):
            r, q = i * sh - ph + a * dh, j * sw - pw + e * dw
            if 0 <= r < h and 0 <= q < w:
                if arg is None:
                    arg = r * w + q
                if x[b_, ch, r, q] > best:
                    best, arg = x[b_, ch, r, q], r * w + q
        out[b_, ch, i, j], idx[b_, ch, i, j] = best, arg
    return out, idx


def ref_avg_pool2d(x, kernel, stride, padding, count_include_pad):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    oh = (h + 2 * ph - kh) // sh + 1
    ow = (w + 2 * pw - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        r0, q0 = i * sh - ph, j * sw - pw
        rows = [r for r in range(r0, r0 + kh) if 0 <= r < h]
        cols = [q for q in range(q0, q0 + kw) if 0 <= q < w]
        total = x[:, :, rows][:, :, :, cols].sum(axis=(2, 3))
        out[:, :, i, j] = total / (kh * kw if count_include_pad else len(rows) * len(cols))
    return out


def ref_adaptive_avg_pool2d(x, out):
    n, c, h, w = x.shape
    res = np.zeros((n, c, *out))
    for i, j in itertools.product(range(out[0]), range(out[1])):
        r0, r1 = math.floor(i * h / out[0]), math.ceil((i + 1) * h / out[0])
        q0, q1 = math.floor(j * w / out[1]), math.ceil((j + 1) * w / out[1])
        res[:, :, i, j] = x[:, :, r0:r1, q0:q1].mean(axis=(2, 3))
    return res


def ref_bilinear(x, out, align_corners):
    n, c, h, w = x.shape

    def source(j: int, size: int, o: int) -> tuple[int, int, float]:
        if align_corners:
            s = j * (size - 1) / (o - 1) if o > 1 else 0.0
        else:
            s = max((j + 0.5) * size / o - 0.5, 0.0)
        i0 = min(math.floor(s), size - 1)
        return i0, min(i0 + 1, size - 1), s - i0

    res = np.zeros((n, c, *out))
    for i, j in itertools.product(range(out[0]), range(out[1])):
        r0, r1, lr = source(i, h, out[0])
        q0, q1, lq = source(j, w, out[1])
        res[:, :, i, j] = ((1 - lr) * ((1 - lq) * x[:, :, r0, q0] + lq * x[:, :, r0, q1])
                           + lr * ((1 - lq) * x[:, :, r1, q0] + lq * x[:, :, r1, q1]))
    return res


# -- convolution --------------------------------------------------------------------------------
# (N, C_in, H, W, C_out, KH, KW, stride, padding, dilation, groups)
CONV_CASES = [
    (1, 1, 5, 5, 1, 3, 3, (1, 1), (0, 0), (1, 1), 1),
    (2, 3, 7, 6, 4, 3, 2, (2, 1), (1, 0), (1, 1), 1),
    (3, 4, 9, 8, 6, 2, 3, (1, 2), (1, 2), (2, 1), 2),
    (2, 6, 11, 7, 3, 3, 3, (3, 2), (2, 1), (2, 3), 3),
    (1, 4, 5, 4, 8, 1, 1, (1, 1), (0, 0), (1, 1), 4),
    (2, 3, 4, 4, 2, 4, 4, (1, 1), (0, 0), (1, 1), 1),
    (1, 2, 8, 5, 2, 5, 1, (2, 3), (2, 0), (1, 1), 2),
    (2, 2, 6, 9, 4, 2, 2, (4, 3), (1, 1), (3, 2), 1),
]


def _conv_inputs(rng, case, bias=True):
    n, c_in, h, w, c_out, kh, kw, stride, padding, dilation, groups = case
    x = rng.standard_normal((n, c_in, h, w))
    weight = rng.standard_normal((c_out, c_in // groups, kh, kw))
    b = rng.standard_normal(c_out) if bias else None
    return x, weight, b, stride, padding, dilation, groups


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_matches_naive(ops, rng, case):
    x, w, b, stride, padding, dilation, groups = _conv_inputs(rng, case, bias=case[0] != 1)
    got = ops.conv2d(ops.f(x), ops.f(w), None if b is None else ops.f(b), stride, padding, dilation, groups)
    close(ops.a(got), ref_conv2d(x, w, b, stride, padding, dilation, groups))


@needs_torch
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_and_backward_match_torch(ops, rng, case):
    x, w, b, stride, padding, dilation, groups = _conv_inputs(rng, case)
    tx, tw = t(x, True), t(w, True)
    ty = F.conv2d(tx, tw, t(b), stride, padding, dilation, groups)
    gy = rng.standard_normal(tuple(ty.shape))
    ty.backward(t(gy))
    got = ops.conv2d(ops.f(x), ops.f(w), ops.f(b), stride, padding, dilation, groups)
    close(ops.a(got), ty.detach().numpy())
    args = (ops.f(x), ops.f(w), ops.f(gy), stride, padding, dilation, groups)
    close(ops.a(ops.conv2d_x_backward(*args)), tx.grad.numpy())
    close(ops.a(ops.conv2d_weight_backward(*args)), tw.grad.numpy())


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_backward_is_adjoint(ops, rng, case):
    """<conv(x, w), gy> is bilinear: its gradients are the two backward helpers."""
    x, w, _, stride, padding, dilation, groups = _conv_inputs(rng, case, bias=False)
    y = ref_conv2d(x, w, None, stride, padding, dilation, groups)
    gy = rng.standard_normal(y.shape)
    args = (ops.f(x), ops.f(w), ops.f(gy), stride, padding, dilation, groups)
    dx, dw = ops.a(ops.conv2d_x_backward(*args)), ops.a(ops.conv2d_weight_backward(*args))
    assert dx.shape == x.shape and dw.shape == w.shape
    total = float((y * gy).sum())
    assert math.isclose(float((x * dx).sum()), total, rel_tol=1e-10)
    assert math.isclose(float((w * dw).sum()), total, rel_tol=1e-10)


def test_conv1d_matches_naive(ops, rng):
    for n, c_in, length, c_out, k, stride, padding, dilation, groups in [
        (1, 1, 9, 1, 3, 1, 0, 1, 1), (2, 4, 13, 6, 3, 2, 2, 2, 2), (3, 3, 8, 3, 4, 3, 1, 1, 3),
    ]:
        x = rng.standard_normal((n, c_in, length))
        w = rng.standard_normal((c_out, c_in // groups, k))
        b = rng.standard_normal(c_out)
        got = ops.a(ops.conv1d(ops.f(x), ops.f(w), ops.f(b), stride, padding, dilation, groups))
        want = ref_conv2d(x[:, :, None], w[:, :, None], b, (1, stride), (0, padding), (1, dilation), groups)
        want = want[:, :, 0]
        close(got, want)
        if torch is not None:
            close(got, F.conv1d(t(x), t(w), t(b), stride, padding, dilation, groups).numpy())


def test_conv2d_rejects_mismatched_channels(ops, rng):
    x = ops.f(rng.standard_normal((1, 4, 5, 5)))
    with pytest.raises(ValueError, match=r"conv2d.*\(1, 4, 5, 5\).*\(2, 3, 3, 3\)"):
        ops.conv2d(x, ops.f(rng.standard_normal((2, 3, 3, 3))), None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(ValueError, match="empty output"):
        ops.conv2d(x, ops.f(rng.standard_normal((2, 4, 7, 3))), None, (1, 1), (0, 0), (1, 1), 1)


# (N, C_in, H, W, C_out, KH, KW, stride, padding, padding_out, dilation, groups)
CONV_T_CASES = [
    (1, 1, 4, 4, 1, 3, 3, (1, 1), (0, 0), (0, 0), (1, 1), 1),
    (2, 3, 5, 4, 2, 3, 2, (2, 1), (1, 0), (1, 0), (1, 1), 1),
    (2, 4, 3, 5, 6, 2, 3, (2, 3), (0, 1), (0, 2), (1, 2), 2),
    (1, 6, 4, 3, 3, 3, 3, (3, 2), (2, 1), (2, 1), (2, 2), 3),
    (3, 2, 3, 3, 4, 1, 1, (2, 2), (0, 0), (1, 1), (1, 1), 1),
    (2, 4, 5, 6, 4, 4, 2, (1, 2), (3, 1), (0, 1), (1, 1), 4),
]


def _conv_t_inputs(rng, case):
    n, c_in, h, w, c_out, kh, kw, stride, padding, padding_out, dilation, groups = case
    x = rng.standard_normal((n, c_in, h, w))
    weight = rng.standard_normal((c_in, c_out // groups, kh, kw))
    return x, weight, rng.standard_normal(c_out), stride, padding, padding_out, dilation, groups


@pytest.mark.parametrize("case", CONV_T_CASES)
def test_conv_transpose2d_matches_naive_and_adjoint(ops, rng, case):
    x, w, b, stride, padding, padding_out, dilation, groups = _conv_t_inputs(rng, case)
    got = ops.conv_transpose2d(ops.f(x), ops.f(w), ops.f(b), stride, padding, padding_out, dilation, groups)
    got = ops.a(got)
    close(got, ref_conv_transpose2d(x, w, b, stride, padding, padding_out, dilation, groups))
    y = ref_conv_transpose2d(x, w, None, stride, padding, padding_out, dilation, groups)
    gy = rng.standard_normal(y.shape)
    args = (ops.f(x), ops.f(w), ops.f(gy), stride, padding, padding_out, dilation, groups)
    dx = ops.a(ops.conv_transpose2d_x_backward(*args))
    dw = ops.a(ops.conv_transpose2d_weight_backward(*args))
    assert dx.shape == x.shape and dw.shape == w.shape
    total = float((y * gy).sum())
    assert math.isclose(float((x * dx).sum()), total, rel_tol=1e-10)
    assert math.isclose(float((w * dw).sum()), total, rel_tol=1e-10)


@needs_torch
@pytest.mark.parametrize("case", CONV_T_CASES)
def test_conv_transpose2d_and_backward_match_torch(ops, rng, case):
    x, w, b, stride, padding, padding_out, dilation, groups = _conv_t_inputs(rng, case)
    tx, tw = t(x, True), t(w, True)
    ty = F.conv_transpose2d(tx, tw, t(b), stride, padding, padding_out, groups, dilation)
    gy = rng.standard_normal(tuple(ty.shape))
    ty.backward(t(gy))
    got = ops.conv_transpose2d(ops.f(x), ops.f(w), ops.f(b), stride, padding, padding_out, dilation, groups)
    close(ops.a(got), ty.detach().numpy())
    args = (ops.f(x), ops.f(w), ops.f(gy), stride, padding, padding_out, dilation, groups)
    close(ops.a(ops.conv_transpose2d_x_backward(*args)), tx.grad.numpy())
    close(ops.a(ops.conv_transpose2d_weight_backward(*args)), tw.grad.numpy())


def test_conv2d_x_backward_restores_rows_dropped_by_stride(ops, rng):
    """H=8, K=3, stride 2: conv2d ignores the last row; its gradient there must be exactly 0."""
    x, w = rng.standard_normal((1, 2, 8, 8)), rng.standard_normal((3, 2, 3, 3))
    gy = rng.standard_normal((1, 3, 3, 3))
    dx = ops.a(ops.conv2d_x_backward(ops.f(x), ops.f(w), ops.f(gy), (2, 2), (0, 0), (1, 1), 1))
    assert dx.shape == (1, 2, 8, 8)
    assert np.all(dx[:, :, 7, :] == 0) and np.all(dx[:, :, :, 7] == 0)
    assert np.any(dx[:, :, 6, :] != 0)


# -- pooling ------------------------------------------------------------------------------------
# (N, C, H, W, kernel, stride, padding, dilation)
POOL_CASES = [
    (1, 1, 4, 4, (2, 2), (2, 2), (0, 0), (1, 1)),
    (2, 3, 7, 5, (3, 2), (2, 1), (1, 1), (1, 1)),
    (1, 2, 9, 8, (3, 3), (1, 2), (1, 0), (2, 3)),
    (3, 2, 5, 6, (2, 3), (3, 3), (1, 1), (1, 1)),
    (2, 1, 6, 7, (4, 1), (1, 1), (2, 0), (1, 1)),
]


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool2d_with_indices_matches_naive(ops, rng, case):
    n, c, h, w, kernel, stride, padding, dilation = case
    x = rng.standard_normal((n, c, h, w))
    x[0, 0, 1, :] = x[0, 0, 0, :]  # ties: the first maximum in kernel order wins
    want, want_idx = ref_max_pool2d(x, kernel, stride, padding, dilation)
    values, indices = ops.max_pool2d_with_indices(ops.f(x), kernel, stride, padding, dilation)
    close(ops.a(values), want)
    np.testing.assert_array_equal(ops.ai(indices), want_idx)
    close(ops.a(ops.max_pool2d(ops.f(x), kernel, stride, padding, dilation)), want)
    # Backward: output_grad summed into the input at the indices.
    gy = rng.standard_normal(want.shape)
    grad = ops.a(ops.max_pool2d_with_indices_backward(ops.f(x), kernel, stride, padding, dilation,
                                                       ops.f(gy), indices))
    expected = np.zeros((n, c, h * w))
    for b_, ch in itertools.product(range(n), range(c)):
        np.add.at(expected[b_, ch], want_idx[b_, ch].ravel(), gy[b_, ch].ravel())
    close(grad, expected.reshape(x.shape))


@needs_torch
@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool2d_matches_torch(ops, rng, case):
    n, c, h, w, kernel, stride, padding, dilation = case
    x = rng.standard_normal((n, c, h, w))
    tx = t(x, True)
    ty, tidx = F.max_pool2d(tx, kernel, stride, padding, dilation, return_indices=True)
    gy = rng.standard_normal(tuple(ty.shape))
    ty.backward(t(gy))
    values, indices = ops.max_pool2d_with_indices(ops.f(x), kernel, stride, padding, dilation)
    close(ops.a(values), ty.detach().numpy())
    np.testing.assert_array_equal(ops.ai(indices), tidx.numpy())
    grad = ops.max_pool2d_with_indices_backward(
        ops.f(x), kernel, stride, padding, dilation, ops.f(gy), indices
    )
    close(ops.a(grad), tx.grad.numpy())


def test_max_pool2d_all_negative_infinity_window_indexes_first_valid_element(ops):
    """PyTorch names the window's first unpadded element when everything is -inf."""
    x = np.full((1, 1, 4, 4), -np.inf)
    values, indices = ops.max_pool2d_with_indices(ops.f(x), (3, 3), (2, 2), (1, 1), (1, 1))
    assert np.all(ops.a(values) == -np.inf)
    np.testing.assert_array_equal(ops.ai(indices)[0, 0], [[0, 1], [4, 5]])
    if torch is not None:
        _, tidx = F.max_pool2d(t(x), 3, 2, 1, 1, return_indices=True)
        np.testing.assert_array_equal(ops.ai(indices), tidx.numpy())


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_and_backward(ops, rng, case, count_include_pad):
    n, c, h, w, kernel, stride, padding, _ = case
    x = rng.standard_normal((n, c, h, w))
    want = ref_avg_pool2d(x, kernel, stride, padding, count_include_pad)
    got = ops.a(ops.avg_pool2d(ops.f(x), kernel, stride, padding, count_include_pad))
    close(got, want)
    gy = rng.standard_normal(want.shape)
    dx = ops.a(ops.avg_pool2d_backward(ops.f(x), ops.f(gy), kernel, stride, padding, count_include_pad))
    assert dx.shape == x.shape
    assert math.isclose(float((x * dx).sum()), float((want * gy).sum()), rel_tol=1e-10)
    if torch is not None:
        tx = t(x, True)
        ty = F.avg_pool2d(tx, kernel, stride, padding, count_include_pad=count_include_pad)
        ty.backward(t(gy))
        close(got, ty.detach().numpy())
        close(dx, tx.grad.numpy())


@pytest.mark.parametrize(("size", "out"), [((6, 8), (3, 4)), ((7, 5), (3, 2)), ((5, 9), (5, 4)),
                                            ((4, 4), (1, 1)), ((3, 5), (6, 7)), ((10, 11), (4, 1)),
                                            ((23, 13), (3, 2))])
def test_adaptive_avg_pool2d_and_backward(ops, rng, size, out):
    x = rng.standard_normal((2, 3, *size))
    want = ref_adaptive_avg_pool2d(x, out)
    got = ops.a(ops.adaptive_avg_pool2d(ops.f(x), out))
    close(got, want)
    gy = rng.standard_normal(want.shape)
    dx = ops.a(ops.adaptive_avg_pool2d_backward(ops.f(x), ops.f(gy)))
    assert dx.shape == x.shape
    assert math.isclose(float((x * dx).sum()), float((want * gy).sum()), rel_tol=1e-10)
    if torch is not None:
        tx = t(x, True)
        ty = F.adaptive_avg_pool2d(tx, out)
        ty.backward(t(gy))
        close(got, ty.detach().numpy())
        close(dx, tx.grad.numpy())


def test_pool1d_variants(ops, rng):
    x = rng.standard_normal((2, 3, 11))
    x4 = x[:, :, None, :]
    values, indices = ops.max_pool1d_with_indices(ops.f(x), 3, 2, 1, 2)
    want, want_idx = ref_max_pool2d(x4, (1, 3), (1, 2), (0, 1), (1, 2))
    close(ops.a(values), want[:, :, 0])
    np.testing.assert_array_equal(ops.ai(indices), want_idx[:, :, 0])
    close(ops.a(ops.max_pool1d(ops.f(x), 3, 2, 1, 2)), want[:, :, 0])
    for cip in (True, False):
        close(ops.a(ops.avg_pool1d(ops.f(x), 4, 3, 2, cip)),
              ref_avg_pool2d(x4, (1, 4), (1, 3), (0, 2), cip)[:, :, 0])
    close(ops.a(ops.adaptive_avg_pool1d(ops.f(x), 4)), ref_adaptive_avg_pool2d(x4, (1, 4))[:, :, 0])
    if torch is not None:
        tv, ti = F.max_pool1d(t(x), 3, 2, 1, 2, return_indices=True)
        close(ops.a(values), tv.numpy())
        np.testing.assert_array_equal(ops.ai(indices), ti.numpy())
        close(ops.a(ops.avg_pool1d(ops.f(x), 4, 3, 2, False)),
              F.avg_pool1d(t(x), 4, 3, 2, count_include_pad=False).numpy())
        close(ops.a(ops.adaptive_avg_pool1d(ops.f(x), 4)), F.adaptive_avg_pool1d(t(x), 4).numpy())


def test_pooling_rejects_empty_output(ops, rng):
    x = ops.f(rng.standard_normal((1, 1, 2, 2)))
    with pytest.raises(ValueError, match=r"max_pool2d.*\(2, 2\).*kernel \(3, 3\)"):
        ops.max_pool2d(x, (3, 3), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError, match="avg_pool2d"):
        ops.avg_pool2d(x, (3, 3), (1, 1), (0, 0), True)


# -- embedding ----------------------------------------------------------------------------------
def test_embedding_and_backward(ops, rng):
    weights = rng.standard_normal((7, 4))
    indices = np.array([[0, 3, 3], [6, 1, 0]])
    got = ops.a(ops.embedding(ops.f(weights), ops.i(indices)))
    close(got, weights[indices])
    gy = rng.standard_normal((2, 3, 4))
    grad = ops.a(ops.embedding_backward(ops.f(weights), ops.f(gy), ops.i(indices)))
    expected = np.zeros_like(weights)
    np.add.at(expected, indices.ravel(), gy.reshape(-1, 4))
    close(grad, expected)
    assert np.all(grad[[2, 4, 5]] == 0)
    close(ops.a(ops.embedding(ops.f(weights), ops.i(np.array([5])))), weights[[5]])


# -- interpolation ------------------------------------------------------------------------------
SIZES = [((4, 5), (8, 10)), ((7, 6), (3, 4)), ((5, 5), (5, 9)), ((3, 4), (1, 1)), ((26, 39), (22, 33)),
         ((2, 3), (7, 5)), ((1, 4), (3, 4)), ((3, 4), (40, 9))]


@pytest.mark.parametrize(("size", "out"), SIZES)
@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear_and_backward(ops, rng, size, out, align_corners):
    x = rng.standard_normal((2, 3, *size))
    want = ref_bilinear(x, out, align_corners)
    got = ops.a(ops.interpolate(ops.f(x), out, "bilinear", align_corners))
    close(got, want)
    gy = rng.standard_normal(want.shape)
    dx = ops.a(ops.interpolate_backward(ops.f(x), ops.f(gy), out, "bilinear", align_corners))
    assert dx.shape == x.shape
    assert math.isclose(float((x * dx).sum()), float((want * gy).sum()), rel_tol=1e-10)
    if torch is not None:
        tx = t(x, True)
        ty = F.interpolate(tx, size=out, mode="bilinear", align_corners=align_corners)
        ty.backward(t(gy))
        close(got, ty.detach().numpy())
        close(dx, tx.grad.numpy())


@pytest.mark.parametrize(("size", "out"), SIZES)
def test_nearest_and_backward(ops, rng, size, out):
    x = rng.standard_normal((2, 3, *size))
    # PyTorch's index: floor(i * (in / out)) with the scale in float32; (26, 39) -> (22, 33) has
    # rows and columns where that differs from the exact floor(i * in / out).
    rows = [min(int(np.floor(np.float32(i) * (np.float32(size[0]) / np.float32(out[0])))), size[0] - 1)
            for i in range(out[0])]
    cols = [min(int(np.floor(np.float32(j) * (np.float32(size[1]) / np.float32(out[1])))), size[1] - 1)
            for j in range(out[1])]
    want = x[:, :, rows][:, :, :, cols]
    got = ops.a(ops.interpolate(ops.f(x), out, "nearest", False))
    close(got, want)
    gy = rng.standard_normal(want.shape)
    dx = ops.a(ops.interpolate_backward(ops.f(x), ops.f(gy), out, "nearest", False))
    expected = np.zeros_like(x)
    for i, j in itertools.product(range(out[0]), range(out[1])):
        expected[:, :, rows[i], cols[j]] += gy[:, :, i, j]
    close(dx, expected)
    if torch is not None:
        tx = t(x, True)
        ty = F.interpolate(tx, size=out, mode="nearest")
        ty.backward(t(gy))
        close(got, ty.detach().numpy())
        close(dx, tx.grad.numpy())


def test_interpolate_rejects_unknown_mode(ops, rng):
    with pytest.raises(ValueError, match="'area'"):
        ops.interpolate(ops.f(rng.standard_normal((1, 1, 2, 2))), (4, 4), "area", False)


# -- dtypes -------------------------------------------------------------------------------------
def test_float32_stays_float32(ops, rng):
    """Host-built tables (weights, counts) take the input's dtype, so nothing promotes."""
    if not ops.b.capabilities.supports(DType.F32):
        pytest.skip("backend has no float32")
    x = ops.f(rng.standard_normal((1, 2, 5, 7)), "float32")
    w = ops.f(rng.standard_normal((2, 2, 3, 3)), "float32")
    results = [
        ops.conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 1),
        ops.conv_transpose2d(x, w, None, (2, 2), (1, 1), (1, 1), (1, 1), 1),
        ops.avg_pool2d(x, (3, 3), (2, 2), (1, 1), False),
        ops.adaptive_avg_pool2d(x, (3, 4)),
        ops.interpolate(x, (9, 4), "bilinear", False),
        ops.interpolate(x, (9, 4), "nearest", False),
    ]
    for r in results:
        assert ops.a(r).dtype == np.float32
