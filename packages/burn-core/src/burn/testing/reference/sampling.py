"""NumPy float64 references of the interpolation and sampling ops, written pixel by pixel (the
way the math is stated, not the way the ops compute it), for the conformance suite.

Conventions are PyTorch's: ``interpolate`` of ``[N, C, H, W]`` with modes ``nearest``,
``nearest-exact``, ``bilinear``, ``bicubic`` (Keys' kernel, ``a = -0.75``, replicated borders);
``grid_sample_2d`` of ``[N, C, H, W]`` at ``grid [N, H_out, W_out, 2]`` (``(x, y)`` in
``[-1, 1]``) with zeros / border / reflection padding.
"""

from __future__ import annotations

import math

import numpy as np

_A = -0.75


def _keys(d: float) -> float:
    """Keys' cubic convolution kernel with ``a = -0.75`` at distance `d`."""
    d = abs(d)
    if d <= 1.0:
        return (_A + 2.0) * d**3 - (_A + 3.0) * d**2 + 1.0
    if d < 2.0:
        return _A * d**3 - 5.0 * _A * d**2 + 8.0 * _A * d - 4.0 * _A
    return 0.0


def _source(j: int, size: int, out: int, align_corners: bool, clamp_zero: bool) -> float:
    if align_corners:
        return j * (size - 1) / (out - 1) if out > 1 else 0.0
    src = (j + 0.5) * size / out - 0.5
    return max(src, 0.0) if clamp_zero else src


def _taps(size: int, out: int, mode: str, align_corners: bool) -> list[list[tuple[int, float]]]:
    """For each output position along one axis, its (source index, weight) pairs."""
    taps: list[list[tuple[int, float]]] = []
    for j in range(out):
        if mode == "nearest":
            taps.append([(min(j * size // out, size - 1), 1.0)])
        elif mode == "nearest-exact":
            scale = np.float32(size) / np.float32(out)  # float32, as PyTorch
            i = int(np.floor((np.float32(j) + np.float32(0.5)) * scale))
            taps.append([(min(i, size - 1), 1.0)])
        elif mode == "bilinear":
            src = _source(j, size, out, align_corners, clamp_zero=True)
            i0 = min(int(math.floor(src)), size - 1)
            i1 = min(i0 + 1, size - 1)
            taps.append([(i0, 1.0 - (src - i0)), (i1, src - i0)])
        elif mode == "bicubic":
            src = _source(j, size, out, align_corners, clamp_zero=False)
            base = math.floor(src)
            taps.append([(min(max(base + k, 0), size - 1), _keys(src - (base + k))) for k in (-1, 0, 1, 2)])
        else:
            raise ValueError(f"unknown mode {mode!r}")
    return taps


def interpolate(x: np.ndarray, output_size: tuple[int, int], mode: str, align_corners: bool) -> np.ndarray:
    """Resize ``x [N, C, H, W]`` (float64) to `output_size`."""
    n, c, h, w = x.shape
    oh, ow = output_size
    rows, cols = _taps(h, oh, mode, align_corners), _taps(w, ow, mode, align_corners)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            for r, wr in rows[i]:
                for q, wq in cols[j]:
                    out[:, :, i, j] += wr * wq * x[:, :, r, q]
    return out


def _unnormalize(g: float, size: int, align_corners: bool) -> float:
    return (g + 1.0) / 2.0 * (size - 1) if align_corners else ((g + 1.0) * size - 1.0) / 2.0


def _reflect(pos: float, size: int, align_corners: bool) -> float:
    low, high = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
    span = high - low
    if span <= 0:
        return 0.0
    pos = abs(pos - low)
    flips, extra = divmod(pos, span)
    return low + extra if int(flips) % 2 == 0 else high - extra


def grid_sample_2d(
    x: np.ndarray, grid: np.ndarray, mode: str, padding_mode: str, align_corners: bool
) -> np.ndarray:
    """Sample ``x [N, C, H, W]`` at ``grid [N, H_out, W_out, 2]`` (float64)."""
    n, c, h, w = x.shape
    _, oh, ow, _ = grid.shape
    out = np.zeros((n, c, oh, ow))

    def pixel(b: int, yy: int, xx: int) -> np.ndarray:
        if 0 <= yy < h and 0 <= xx < w:
            return x[b, :, yy, xx]
        return np.zeros(c)  # only reachable with zeros padding

    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                px = _unnormalize(float(grid[b, i, j, 0]), w, align_corners)
                py = _unnormalize(float(grid[b, i, j, 1]), h, align_corners)
                if padding_mode == "reflection":
                    px, py = _reflect(px, w, align_corners), _reflect(py, h, align_corners)
                if padding_mode in ("border", "reflection"):
                    px, py = min(max(px, 0.0), w - 1.0), min(max(py, 0.0), h - 1.0)
                if mode == "nearest":
                    out[b, :, i, j] = pixel(b, int(np.rint(py)), int(np.rint(px)))
                    continue
                x0, y0 = math.floor(px), math.floor(py)
                tx, ty = px - x0, py - y0
                out[b, :, i, j] = (
                    (1 - tx) * (1 - ty) * pixel(b, y0, x0)
                    + tx * (1 - ty) * pixel(b, y0, x0 + 1)
                    + (1 - tx) * ty * pixel(b, y0 + 1, x0)
                    + tx * ty * pixel(b, y0 + 1, x0 + 1)
                )
    return out
