"""Sliding-window building blocks of the default module ops, written only with contract ops.

The defaults loop over kernel positions, never over pixels, batch items or channels: each kernel
position is one strided slice of the padded input (`window_slices`), and the adjoint puts one
such slice back with `fold`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Pair = tuple[int, int]


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
