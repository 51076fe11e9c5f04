"""Float64 NumPy references for convolution and pooling of any spatial rank (1-D, 2-D, 3-D),
with PyTorch's ``ceil_mode`` and asymmetric padding (layouts: `burn.backend.module_ops_3d`).

Written for clarity, not speed: loops over kernel offsets (and over output positions for the
pooling divisors), vectorized over batch and channels. Backward references come from
`burn.testing.nn_reference.vjp_linear`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

Dims = tuple[int, ...]


def _at(*rest: Any) -> Any:
    """An index ``[:, :, *rest]`` (batch and channels whole)."""
    return (slice(None), slice(None), *rest)


def _window(start: int, kernel: int, stride: int, out: int) -> slice:
    return slice(start, start + stride * (out - 1) + 1, stride)


def _regions(pos: Dims, dilation: Dims, kernel: Dims, stride: Dims, out: Dims) -> tuple[slice, ...]:
    return tuple(
        _window(p * d, k, s, o) for p, d, k, s, o in zip(pos, dilation, kernel, stride, out, strict=True)
    )


def pool_out_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size; in ceil mode the last window must start inside the input or
    the left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    if (out - 1) * stride >= size + padding:
        out -= 1
    return out


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
            region = _regions(pos, dilation, kernel, stride, out)
            patch = xg[_at(*region)]
            tap = wg[_at(*pos)]
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
            part = np.einsum("nc...,co->no...", xg, wg[_at(*pos)])
            region = _regions(pos, dilation, kernel, stride, size)
            full[(slice(None), slice(g * c_out_g, (g + 1) * c_out_g), *region)] += part
    out = tuple(full_size[i] - 2 * padding[i] for i in range(rank))
    res = full[_at(*(slice(p, p + o) for p, o in zip(padding, out, strict=True)))]
    if b is not None:
        res = res + b.reshape(1, -1, *(1,) * rank)
    return res


def max_pool_nd(
    x: np.ndarray, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims, ceil_mode: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Values and flat (row-major per input volume) indices of the first maximum in scan order."""
    rank = x.ndim - 2
    size = x.shape[2:]
    out = tuple(
        pool_out_size(size[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(rank)
    )
    best = np.full((*x.shape[:2], *out), -np.inf)
    index = np.zeros(best.shape, dtype=np.int64)
    strides = [math.prod(size[i + 1 :]) for i in range(rank)]
    for pos in itertools.product(*(range(k) for k in kernel)):
        coords = [np.arange(out[i]) * stride[i] - padding[i] + pos[i] * dilation[i] for i in range(rank)]
        inside = np.ones(out, dtype=bool)
        flat = np.zeros(out, dtype=np.int64)
        for i, c in enumerate(coords):
            shape = [1] * rank
            shape[i] = out[i]
            c = c.reshape(shape)
            inside = inside & (c >= 0) & (c < size[i])
            flat = flat + np.clip(c, 0, size[i] - 1) * strides[i]
        grids = np.ix_(*(np.clip(c, 0, size[i] - 1) for i, c in enumerate(coords)))
        v = np.where(inside, x[_at(*grids)], -np.inf)
        better = v > best
        best = np.where(better, v, best)
        index = np.where(better, flat, index)
    return best, index


def avg_pool_nd(
    x: np.ndarray, kernel: Dims, stride: Dims, padding: Dims, count_include_pad: bool, ceil_mode: bool = False
) -> np.ndarray:
    """PyTorch's average pooling: the divisor counts the window's elements inside the input (and,
    with `count_include_pad`, inside the padding; never beyond it, as with ceil mode's last window)."""
    rank = x.ndim - 2
    size = x.shape[2:]
    out = tuple(pool_out_size(size[i], kernel[i], stride[i], padding[i], 1, ceil_mode) for i in range(rank))
    res = np.zeros((*x.shape[:2], *out))
    for o in itertools.product(*(range(v) for v in out)):
        starts = [o[i] * stride[i] - padding[i] for i in range(rank)]
        ends = [min(starts[i] + kernel[i], size[i] + padding[i]) for i in range(rank)]
        padded = math.prod(ends[i] - starts[i] for i in range(rank))
        region = tuple(slice(max(starts[i], 0), min(ends[i], size[i])) for i in range(rank))
        real = math.prod(r.stop - r.start for r in region)
        total = x[_at(*region)].sum(axis=tuple(range(2, 2 + rank)))
        res[_at(*o)] = total / (padded if count_include_pad else real)
    return res


def adaptive_avg_pool_nd(x: np.ndarray, output_size: Dims) -> np.ndarray:
    rank = x.ndim - 2
    size = x.shape[2:]
    res = np.zeros((*x.shape[:2], *output_size))
    for o in itertools.product(*(range(v) for v in output_size)):
        region = tuple(
            slice((o[i] * size[i]) // output_size[i], math.ceil((o[i] + 1) * size[i] / output_size[i]))
            for i in range(rank)
        )
        res[_at(*o)] = x[_at(*region)].mean(
            axis=tuple(range(2, 2 + rank))
        )
    return res
