"""Float64 NumPy references for the module ops of the contract (layouts: `burn.backend.module_ops`).

Written for clarity, not speed: loops over kernel offsets, vectorized over everything else.
Backward references come from `vjp_linear`, exact for ops linear in the differentiated input.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

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
    n, _, h, wd = x.shape
    c_out, c_in_g, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out = np.zeros((n, c_out, ho, wo))
    og = c_out // groups
    for g in range(groups):
        xg = xp[:, g * c_in_g : (g + 1) * c_in_g]
        wg = w[g * og : (g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xg[
                    :, :, i * dh : i * dh + sh * (ho - 1) + 1 : sh, j * dw : j * dw + sw * (wo - 1) + 1 : sw
                ]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, wg[:, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def conv_transpose2d(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: Pair,
    padding: Pair,
    padding_out: Pair,
    dilation: Pair,
    groups: int,
) -> np.ndarray:
    n, c_in, h, wd = x.shape
    _, c_out_g, kh, kw = w.shape
    (sh, sw), (ph, pw), (oh, ow), (dh, dw) = stride, padding, padding_out, dilation
    ho = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oh + 1
    wo = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + ow + 1
    full = np.zeros(
        (n, c_out_g * groups, (h - 1) * sh + dh * (kh - 1) + 1 + oh, (wd - 1) * sw + dw * (kw - 1) + 1 + ow)
    )
    cig = c_in // groups
    for g in range(groups):
        xg = x[:, g * cig : (g + 1) * cig]
        wg = w[g * cig : (g + 1) * cig]
        for i in range(kh):
            for j in range(kw):
                part = np.einsum("nchw,co->nohw", xg, wg[:, :, i, j])
                full[
                    :,
                    g * c_out_g : (g + 1) * c_out_g,
                    i * dh : i * dh + sh * (h - 1) + 1 : sh,
                    j * dw : j * dw + sw * (wd - 1) + 1 : sw,
                ] += part
    out = full[:, :, ph : ph + ho, pw : pw + wo]
    if b is not None:
        out = out + b[None, :, None, None]
    return out


def max_pool2d_with_indices(
    x: np.ndarray, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> tuple[np.ndarray, np.ndarray]:
    """Values and flat ``h * W + w`` indices of the first maximum in scan order."""
    n, c, h, wd = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf)
    best = np.full((n, c, ho, wo), -np.inf)
    index = np.zeros((n, c, ho, wo), dtype=np.int64)
    rows = np.arange(ho)[:, None] * sh - ph
    cols = np.arange(wo)[None, :] * sw - pw
    for i in range(kh):
        for j in range(kw):
            v = xp[:, :, i * dh : i * dh + sh * (ho - 1) + 1 : sh, j * dw : j * dw + sw * (wo - 1) + 1 : sw]
            better = v > best
            best = np.where(better, v, best)
            index = np.where(better, (rows + i * dh) * wd + (cols + j * dw), index)
    return best, index


def avg_pool2d(
    x: np.ndarray, kernel: Pair, stride: Pair, padding: Pair, count_include_pad: bool
) -> np.ndarray:
    n, c, h, wd = x.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    ho = (h + 2 * ph - kh) // sh + 1
    wo = (wd + 2 * pw - kw) // sw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    ones = np.pad(np.ones((h, wd)), ((ph, ph), (pw, pw)))
    total = np.zeros((n, c, ho, wo))
    count = np.zeros((ho, wo))
    for i in range(kh):
        for j in range(kw):
            total += xp[:, :, i : i + sh * (ho - 1) + 1 : sh, j : j + sw * (wo - 1) + 1 : sw]
            count += ones[i : i + sh * (ho - 1) + 1 : sh, j : j + sw * (wo - 1) + 1 : sw]
    return total / (kh * kw) if count_include_pad else total / count


def adaptive_avg_pool2d(x: np.ndarray, output_size: Pair) -> np.ndarray:
    n, c, h, wd = x.shape
    oh, ow = output_size
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        h0, h1 = (i * h) // oh, math.ceil((i + 1) * h / oh)
        for j in range(ow):
            w0, w1 = (j * wd) // ow, math.ceil((j + 1) * wd / ow)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


def _bilinear_source(
    out_size: int, in_size: int, align_corners: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    i = np.arange(out_size, dtype=np.float64)
    if align_corners:
        src = i * (in_size - 1) / (out_size - 1) if out_size > 1 else np.zeros(out_size)
    else:
        src = np.maximum((i + 0.5) * in_size / out_size - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    return i0, i1, src - i0


def interpolate(x: np.ndarray, output_size: Pair, mode: str, align_corners: bool) -> np.ndarray:
    _, _, h, wd = x.shape
    oh, ow = output_size
    if mode == "nearest":
        rows = (np.arange(oh) * h) // oh
        cols = (np.arange(ow) * wd) // ow
        return x[:, :, rows][:, :, :, cols]
    r0, r1, fr = _bilinear_source(oh, h, align_corners)
    c0, c1, fc = _bilinear_source(ow, wd, align_corners)
    top = x[:, :, r0] * (1 - fr)[:, None] + x[:, :, r1] * fr[:, None]
    return top[:, :, :, c0] * (1 - fc) + top[:, :, :, c1] * fc


def vjp_linear(f: Callable[[np.ndarray], np.ndarray], shape: tuple[int, ...], grad: np.ndarray) -> np.ndarray:
    """``J^T grad`` for a function `f` linear in its input of `shape` (one basis vector at a time)."""
    out = np.zeros(int(np.prod(shape)))
    basis = np.zeros(out.size)
    for k in range(out.size):
        basis[k] = 1.0
        out[k] = np.sum(f(basis.reshape(shape)) * grad)
        basis[k] = 0.0
    return out.reshape(shape)


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else np.asarray(x, dtype=np.float64)


def gelu(x: np.ndarray) -> np.ndarray:
    return x * (1 + erf(x / math.sqrt(2))) / 2


def gelu_grad(x: np.ndarray) -> np.ndarray:
    return (1 + erf(x / math.sqrt(2))) / 2 + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def softplus(x: np.ndarray, beta: float) -> np.ndarray:
    return np.logaddexp(0.0, beta * x) / beta


def softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
