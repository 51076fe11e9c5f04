"""Host-side index and weight tables for the default pooling and interpolation ops.

Every table depends only on sizes and options, never on tensor contents, so building it with
NumPy on the host keeps the defaults within the contract (primitives are never looked into).
Tables are cached and returned read-only; callers copy them into a primitive with `int_table`
or `float_table`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Pair = tuple[int, int]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _read_only(table: np.ndarray, dtype: np.dtype) -> TensorData:
    # Tables are never written, so hand them over read-only: backends may then share them
    # instead of copying (TensorData's array is not the backend's to write into either way).
    array = table if table.dtype == dtype and table.flags.c_contiguous else np.array(table, dtype=dtype)
    if array.flags.writeable:
        array = array.view()
        array.setflags(write=False)
    return TensorData.from_numpy(array)


def int_table(backend: Backend, table: np.ndarray, device: Any) -> P:
    """An int primitive (the backend's int dtype) holding `table`."""
    return backend.int_from_data(_read_only(table, backend.int_dtype.numpy), device)


def float_table(backend: Backend, table: np.ndarray, device: Any, dtype: DType) -> P:
    """A float primitive of `dtype` holding `table`."""
    return backend.float_from_data(_read_only(table, dtype.numpy), device)


@functools.lru_cache(maxsize=256)
def max_pool_index(
    size: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out: Pair
) -> np.ndarray:
    """``[KH*KW, OH, OW]``: for each kernel position and output pixel, the flat index ``h * W + w``
    of the input element it reads (PyTorch's max-pool indices).

    Positions in the padding hold -inf, so argmax picks one only when the whole window is -inf,
    and then it picks kernel position 0; such positions name the window's first unpadded
    element, which is what PyTorch returns for an all -inf window.
    """
    (h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = size, kernel, stride, padding, dilation, out
    rows = _first_valid(np.arange(kh)[:, None] * dh + np.arange(oh)[None, :] * sh - ph, h)  # [KH, OH]
    cols = _first_valid(np.arange(kw)[:, None] * dw + np.arange(ow)[None, :] * sw - pw, w)  # [KW, OW]
    flat = rows[:, None, :, None] * w + cols[None, :, None, :]  # [KH, KW, OH, OW]
    return _frozen(flat.reshape(kh * kw, oh, ow).astype(np.int64))


def _first_valid(positions: np.ndarray, size: int) -> np.ndarray:
    """Replace out-of-range entries of each column of `positions` by the column's first in-range one
    (or 0 when a column has none)."""
    valid = (positions >= 0) & (positions < size)
    first = positions[valid.argmax(axis=0), np.arange(positions.shape[1])]
    first = np.where(valid.any(axis=0), first, 0)
    return np.where(valid, positions, first[None, :])


@functools.lru_cache(maxsize=256)
def avg_pool_counts(size: Pair, kernel: Pair, stride: Pair, padding: Pair, out: Pair) -> np.ndarray:
    """``[OH, OW]``: how many unpadded input elements each pooling window covers."""
    counts = []
    for n, k, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        counts.append(np.minimum(start + k, n) - np.maximum(start, 0))
    return _frozen(np.outer(counts[0], counts[1]).astype(np.float64))


# A resampling table along one axis: ``y[j] = sum_k weight[j, k] * x[index[j, k]]``, stored as the
# flat indices ``[rows * width]`` (for one select), the weights ``[rows, width]`` and ``width``.
# Rows shorter than ``width`` are padded with a valid index and a zero weight.
Table = tuple[np.ndarray, np.ndarray, int]
Kind = Literal["adaptive", "linear", "nearest", "nearest_exact", "cubic"]


def _adaptive(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive-pooling bins: bin ``i`` averages ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)  # ceil division on integers, exact for any size
    width = int((end - start).max())
    offsets = start[:, None] + np.arange(width)[None, :]
    inside = offsets < end[:, None]
    return np.where(inside, offsets, start[:, None]), np.where(inside, 1.0 / (end - start)[:, None], 0.0)


@functools.lru_cache(maxsize=256)
def nearest_index(size: int, out: int) -> np.ndarray:
    """``[out]`` source indices of PyTorch's ``nearest`` mode.

    PyTorch computes ``floor(i * scale)`` with ``scale = size / out`` in float32; we do the same
    so that sizes where float32 rounding moves an index (e.g. 26 -> 22) agree with it.
    """
    if out == size:
        return _frozen(np.arange(out, dtype=np.int64))
    if out == 2 * size:
        return _frozen(np.arange(out, dtype=np.int64) >> 1)
    scale = np.float32(size) / np.float32(out)
    index = np.floor(np.arange(out, dtype=np.float32) * scale).astype(np.int64)
    return _frozen(np.minimum(index, size - 1))


def _linear(size: int, out: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's linear (bilinear, per axis) sources and weights, ``[out, 2]`` each."""
    j = np.arange(out, dtype=np.float64)
    if align_corners:
        src = j * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        src = np.maximum((j + 0.5) * (size / out) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), size - 1)
    w1 = src - i0
    return np.stack([i0, np.minimum(i0 + 1, size - 1)], 1), np.stack([1.0 - w1, w1], 1)


@functools.lru_cache(maxsize=256)
def nearest_exact_index(size: int, out: int) -> np.ndarray:
    """``[out]`` source indices of PyTorch's ``nearest-exact`` mode: the source pixel whose
    centre is nearest, ``floor((i + 0.5) * size / out)`` (the scale a float32, as PyTorch)."""
    scale = np.float32(size) / np.float32(out)
    index = np.floor((np.arange(out, dtype=np.float32) + np.float32(0.5)) * scale).astype(np.int64)
    return _frozen(np.minimum(index, size - 1))


_CUBIC_A = -0.75  # the cubic convolution coefficient PyTorch's bicubic mode uses (Keys' a)


def _cubic(size: int, out: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's bicubic sources and weights along one axis, ``[out, 4]`` each: taps at
    ``floor(src) - 1 .. floor(src) + 2`` clamped into the input (replicated borders), weighted by
    Keys' cubic convolution kernel with ``a = -0.75``; unlike linear, `src` is not clamped at 0."""
    j = np.arange(out, dtype=np.float64)
    if align_corners:
        src = j * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        src = (j + 0.5) * (size / out) - 0.5
    base = np.floor(src)
    t = src - base
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a

    weight = np.stack([far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)], 1)
    index = np.clip(base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :], 0, size - 1)
    return index, weight


def _forward(kind: Kind, size: int, out: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    if kind == "adaptive":
        return _adaptive(size, out)
    if kind == "linear":
        return _linear(size, out, align_corners)
    if kind == "cubic":
        return _cubic(size, out, align_corners)
    if kind == "nearest_exact":
        return nearest_exact_index(size, out)[:, None], np.ones((out, 1))
    return nearest_index(size, out)[:, None], np.ones((out, 1))


def _table(index: np.ndarray, weight: np.ndarray) -> Table:
    return _frozen(index.reshape(-1).astype(np.int64)), _frozen(weight.astype(np.float64)), index.shape[1]


@functools.lru_cache(maxsize=256)
def resample_table(kind: Kind, size: int, out: int, align_corners: bool = False) -> Table:
    """The table taking `size` samples to `out` along one axis (see `Table`)."""
    return _table(*_forward(kind, size, out, align_corners))


@functools.lru_cache(maxsize=256)
def adjoint_table(kind: Kind, size: int, out: int, align_corners: bool = False) -> Table:
    """The transpose of `resample_table`: takes a gradient of `out` samples back to `size`.

    Gradients then flow with a gather (select) and a sum instead of a scatter-add: scatters
    serialize on many devices, and the table is computed once per geometry.
    """
    index, weight = _forward(kind, size, out, align_corners)
    rows = np.repeat(np.arange(out), index.shape[1])
    src, w = index.reshape(-1), weight.reshape(-1)
    keep = w != 0
    # Merge repeated (source, output) pairs, e.g. both linear taps clamped onto the last sample.
    key, inverse = np.unique(src[keep] * out + rows[keep], return_inverse=True)
    summed = np.bincount(inverse, weights=w[keep], minlength=len(key))
    source, target = key // out, key % out  # sorted by source, then target
    counts = np.bincount(source, minlength=size)
    width = max(1, int(counts.max()) if len(counts) else 1)
    slot = np.arange(len(key)) - np.repeat(np.cumsum(counts) - counts, counts)
    table_index = np.zeros((size, width), dtype=np.int64)
    table_weight = np.zeros((size, width))
    table_index[source, slot] = target
    table_weight[source, slot] = summed
    return _table(table_index, table_weight)


_NARROW = 4  # tables up to this width are applied tap by tap (see `_resample`)


def resample(b: Backend, x: P, dim: int, table: Table) -> P:
    """Apply a resampling `table` along `dim`."""
    index, weight, width = table
    shape = b.float_shape(x)
    head, tail = shape[:dim], shape[dim + 1:]
    rows = weight.shape[0]
    device, dtype = b.float_device(x), b.float_get_dtype(x)
    column_shape = (1,) * dim + (rows,) + (1,) * len(tail)
    if width <= _NARROW:
        # Narrow tables (bilinear: 2 taps): one select per tap, weighted and added. Cheaper than a
        # reduction over a tiny axis, which is slow on many backends.
        taps = index.reshape(rows, width)
        out = None
        for k in range(width):
            term = b.float_mul(
                b.float_select(x, dim, int_table(b, taps[:, k], device)),
                float_table(b, weight[:, k].reshape(column_shape), device, dtype),
            )
            out = term if out is None else b.float_add(out, term)
        return out
    # Wide tables (adaptive bins): one select of every tap, one multiply, one sum.
    picked = b.float_reshape(b.float_select(x, dim, int_table(b, index, device)), (*head, rows, width, *tail))
    weight_p = float_table(b, weight.reshape((1,) * dim + (rows, width) + (1,) * len(tail)), device, dtype)
    return b.float_reshape(b.float_sum_dim(b.float_mul(picked, weight_p), dim + 1), (*head, rows, *tail))
