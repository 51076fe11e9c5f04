"""The sampling family (`burn.backend.ops.sampling`) on NumPy arrays: interpolation (the shared
ops, `burn.backend.xp.sampling`) and ``grid_sample_2d``, bilinear or nearest sampling vectorized
with fancy-index gathers.

``grid_sample_2d`` follows its burn-core default step for step (`burn.backend.ops.sampling`: the
same coordinate formulas in the same order, so float32 positions round identically), but each tap
is one `np.take_along_axis` over the whole batch instead of a chain of contract ops. float16 /
bfloat16 compute in float32 and cast back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ops.sampling import GRID_SAMPLE_MODES, GRID_SAMPLE_PADDINGS
from burn.backend.xp.sampling import XpInterpolateOps
from burn_ndarray.ops.windows import work_dtype

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


class SamplingOps(XpInterpolateOps):
    """The sampling ops of `burn_ndarray.NdArray`."""

    grid_sample_2d = staticmethod(grid_sample_2d)
