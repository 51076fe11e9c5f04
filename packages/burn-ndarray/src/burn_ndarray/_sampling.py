"""Bilinear sampling ops: ``grid_sample_2d`` and ``deform_conv2d`` (torchvision's deformable
convolution), vectorized with fancy-index gathers.

Both follow their burn-core defaults step for step (`burn.backend.module_ops_sampling`,
`burn.backend.module_ops_deform`: the same coordinate formulas in the same order, so float32
positions round identically), but each tap is one `np.take_along_axis` over the whole batch
instead of a chain of contract ops. float16 / bfloat16 compute in float32 and cast back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ops.conv import _check, _grid
from burn.backend.ops.sampling import GRID_SAMPLE_MODES, GRID_SAMPLE_PADDINGS
from burn.backend.windows import out_size
from burn_ndarray._windows import Pair, work_dtype

Array = Any


def _unnormalize(g: np.ndarray, size: int, align_corners: bool) -> np.ndarray:
    """Grid values in ``[-1, 1]`` to pixel coordinates along an axis of `size`."""
    if align_corners:
        return (g + 1.0) * ((size - 1) / 2.0)  # type: ignore[no-any-return]
    return (g * float(size) + (float(size) - 1.0)) * 0.5  # type: ignore[no-any-return]


def _reflect(pos: np.ndarray, size: int, align_corners: bool) -> np.ndarray:
    """Reflect coordinates into the input (about the corner centres with `align_corners`, else
    about the outer edges), as PyTorch."""
    low, span = (0.0, float(size - 1)) if align_corners else (-0.5, float(size))
    if span <= 0:
        return pos * 0.0  # type: ignore[no-any-return]
    dist = np.abs(pos - low)
    extra = np.remainder(dist, span)
    odd = np.remainder(np.floor(dist / span), 2.0) == 1.0
    return np.where(odd, (-extra) + (span + low), extra + low)  # type: ignore[no-any-return]


def grid_sample_2d(x: Array, grid: Array, mode: str, padding_mode: str, align_corners: bool) -> Array:
    if mode not in GRID_SAMPLE_MODES:
        raise ValueError(f"grid_sample_2d: unknown mode {mode!r}; expected one of {GRID_SAMPLE_MODES}")
    if padding_mode not in GRID_SAMPLE_PADDINGS:
        choices = GRID_SAMPLE_PADDINGS
        raise ValueError(f"grid_sample_2d: unknown padding_mode {padding_mode!r}; expected {choices}")
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    dtype = work_dtype(x, grid)
    g = grid.astype(dtype, copy=False).reshape(n, ho * wo, 2)

    def coordinate(k: int, size: int) -> np.ndarray:
        pos = _unnormalize(g[:, :, k], size, align_corners)
        if padding_mode == "reflection":
            pos = _reflect(pos, size, align_corners)
        if padding_mode != "zeros":
            pos = np.clip(pos, 0.0, float(size - 1))
        return pos

    ix, iy = coordinate(0, w), coordinate(1, h)
    if mode == "nearest":
        taps: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = [(np.rint(ix), np.rint(iy), None)]
    else:
        x0, y0 = np.floor(ix), np.floor(iy)
        tx, ty = ix - x0, iy - y0
        ux, uy = 1.0 - tx, 1.0 - ty
        x1, y1 = x0 + 1.0, y0 + 1.0
        taps = [(x0, y0, ux * uy), (x1, y0, tx * uy), (x0, y1, ux * ty), (x1, y1, tx * ty)]
    source = x.astype(dtype, copy=False).reshape(n, c, h * w)
    out = np.zeros((n, c, ho * wo), dtype)
    for px, py, weight in taps:
        # Clamped into the input; what lies outside is masked below (zeros padding) or was
        # clamped on purpose (border, reflection).
        row = np.clip(py, 0, h - 1).astype(np.intp)
        col = np.clip(px, 0, w - 1).astype(np.intp)
        read = np.take_along_axis(source, (row * w + col)[:, None, :], axis=2)  # [N, C, P]
        if padding_mode == "zeros":
            # Taps outside read 0: the value itself is replaced (nearest) or its weight (bilinear),
            # never multiplied by 0, which would turn an inf read at the clamped pixel into NaN.
            inside = (px >= 0) & (px <= w - 1) & (py >= 0) & (py <= h - 1)
            if weight is None:
                read = np.where(inside[:, None, :], read, dtype.type(0))
            else:
                weight = np.where(inside, weight, dtype.type(0))
        if weight is not None:
            read *= weight[:, None, :]
        out += read
    return out.reshape(n, c, ho, wo).astype(x.dtype, copy=False)


def deform_conv2d(
    self: Any, x: Array, offset: Array, weight: Array, mask: Array | None, bias: Array | None, stride: Pair,
    padding: Pair, dilation: Pair, weight_groups: int, offset_groups: int,
) -> Array:
    n, c_in, h, w = x.shape
    c_out, c_in_wg, kh, kw = weight.shape
    oh, ow = out_size("deform_conv2d", (h, w), (kh, kw), stride, padding, dilation)
    _check("deform_conv2d", self, x, offset, weight, mask, bias, (oh, ow), weight_groups, offset_groups)
    g, k, length = offset_groups, kh * kw, oh * ow
    cpg = c_in // g
    arrays = [a for a in (x, offset, weight, mask, bias) if a is not None]
    dtype = work_dtype(*arrays)

    # Sampling positions [N, G, K, L] per axis: the regular taps plus the offsets.
    pairs = offset.astype(dtype, copy=False).reshape(n, g, k, 2, length)
    grid_h, grid_w = _grid((kh, kw), stride, padding, dilation, (oh, ow))
    pos_h = pairs[:, :, :, 0] + grid_h.astype(dtype)
    pos_w = pairs[:, :, :, 1] + grid_w.astype(dtype)
    low_h, low_w = np.floor(pos_h), np.floor(pos_w)
    frac_h, frac_w = pos_h - low_h, pos_w - low_w

    # Corner indices into the input padded by one zero pixel: clamped into that border, so a
    # corner outside the image reads 0 (torchvision's rule).
    hp, wp = h + 2, w + 2
    rows = [(np.clip(low_h + s, -1.0, float(h)) + 1.0).astype(np.intp) for s in (0.0, 1.0)]
    cols = [(np.clip(low_w + s, -1.0, float(w)) + 1.0).astype(np.intp) for s in (0.0, 1.0)]
    weights_h, weights_w = (1.0 - frac_h, frac_h), (1.0 - frac_w, frac_w)
    padded = np.zeros((n, c_in, hp, wp), dtype)
    padded[:, :, 1 : h + 1, 1 : w + 1] = x
    flat = padded.reshape(n, g, cpg, hp * wp)
    modulation = None if mask is None else mask.astype(dtype, copy=False).reshape(n, g, k, length)
    sampled = np.zeros((n, g, cpg, k * length), dtype)
    for i in (0, 1):
        for j in (0, 1):
            index = (rows[i] * wp + cols[j]).reshape(n, g, 1, k * length)
            read = np.take_along_axis(flat, index, axis=3)  # [N, G, cpg, K * L]
            corner = weights_h[i] * weights_w[j]
            if modulation is not None:
                corner *= modulation
            read *= corner.reshape(n, g, 1, k * length)
            sampled += read

    # im2col layout (c, kh, kw) per weight group, then one batched matmul.
    columns = sampled.reshape(n, weight_groups, c_in_wg * k, length)
    wm = weight.astype(dtype, copy=False).reshape(weight_groups, c_out // weight_groups, c_in_wg * k)
    out = np.matmul(wm, columns).reshape(n, c_out, oh, ow)
    if bias is not None:
        out += bias.astype(dtype, copy=False).reshape(1, c_out, 1, 1)
    return out.astype(np.result_type(x, weight), copy=False)


class SamplingOps:
    """``grid_sample_2d`` and ``deform_conv2d`` of `burn_ndarray.NdArray`."""

    grid_sample_2d = staticmethod(grid_sample_2d)
    deform_conv2d = deform_conv2d
