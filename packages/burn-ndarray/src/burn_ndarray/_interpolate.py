"""Resizing ``[N, C, H, W]`` (nearest, nearest-exact, bilinear, bicubic) and its gradient,
separable along H then W.

Nearest and bilinear forwards gather whole rows then whole columns (`np.take`); nearest-exact
and bicubic apply the interpolation matrices ``A_h @ x @ A_w^T`` built from burn-core's tables
(`burn.backend._tables`, PyTorch's index and weight rules). The gradient applies the transposed
matrices ``A_h^T @ grad @ A_w`` (two matmuls), which sums every output's share back onto the
input pixels it came from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend._tables import resample_table
from burn_ndarray._windows import Pair, work_dtype

Array = Any


def _nearest(size: int, out: int) -> np.ndarray:
    return (np.arange(out) * size) // out  # floor(i * size / out), exactly (PyTorch's "nearest")


def _linear(size: int, out: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source indices ``i0, i1`` and the weight ``lam`` of ``i1`` for each output position."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        src = np.maximum((dst + 0.5) * (size / out) - 0.5, 0.0)
    i0 = np.minimum(src.astype(np.intp), size - 1)
    i1 = np.minimum(i0 + 1, size - 1)
    return i0, i1, src - i0


def _matrix(size: int, out: int, mode: str, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """``[out, size]`` interpolation matrix: output = matrix @ input along one axis."""
    m = np.zeros((out, size), dtype=np.float64)
    rows = np.arange(out)
    if mode == "nearest":
        m[rows, _nearest(size, out)] = 1.0
    elif mode in _TABLE_KINDS:
        index, weight, width = resample_table(_TABLE_KINDS[mode], size, out, align_corners)
        np.add.at(m, (np.repeat(rows, width), index), weight.reshape(-1))
    else:
        i0, i1, lam = _linear(size, out, align_corners)
        np.add.at(m, (rows, i0), 1.0 - lam)
        np.add.at(m, (rows, i1), lam)
    return m.astype(dtype)


# Modes computed from burn-core's resampling tables (the kind of table each one uses).
_TABLE_KINDS: dict[str, Any] = {"nearest-exact": "nearest_exact", "bicubic": "cubic"}
_MODES = ("nearest", "nearest-exact", "bilinear", "bicubic")


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"interpolate: unknown mode {mode!r}; expected one of {_MODES}")


def interpolate(x: Array, output_size: Pair, mode: str, align_corners: bool) -> Array:
    _check_mode(mode)
    h, w = x.shape[2:]
    oh, ow = output_size
    if mode == "nearest":
        return x.take(_nearest(h, oh), axis=2).take(_nearest(w, ow), axis=3)
    if mode in _TABLE_KINDS:
        dtype = work_dtype(x)
        ah = _matrix(h, oh, mode, align_corners, dtype)
        aw = _matrix(w, ow, mode, align_corners, dtype)
        out = np.matmul(np.matmul(ah, x.astype(dtype, copy=False)), aw.T)
        return out.astype(x.dtype, copy=False)
    dtype = work_dtype(x)
    xw = x.astype(dtype, copy=False)
    h0, h1, lh = _linear(h, oh, align_corners)
    w0, w1, lw = _linear(w, ow, align_corners)
    lh = lh.astype(dtype).reshape(-1, 1)
    lw = lw.astype(dtype)
    top = xw.take(h0, axis=2)
    rows = top + (xw.take(h1, axis=2) - top) * lh
    left = rows.take(w0, axis=3)
    out = left + (rows.take(w1, axis=3) - left) * lw
    return out.astype(x.dtype, copy=False)


def interpolate_backward(
    x: Array, output_grad: Array, output_size: Pair, mode: str, align_corners: bool
) -> Array:
    _check_mode(mode)
    dtype = work_dtype(x, output_grad)
    ah = _matrix(x.shape[2], output_size[0], mode, align_corners, dtype)
    aw = _matrix(x.shape[3], output_size[1], mode, align_corners, dtype)
    grad = np.matmul(np.matmul(ah.T, output_grad.astype(dtype, copy=False)), aw)
    return grad.astype(x.dtype, copy=False)
