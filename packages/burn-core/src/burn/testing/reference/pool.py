"""Float64 NumPy references of the pooling ops of any spatial rank (1-D, 2-D, 3-D), with
PyTorch's ``ceil_mode``: max pooling with the indices of the first maximum, average pooling with
PyTorch's divisors, adaptive average pooling.

Written for clarity, not speed: loops over kernel offsets (and over output positions for the
divisors), vectorized over batch and channels. Backward references come from
`burn.testing.reference.vjp_linear`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from burn.testing.reference._windows import Dims, at


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
        v = np.where(inside, x[at(*grids)], -np.inf)
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
        total = x[at(*region)].sum(axis=tuple(range(2, 2 + rank)))
        res[at(*o)] = total / (padded if count_include_pad else real)
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
        res[at(*o)] = x[at(*region)].mean(axis=tuple(range(2, 2 + rank)))
    return res
