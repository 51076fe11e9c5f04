"""Float64 NumPy references of the convolution ops: any spatial rank (1-D, 2-D, 3-D) with
asymmetric padding and transposed, deformable convolution (torchvision's ``deform_conv2d``) and
im2col / col2im (PyTorch's ``F.unfold`` / ``F.fold``).

Written for clarity, not speed: loops over kernel offsets, vectorized over batch and channels;
the deformable convolution and im2col loop over every output element (slow, obviously right, used
only at small sizes). `deform_conv2d` is also what the nn layer tests compare with (torchvision is
not a dependency). Backward references come from `burn.testing.reference.vjp_linear`.
"""

from __future__ import annotations

import itertools

import numpy as np

from burn.testing.reference._windows import Dims, at, regions

Pair = tuple[int, int]


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: int,
) -> np.ndarray:
    """`conv_nd` with the 2-D convolution's arguments (symmetric padding)."""
    return conv_nd(x, w, b, stride, tuple((p, p) for p in padding), dilation, groups)


def conv_nd(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: Dims,
    padding: tuple[tuple[int, int], ...],
    dilation: Dims,
    groups: int,
) -> np.ndarray:
    """Convolution with ``padding[i] = (before, after)`` zeros on spatial axis ``i``."""
    rank = x.ndim - 2
    xp = np.pad(x, ((0, 0), (0, 0), *padding))
    c_out, c_in_g = w.shape[:2]
    kernel = w.shape[2:]
    out = tuple(
        (xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(rank)
    )
    res = np.zeros((x.shape[0], c_out, *out))
    og = c_out // groups
    for g in range(groups):
        xg = xp[:, g * c_in_g : (g + 1) * c_in_g]
        wg = w[g * og : (g + 1) * og]
        for pos in itertools.product(*(range(k) for k in kernel)):
            region = regions(pos, dilation, kernel, stride, out)
            patch = xg[at(*region)]
            tap = wg[at(*pos)]
            res[:, g * og : (g + 1) * og] += np.einsum("nc...,oc->no...", patch, tap)
    if b is not None:
        res += b.reshape(1, -1, *(1,) * rank)
    return res


def conv_transpose_nd(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: Dims,
    padding: Dims,
    padding_out: Dims,
    dilation: Dims,
    groups: int,
) -> np.ndarray:
    rank = x.ndim - 2
    n, c_in = x.shape[:2]
    size = x.shape[2:]
    c_out_g = w.shape[1]
    kernel = w.shape[2:]
    full_size = [
        (size[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 + padding_out[i] for i in range(rank)
    ]
    full = np.zeros((n, c_out_g * groups, *full_size))
    cig = c_in // groups
    for g in range(groups):
        xg = x[:, g * cig : (g + 1) * cig]
        wg = w[g * cig : (g + 1) * cig]
        for pos in itertools.product(*(range(k) for k in kernel)):
            part = np.einsum("nc...,co->no...", xg, wg[at(*pos)])
            region = regions(pos, dilation, kernel, stride, size)
            full[(slice(None), slice(g * c_out_g, (g + 1) * c_out_g), *region)] += part
    out = tuple(full_size[i] - 2 * padding[i] for i in range(rank))
    res = full[at(*(slice(p, p + o) for p, o in zip(padding, out, strict=True)))]
    if b is not None:
        res = res + b.reshape(1, -1, *(1,) * rank)
    return res


# -- deformable convolution, im2col, col2im ------------------------------------------------------
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


def deform_conv2d(
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


def unfold4d(
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


def fold4d(cols: np.ndarray, size: Pair, kernel: Pair, stride: Pair, padding: Pair,
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

