"""Resizing ``[N, C, H, W]`` (nearest, bilinear) and its gradient, separable along H then W.

Forward gathers whole rows then whole columns (`cupy.take`) and blends them; the gradient applies
the transposed interpolation matrices ``A_h^T @ grad @ A_w`` (two cuBLAS GEMMs). Index and weight
tables depend only on sizes: they are built on the host and uploaded.
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

from burn_cuda._windows import Pair, work_dtype

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
    i0 = np.minimum(src.astype(np.int64), size - 1)
    i1 = np.minimum(i0 + 1, size - 1)
    return i0, i1, src - i0


def _matrix(size: int, out: int, mode: str, align_corners: bool, dtype: np.dtype) -> Array:
    """``[out, size]`` interpolation matrix: output = matrix @ input along one axis."""
    m = np.zeros((out, size), dtype=np.float64)
    rows = np.arange(out)
    if mode == "nearest":
        m[rows, _nearest(size, out)] = 1.0
    else:
        i0, i1, lam = _linear(size, out, align_corners)
        np.add.at(m, (rows, i0), 1.0 - lam)
        np.add.at(m, (rows, i1), lam)
    return cp.asarray(m.astype(dtype))


def _check_mode(mode: str) -> None:
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"interpolate: unknown mode {mode!r}; expected 'nearest' or 'bilinear'")


def interpolate(x: Array, output_size: Pair, mode: str, align_corners: bool) -> Array:
    _check_mode(mode)
    h, w = x.shape[2:]
    oh, ow = output_size
    if mode == "nearest":
        return x.take(cp.asarray(_nearest(h, oh)), axis=2).take(cp.asarray(_nearest(w, ow)), axis=3)
    dtype = work_dtype(x)
    xw = x.astype(dtype, copy=False)
    h0, h1, lh = _linear(h, oh, align_corners)
    w0, w1, lw = _linear(w, ow, align_corners)
    lh_d = cp.asarray(lh.astype(dtype).reshape(-1, 1))
    lw_d = cp.asarray(lw.astype(dtype))
    top = xw.take(cp.asarray(h0), axis=2)
    rows = top + (xw.take(cp.asarray(h1), axis=2) - top) * lh_d
    left = rows.take(cp.asarray(w0), axis=3)
    out = left + (rows.take(cp.asarray(w1), axis=3) - left) * lw_d
    return out.astype(x.dtype, copy=False)


def interpolate_backward(
    x: Array, output_grad: Array, output_size: Pair, mode: str, align_corners: bool
) -> Array:
    _check_mode(mode)
    dtype = work_dtype(x, output_grad)
    ah = _matrix(x.shape[2], output_size[0], mode, align_corners, dtype)
    aw = _matrix(x.shape[3], output_size[1], mode, align_corners, dtype)
    grad = cp.matmul(cp.matmul(ah.T, output_grad.astype(dtype, copy=False)), aw)
    return grad.astype(x.dtype, copy=False)
