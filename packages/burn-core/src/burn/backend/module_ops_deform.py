"""Deformable convolution (Burn's ``deform_conv2d``, torchvision's semantics) as a default op.

Each kernel tap of each output pixel reads the input at its regular position plus a learned
``(dy, dx)`` offset, by bilinear interpolation; modulated (v2) convolution multiplies each read by
a mask value. The default is written only with contract ops, so every backend has it and the
autodiff decorator differentiates it by composition (input, offsets, mask, weight and bias):

1. positions = host grid of the regular taps + offsets, ``[N, G, K, L]`` per axis
   (``G`` offset groups, ``K = KH * KW`` taps, ``L = OH * OW`` output pixels);
2. the four bilinear corners of each position are read with one gather each from the input
   zero-padded by one pixel; corner indices are clamped into that border, so a corner outside
   the image reads 0 — exactly torchvision's rule (samples at ``h <= -1`` or ``h >= H`` are 0);
3. the corner weights (and mask) scale the reads, giving the im2col matrix ``[N, C_in * K, L]``
   laid out as ``conv2d``'s; one grouped matmul with the weight finishes, as in ``conv2d``.

Layouts (torchvision's and Burn's): ``offset [N, 2 * G * KH * KW, OH, OW]`` holding, for offset
group ``g`` and tap ``k = i * KW + j``, ``dy`` at channel ``2 * (g * K + k)`` and ``dx`` right
after it; ``mask [N, G * KH * KW, OH, OW]``; input channel ``c`` uses offset group
``c // (C_in / G)``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend._tables import float_table
from burn.backend._windows import out_size, pad2d
from burn.backend.contract import default
from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Pair = tuple[int, int]


class DeformModuleOps:
    """The deformable-convolution op of the contract (a default)."""

    @default
    def deform_conv2d(
        self, x: P, offset: P, weight: P, mask: P | None, bias: P | None, stride: Pair, padding: Pair,
        dilation: Pair, weight_groups: int, offset_groups: int,
    ) -> P:
        """``x [N, C_in, H, W]``, ``offset [N, 2*G*KH*KW, OH, OW]``, ``weight [C_out,
        C_in/weight_groups, KH, KW]``, ``mask [N, G*KH*KW, OH, OW]`` or None, ``bias [C_out]`` or
        None -> ``[N, C_out, OH, OW]`` (``G = offset_groups``; sizes as ``conv2d``'s)."""
        b: Backend = self  # type: ignore[assignment]
        n, c_in, h, w = b.float_shape(x)
        c_out, c_in_wg, kh, kw = b.float_shape(weight)
        oh, ow = out_size("deform_conv2d", (h, w), (kh, kw), stride, padding, dilation)
        g, k, length = offset_groups, kh * kw, oh * ow
        _check("deform_conv2d", b, x, offset, weight, mask, bias, (oh, ow), weight_groups, offset_groups)
        cpg = c_in // g
        device, dtype = b.float_device(x), b.float_get_dtype(x)

        # 1. Sampling positions [N, G, K, L] per axis.
        pairs = b.float_reshape(offset, (n, g, k, 2, length))
        grid_h, grid_w = _grid((kh, kw), stride, padding, dilation, (oh, ow))
        pos = []
        for axis, grid in ((0, grid_h), (1, grid_w)):
            d = b.float_slice(pairs, (slice(0, n), slice(0, g), slice(0, k), slice(axis, axis + 1),
                                      slice(0, length)))
            d = b.float_reshape(d, (n, g, k, length))
            pos.append(b.float_add(d, float_table(b, grid.reshape(1, 1, k, length), device, dtype)))

        # 2. Corner indices into the input padded by one zero pixel, and the bilinear weights.
        # The floor is taken on detached positions: it is piecewise constant, and the weights'
        # dependence on the position (frac = pos - floor) carries the offset gradient.
        hp, wp = h + 2, w + 2
        lows, fracs = [], []
        for p in pos:
            low = b.float_floor(b.float_detach(p))
            fracs.append(b.float_sub(p, low))
            lows.append(low)
        int_dtype = b.int_dtype

        def index(low: P, step: float, size: int) -> P:
            # clamp(low + step, -1, size) + 1: a corner outside the image lands on the zero border.
            clamped = b.float_clamp(b.float_add_scalar(low, step), -1.0, float(size))
            return b.float_into_int(b.float_add_scalar(clamped, 1.0), int_dtype)

        rows = [index(lows[0], s, h) for s in (0.0, 1.0)]
        cols = [index(lows[1], s, w) for s in (0.0, 1.0)]
        one_minus = [b.float_add_scalar(b.float_neg(f), 1.0) for f in fracs]
        weights_h = (one_minus[0], fracs[0])  # weight of the low / high row
        weights_w = (one_minus[1], fracs[1])

        flat = b.float_reshape(pad2d(b, x, (1, 1), 0.0), (n, g, cpg, hp * wp))
        modulation = None if mask is None else b.float_reshape(mask, (n, g, k, length))
        sampled = None
        for i in (0, 1):
            for j in (0, 1):
                idx = b.int_add(b.int_mul_scalar(rows[i], wp), cols[j])  # [N, G, K, L]
                idx = b.int_expand(b.int_reshape(idx, (n, g, 1, k * length)), (n, g, cpg, k * length))
                read = b.float_gather(3, flat, idx)  # [N, G, cpg, K * L]
                corner = b.float_mul(weights_h[i], weights_w[j])  # [N, G, K, L]
                if modulation is not None:
                    corner = b.float_mul(corner, modulation)
                term = b.float_mul(read, b.float_reshape(corner, (n, g, 1, k * length)))
                sampled = term if sampled is None else b.float_add(sampled, term)

        # 3. im2col layout (c, kh, kw) per weight group, then one batched matmul.
        cols_m = b.float_reshape(sampled, (n, weight_groups, c_in_wg * k, length))
        wm = b.float_reshape(weight, (weight_groups, c_out // weight_groups, c_in_wg * k))
        out = b.float_reshape(b.float_matmul(wm, cols_m), (n, c_out, oh, ow))
        if bias is not None:
            out = b.float_add(out, b.float_reshape(bias, (1, c_out, 1, 1)))
        return out


@functools.lru_cache(maxsize=64)
def _grid(
    kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out: Pair
) -> tuple[np.ndarray, np.ndarray]:
    """``[K, L]`` row and column of the regular (undeformed) tap ``k`` of output pixel ``l``."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = kernel, stride, padding, dilation, out
    ki, kj = np.divmod(np.arange(kh * kw), kw)
    li, lj = np.divmod(np.arange(oh * ow), ow)
    rows = ((li * sh - ph)[None, :] + (ki * dh)[:, None]).astype(np.float64)
    cols = ((lj * sw - pw)[None, :] + (kj * dw)[:, None]).astype(np.float64)
    for table in (rows, cols):
        table.setflags(write=False)  # cached: shared by every call with these sizes
    return rows, cols


def _check(op: str, b: Backend, x: P, offset: P, weight: P, mask: P | None, bias: P | None, out: Pair,
           weight_groups: int, offset_groups: int) -> None:
    """Shapes the op relies on (the Tensor-level function checks them first, with more words)."""
    n, c_in, h, w = b.float_shape(x)
    c_out, c_in_wg, kh, kw = b.float_shape(weight)
    k = kh * kw
    problems = []
    if weight_groups < 1 or offset_groups < 1 or c_in % offset_groups:
        problems.append(f"{c_in} input channels must be divisible by offset_groups={offset_groups}")
    if weight_groups < 1 or c_in_wg * weight_groups != c_in or c_out % weight_groups:
        problems.append(f"weight {(c_out, c_in_wg, kh, kw)} does not match {c_in} input channels "
                        f"with weight_groups={weight_groups}")
    if b.float_shape(offset) != (n, 2 * offset_groups * k, *out):
        problems.append(f"offset must have shape {(n, 2 * offset_groups * k, *out)}, "
                        f"got {b.float_shape(offset)}")
    if mask is not None and b.float_shape(mask) != (n, offset_groups * k, *out):
        problems.append(f"mask must have shape {(n, offset_groups * k, *out)}, got {b.float_shape(mask)}")
    if bias is not None and b.float_shape(bias) != (c_out,):
        problems.append(f"bias must have shape {(c_out,)}, got {b.float_shape(bias)}")
    if problems:
        raise ShapeError(f"{op}: input {(n, c_in, h, w)}: " + "; ".join(problems))
