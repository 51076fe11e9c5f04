"""im2col and col2im (Burn's ``unfold4d`` / ``fold4d``, PyTorch's ``nn.Unfold`` / ``nn.Fold``).

`unfold4d` copies a window view of the padded input once into PyTorch's column layout
``[N, C * KH * KW, OH * OW]``; `fold4d` sums the columns back with `burn_ndarray._windows.col2im`
(one strided slice-add per kernel tap). Sizes are checked, with the default's messages, by
burn-core's `burn.backend.windows.out_size`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.windows import out_size
from burn.errors import ShapeError
from burn_ndarray._windows import Pair, col2im, pad, windows, work_dtype

Array = Any


def unfold4d(x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
    n, c, h, w = x.shape
    out = out_size("unfold4d", (h, w), kernel_size, stride, padding, dilation)
    win = windows(pad(np.asarray(x), padding, 0.0), kernel_size, out, stride, dilation)
    return win.reshape(n, c * kernel_size[0] * kernel_size[1], out[0] * out[1])  # the one copy


def fold4d(
    cols: Array, output_size: Pair, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> Array:
    n, ck, length = cols.shape
    kh, kw = kernel_size
    oh, ow = out_size("fold4d", output_size, kernel_size, stride, padding, dilation)
    if ck % (kh * kw) or length != oh * ow:
        raise ShapeError(
            f"fold4d: columns {(n, ck, length)} do not match kernel {kernel_size} and output size "
            f"{output_size} (expected [N, C * {kh * kw}, {oh * ow}])"
        )
    c = ck // (kh * kw)
    blocks = cols.astype(work_dtype(cols), copy=False).reshape(n, c, kh, kw, oh, ow)
    h, w = output_size
    plane = col2im(blocks, (h + 2 * padding[0], w + 2 * padding[1]), stride, dilation)
    plane = plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w]
    return plane.astype(cols.dtype, copy=False)


class FoldOps:
    """``unfold4d`` and ``fold4d`` of `burn_ndarray.NdArray`."""

    unfold4d = staticmethod(unfold4d)
    fold4d = staticmethod(fold4d)
