"""Deformable convolution, im2col and col2im: ``deform_conv2d``, ``unfold4d``, ``fold4d``.

References are float64 NumPy written from the definitions (torchvision's ``deform_conv2d``,
PyTorch's ``F.unfold`` / ``F.fold``), one loop per output element: slow, obviously right, and
used only at the small sizes below. `deform_conv2d_reference` is also what the nn layer tests
compare with (torchvision is not a dependency).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing import nn_reference as ref
from burn.testing.helpers import check_float, f64, make, rand_float

Pair = tuple[int, int]


def _bilinear_zero(plane: np.ndarray, y: float, x: float) -> float:
    """torchvision's sample: 0 outside ``(-1, H) x (-1, W)``, corners outside the image read 0."""
    h, w = plane.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    ly, lx = y - y0, x - x0
    total = 0.0
    for yy, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for xx, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * plane[yy, xx]
    return total


def deform_conv2d_reference(
    x: np.ndarray, offset: np.ndarray, weight: np.ndarray, mask: np.ndarray | None, bias: np.ndarray | None,
    stride: Pair, padding: Pair, dilation: Pair, weight_groups: int, offset_groups: int,
) -> np.ndarray:
    """Float64 deformable convolution from the definition (torchvision's layouts)."""
    n, c_in, h, w = x.shape
    c_out, c_in_wg, kh, kw = weight.shape
    oh, ow = offset.shape[2:]
    cpg = c_in // offset_groups
    out = np.zeros((n, c_out, oh, ow))
    for b in range(n):
        for co in range(c_out):
            wgroup = co // (c_out // weight_groups)
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0 if bias is None else float(bias[co])
                    for ci in range(c_in_wg):
                        c = wgroup * c_in_wg + ci
                        g = c // cpg
                        for ki in range(kh):
                            for kj in range(kw):
                                k = ki * kw + kj
                                dy = offset[b, 2 * (g * kh * kw + k), i, j]
                                dx = offset[b, 2 * (g * kh * kw + k) + 1, i, j]
                                y = i * stride[0] - padding[0] + ki * dilation[0] + dy
                                xx = j * stride[1] - padding[1] + kj * dilation[1] + dx
                                v = _bilinear_zero(x[b, c], y, xx)
                                if mask is not None:
                                    v *= mask[b, g * kh * kw + k, i, j]
                                acc += weight[co, ci, ki, kj] * v
                    out[b, co, i, j] = acc
    return out


def unfold4d_reference(
    x: np.ndarray, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> np.ndarray:
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    out = np.zeros((n, c, kernel[0], kernel[1], oh, ow))
    for ki in range(kernel[0]):
        for kj in range(kernel[1]):
            for i in range(oh):
                for j in range(ow):
                    out[:, :, ki, kj, i, j] = xp[:, :, i * stride[0] + ki * dilation[0],
                                                 j * stride[1] + kj * dilation[1]]
    return out.reshape(n, c * kernel[0] * kernel[1], oh * ow)


def fold4d_reference(cols: np.ndarray, size: Pair, kernel: Pair, stride: Pair, padding: Pair,
                     dilation: Pair) -> np.ndarray:
    n, ck, _ = cols.shape
    c = ck // (kernel[0] * kernel[1])
    h, w = size
    oh = (h + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    blocks = cols.reshape(n, c, kernel[0], kernel[1], oh, ow)
    out = np.zeros((n, c, h + 2 * padding[0], w + 2 * padding[1]))
    for ki in range(kernel[0]):
        for kj in range(kernel[1]):
            for i in range(oh):
                for j in range(ow):
                    out[:, :, i * stride[0] + ki * dilation[0], j * stride[1] + kj * dilation[1]] += (
                        blocks[:, :, ki, kj, i, j]
                    )
    return out[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + w]


def _module() -> Any:
    from burn.tensor import module

    return module


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
    out = _module().deform_conv2d(
        t[0], t[1], t[2], t[3], t[4], stride=stride, padding=padding, dilation=dilation,
        weight_groups=wg, offset_groups=og,
    )
    expected = deform_conv2d_reference(
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
        out = _module().deform_conv2d(tx, to, tw, m, tb, stride, padding, dilation, 2, 2)
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
        _module().deform_conv2d(x, bad, w)
    with pytest.raises(ShapeError, match="4 input channels are not divisible by offset_groups=3"):
        _module().deform_conv2d(x, good, w, offset_groups=3)
    with pytest.raises(ShapeError, match=r"deform_conv2d: mask must have shape \(1, 9, 2, 2\)"):
        _module().deform_conv2d(x, good, w, mask=good)


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
    out = _module().unfold4d(make(backend, x, float_dtype), kernel, stride, padding, dilation)
    expected = unfold4d_reference(f64(x), kernel, stride, padding, dilation)
    check_float(out, expected, float_dtype, what="unfold4d")


@covers("fold4d")
@pytest.mark.parametrize(("xs", "kernel", "stride", "padding", "dilation"), WINDOWS, ids=str)
def test_fold4d(backend: Any, float_dtype: DType, xs: Any, kernel: Pair, stride: Pair, padding: Pair,
                dilation: Pair, rng: Any) -> None:
    size = xs[2:]
    length = unfold4d_reference(np.zeros(xs), kernel, stride, padding, dilation).shape[2]
    cols = rand_float(rng, (xs[0], xs[1] * kernel[0] * kernel[1], length), float_dtype, -1, 1)
    out = _module().fold4d(make(backend, cols, float_dtype), size, kernel, stride, padding, dilation)
    expected = fold4d_reference(f64(cols), size, kernel, stride, padding, dilation)
    check_float(out, expected, float_dtype, terms=kernel[0] * kernel[1], what="fold4d")


@covers("fold4d")
def test_fold4d_checks_the_column_count(backend: Any) -> None:
    from burn.errors import ShapeError

    dtype = backend.float_dtype
    cols = make(backend, np.zeros((1, 8, 10), dtype=dtype.numpy), dtype)
    with pytest.raises(ShapeError, match=r"fold4d: columns \(1, 8, 10\) do not match kernel \(2, 2\)"):
        _module().fold4d(cols, (4, 4), 2)
