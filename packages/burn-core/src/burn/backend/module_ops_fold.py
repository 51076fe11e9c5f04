"""im2col and col2im as default contract ops: Burn's ``unfold4d`` and its adjoint ``fold4d``
(PyTorch's ``nn.Unfold`` / ``nn.Fold``).

Both are written with the sliding-window helpers of `burn.backend._windows` (one strided slice
per kernel position, never a loop over pixels), so every backend has them and autodiff
differentiates them by composition. The column layout is PyTorch's: ``[N, C * KH * KW, L]``
with the channel slowest, then the kernel row, then the kernel column, and ``L = OH * OW``
output positions in row-major order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend._windows import crop2d, fold, out_size, pad2d, unfold
from burn.backend.contract import default
from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Pair = tuple[int, int]


class FoldModuleOps:
    """``unfold4d`` (im2col) and ``fold4d`` (col2im); both defaults."""

    @default
    def unfold4d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        """``x [N, C, H, W]`` -> ``[N, C * KH * KW, OH * OW]``: every (zero-padded) window."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        out = out_size("unfold4d", (h, w), kernel_size, stride, padding, dilation)
        cols = unfold(b, pad2d(b, x, padding, 0.0), kernel_size, stride, dilation, out)
        return b.float_reshape(cols, (n, c * kernel_size[0] * kernel_size[1], out[0] * out[1]))

    @default
    def fold4d(
        self, cols: P, output_size: Pair, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> P:
        """``cols [N, C * KH * KW, L]`` -> ``[N, C, H, W]`` (``(H, W) = output_size``): each column
        summed back into its window, overlaps added, the padding cropped (adjoint of `unfold4d`)."""
        b: Backend = self  # type: ignore[assignment]
        n, ck, length = b.float_shape(cols)
        kh, kw = kernel_size
        oh, ow = out_size("fold4d", output_size, kernel_size, stride, padding, dilation)
        if ck % (kh * kw) or length != oh * ow:
            raise ShapeError(
                f"fold4d: columns {(n, ck, length)} do not match kernel {kernel_size} and output size "
                f"{output_size} (expected [N, C * {kh * kw}, {oh * ow}])"
            )
        c = ck // (kh * kw)
        blocks = b.float_reshape(cols, (n, c, kh * kw, oh, ow))
        plane = (slice(0, oh), slice(0, ow))
        parts = [
            b.float_reshape(b.float_slice(blocks, (slice(0, n), slice(0, c), slice(i, i + 1), *plane)),
                            (n, c, oh, ow))
            for i in range(kh * kw)
        ]
        h, w = output_size
        full = (n, c, h + 2 * padding[0], w + 2 * padding[1])
        return crop2d(b, fold(b, parts, full, kernel_size, stride, dilation, cols), padding, (h, w))
