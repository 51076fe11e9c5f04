"""Resizing ``[N, C, H, W]`` (nearest, nearest-exact, bilinear, bicubic) and its gradient, separable
along H then W; an axis whose size does not change is left as it is (the identity in every mode).

Index and weight tables come from burn-core's (`burn.backend.tables`, PyTorch's rules, the same the
default ops use), built on the host, cached, and uploaded per call. The nearest modes gather whole
rows then whole columns (`take`); bilinear gathers the two source rows (columns) and blends them;
bicubic applies the interpolation matrices ``A_h @ x @ A_w^T``. The gradient of every mode applies
the transposed matrices ``A_h^T @ grad @ A_w`` (two matmuls), which sums every output's share back
onto the input pixels it came from.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from burn.backend.ops.sampling import _INTERPOLATE_KINDS
from burn.backend.tables import Kind, nearest_exact_index, nearest_index, resample_table
from burn.backend.xp.windows import Pair, work_dtype

Array = Any


def _kind(op: str, mode: str) -> Kind:
    kind = _INTERPOLATE_KINDS.get(mode)
    if kind is None:
        raise ValueError(f"{op}: unknown mode {mode!r}; expected one of {tuple(_INTERPOLATE_KINDS)}")
    return kind


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # cached: shared by every caller
    return array


@functools.lru_cache(maxsize=256)
def matrix(kind: Kind, size: int, out: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """``[out, size]`` host interpolation matrix: output = matrix @ input along one axis."""
    index, weight, width = resample_table(kind, size, out, align_corners)
    m = np.zeros((out, size))
    np.add.at(m, (np.repeat(np.arange(out), width), index), weight.reshape(-1))  # clamped taps add up
    return _frozen(m.astype(dtype))


@functools.lru_cache(maxsize=256)
def _linear_taps(size: int, out: int, align_corners: bool, dtype: np.dtype) -> tuple[np.ndarray, ...]:
    """Bilinear sources ``i0, i1`` of each output position and the weight ``lam`` of ``i1``."""
    index, weight, _ = resample_table("linear", size, out, align_corners)
    pairs = index.reshape(out, 2)
    lam = np.ascontiguousarray(weight[:, 1], dtype=dtype)
    return _frozen(pairs[:, 0].copy()), _frozen(pairs[:, 1].copy()), lam


def interpolate(xp: ModuleType, x: Array, output_size: Pair, mode: str, align_corners: bool) -> Array:
    kind = _kind("interpolate", mode)
    if kind in ("nearest", "nearest_exact"):  # exact picks: no arithmetic, inf/NaN stay put
        pick = nearest_index if kind == "nearest" else nearest_exact_index
        for axis, out in ((2, output_size[0]), (3, output_size[1])):
            if out != x.shape[axis]:
                x = x.take(xp.asarray(pick(x.shape[axis], out)), axis=axis)
        return x
    dtype = work_dtype(x)
    y = x.astype(dtype, copy=False)
    for axis, out in ((2, output_size[0]), (3, output_size[1])):
        size = y.shape[axis]
        if out == size:
            continue
        if kind == "linear":
            i0, i1, lam = _linear_taps(size, out, align_corners, dtype)
            weight = xp.asarray(lam.reshape(-1, 1) if axis == 2 else lam)
            low = y.take(xp.asarray(i0), axis=axis)
            y = low + (y.take(xp.asarray(i1), axis=axis) - low) * weight
        else:
            a = xp.asarray(matrix(kind, size, out, align_corners, dtype))
            y = xp.matmul(a, y) if axis == 2 else xp.matmul(y, a.T)
    return y.astype(x.dtype, copy=False)


def interpolate_backward(
    xp: ModuleType, x: Array, output_grad: Array, output_size: Pair, mode: str, align_corners: bool
) -> Array:
    kind = _kind("interpolate_backward", mode)
    dtype = work_dtype(x, output_grad)
    grad = output_grad.astype(dtype, copy=False)
    for axis, out in ((2, output_size[0]), (3, output_size[1])):
        size = x.shape[axis]
        if out != size:
            a = xp.asarray(matrix(kind, size, out, align_corners, dtype))
            grad = xp.matmul(a.T, grad) if axis == 2 else xp.matmul(grad, a)
    return grad.astype(x.dtype, copy=False)


class XpInterpolateOps:
    """``interpolate`` and its backward on the namespace ``self.xp``, every mode of the contract."""

    xp: ClassVar[ModuleType]

    def interpolate(self, x: Array, output_size: Pair, mode: str, align_corners: bool) -> Array:
        return interpolate(self.xp, x, output_size, mode, align_corners)

    def interpolate_backward(
        self, x: Array, output_grad: Array, output_size: Pair, mode: str, align_corners: bool
    ) -> Array:
        return interpolate_backward(self.xp, x, output_grad, output_size, mode, align_corners)
