"""Sliding-window building blocks of the default conv and pool ops, written only with contract
ops: the 2-D ones (`window_slices`, `fold`, `pad2d`...) and the rank-generic ones (``*_nd``).

The defaults loop over kernel positions, never over pixels, batch items or channels: each kernel
position is one strided slice of the padded input (`window_slices`, `unfold_nd`), and the adjoint
puts one such slice back (`fold`, `fold_nd`). The Tensor layer uses `pad_nd` for its padding
modes and `out_size_nd` for its shape checks.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Pair = tuple[int, int]
Dims = tuple[int, ...]


def out_size(op: str, size: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Pair:
    """Output size of a strided window op (floor mode); errors name the op and the sizes."""
    out = tuple(
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True)
    )
    if out[0] <= 0 or out[1] <= 0:
        raise ShapeError(
            f"{op}: input size {size} with kernel {kernel}, stride {stride}, padding {padding}, "
            f"dilation {dilation} gives an empty output {out}"
        )
    return out  # type: ignore[return-value]


def pad2d(b: Backend, x: P, padding: Pair, value: float) -> P:
    """`x` ``[N, C, H, W]`` with `padding` rows/columns of `value` on each side."""
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    n, c, h, w = b.float_shape(x)
    buf = b.float_full((n, c, h + 2 * ph, w + 2 * pw), value, b.float_device(x), b.float_get_dtype(x))
    return b.float_slice_assign(buf, (slice(0, n), slice(0, c), slice(ph, ph + h), slice(pw, pw + w)), x)


def crop2d(b: Backend, x: P, start: Pair, size: Pair) -> P:
    """The ``size`` region of `x` ``[N, C, H, W]`` starting at `start` (no-op when it is all of it)."""
    n, c, h, w = b.float_shape(x)
    if start == (0, 0) and size == (h, w):
        return x
    (h0, w0), (hs, ws) = start, size
    return b.float_slice(x, (slice(0, n), slice(0, c), slice(h0, h0 + hs), slice(w0, w0 + ws)))


def _regions(
    n: int, c: int, kernel: Pair, stride: Pair, dilation: Pair, out: Pair
) -> list[tuple[slice, ...]]:
    """The strided region read by each kernel position (row-major over ``(kh, kw)``)."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel, stride, dilation, out
    rows = [slice(i * dh, i * dh + (oh - 1) * sh + 1, sh) for i in range(kh)]
    cols = [slice(j * dw, j * dw + (ow - 1) * sw + 1, sw) for j in range(kw)]
    return [(slice(0, n), slice(0, c), r, q) for r in rows for q in cols]


def window_slices(b: Backend, xp: P, kernel: Pair, stride: Pair, dilation: Pair, out: Pair) -> list[P]:
    """One ``[N, C, OH, OW]`` slice of the (already padded) `xp` per kernel position."""
    n, c = b.float_shape(xp)[:2]
    return [b.float_slice(xp, region) for region in _regions(n, c, kernel, stride, dilation, out)]


def unfold(b: Backend, xp: P, kernel: Pair, stride: Pair, dilation: Pair, out: Pair) -> P:
    """im2col: ``[N, C, KH*KW, OH, OW]`` with every window of the (already padded) `xp`."""
    n, c = b.float_shape(xp)[:2]
    shape = (n, c, 1, *out)
    parts = [b.float_reshape(s, shape) for s in window_slices(b, xp, kernel, stride, dilation, out)]
    return parts[0] if len(parts) == 1 else b.float_cat(parts, 2)


def fold(b: Backend, parts: Sequence[P], full: tuple[int, int, int, int], kernel: Pair, stride: Pair,
         dilation: Pair, like: P) -> P:
    """col2im, the adjoint of `window_slices`: a zeros ``full`` buffer (dtype and device of `like`)
    with each ``[N, C, OH, OW]`` part summed into its kernel position's strided region."""
    n, c, hf, wf = full
    oh, ow = b.float_shape(parts[0])[2:]
    buf = b.float_zeros(full, b.float_device(like), b.float_get_dtype(like))
    # Regions that do not overlap an earlier one (e.g. stride >= kernel) are assigned without the
    # read-add: tracked on a small host grid of the buffer's plane.
    touched = np.zeros((hf, wf), dtype=bool)
    for part, region in zip(parts, _regions(n, c, kernel, stride, dilation, (oh, ow)), strict=True):
        plane = touched[region[2], region[3]]
        if plane.any():
            part = b.float_add(b.float_slice(buf, region), part)
        touched[region[2], region[3]] = True
        buf = b.float_slice_assign(buf, region, part)
    return buf


# -- rank-generic window helpers ---------------------------------------------------------------
def out_size_nd(op: str, size: Dims, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims) -> Dims:
    """Output size of a strided window op (floor mode); errors name the op and the sizes."""
    out = tuple(
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True)
    )
    if any(o <= 0 for o in out):
        raise ShapeError(
            f"{op}: input size {size} with kernel {kernel}, stride {stride}, padding {padding}, "
            f"dilation {dilation} gives an empty output {out}"
        )
    return out


def pad_nd(b: Backend, x: P, low: Dims, high: Dims, value: float) -> P:
    """`x` ``[N, C, *spatial]`` with ``low[i]`` / ``high[i]`` elements of `value` before / after
    spatial axis ``i`` (x itself when there is no padding)."""
    if not any(low) and not any(high):
        return x
    n, c, *size = b.float_shape(x)
    full = (n, c, *(s + lo + hi for s, lo, hi in zip(size, low, high, strict=True)))
    buf = b.float_full(full, value, b.float_device(x), b.float_get_dtype(x))
    inner = tuple(slice(lo, lo + s) for s, lo in zip(size, low, strict=True))
    return b.float_slice_assign(buf, (slice(0, n), slice(0, c), *inner), x)


def crop_nd(b: Backend, x: P, start: Dims, size: Dims) -> P:
    """The ``size`` region of `x` ``[N, C, *spatial]`` starting at `start` (x when it is all of it)."""
    n, c, *whole = b.float_shape(x)
    if not any(start) and tuple(size) == tuple(whole):
        return x
    inner = tuple(slice(s0, s0 + s) for s0, s in zip(start, size, strict=True))
    return b.float_slice(x, (slice(0, n), slice(0, c), *inner))


def regions_nd(
    n: int, c: int, kernel: Dims, stride: Dims, dilation: Dims, out: Dims
) -> list[tuple[slice, ...]]:
    """The strided region read by each kernel position (row-major over the kernel axes)."""
    axes = [
        [slice(i * d, i * d + (o - 1) * s + 1, s) for i in range(k)]
        for k, s, d, o in zip(kernel, stride, dilation, out, strict=True)
    ]
    return [(slice(0, n), slice(0, c), *pick) for pick in itertools.product(*axes)]


def unfold_nd(b: Backend, xp: P, kernel: Dims, stride: Dims, dilation: Dims, out: Dims) -> P:
    """im2col: ``[N, C, prod(kernel), *out]`` with every window of the (already padded) `xp`."""
    n, c = b.float_shape(xp)[:2]
    shape = (n, c, 1, *out)
    regions = regions_nd(n, c, kernel, stride, dilation, out)
    parts = [b.float_reshape(b.float_slice(xp, r), shape) for r in regions]
    return parts[0] if len(parts) == 1 else b.float_cat(parts, 2)


def fold_nd(b: Backend, parts: Sequence[P], full: Dims, kernel: Dims, stride: Dims, dilation: Dims,
            like: P) -> P:
    """col2im, the adjoint of the window slices: a zeros `full` buffer (dtype and device of `like`)
    with each ``[N, C, *out]`` part summed into its kernel position's strided region."""
    n, c, *_ = full
    out = tuple(b.float_shape(parts[0])[2:])
    buf = b.float_zeros(tuple(full), b.float_device(like), b.float_get_dtype(like))
    # Regions that overlap no earlier one (e.g. stride >= kernel) are assigned without the
    # read-add: tracked on a host grid of the buffer's spatial shape.
    touched = np.zeros(tuple(full[2:]), dtype=bool)
    for part, region in zip(parts, regions_nd(n, c, kernel, stride, dilation, out), strict=True):
        spatial = region[2:]
        if touched[spatial].any():
            part = b.float_add(b.float_slice(buf, region), part)
        touched[spatial] = True
        buf = b.float_slice_assign(buf, region, part)
    return buf
