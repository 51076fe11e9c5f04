"""NumPy kernels for the ops of `burn.backend.layout_ops`: unfold, gather_nd / scatter_nd, the
assign mode of scatter / select, Burn's OR-accumulating bool scatter / select, cross.

The core defaults sort the updates and run a log-step segmented scan to combine repeated targets;
here the sorted runs are reduced by one ``ufunc.reduceat`` (add, mul, max, min). ``assign`` picks
the winners explicitly (the last update of each target in row-major order, one stable argsort):
NumPy's fancy assignment with repeated indices happens to keep the last write but does not
promise it. Either way the final write has distinct targets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from burn.errors import ShapeError
from burn_ndarray._common import check_bounds, linear_index

Array = Any

_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def unfold(self: Any, tensor: Array, dim: int, size: int, step: int) -> Array:
    """Windows along `dim` as a read-only view (no copy): ``[..., windows, ..., size]``."""
    tensor = np.asarray(tensor)
    shape = tensor.shape
    if shape[dim] < size:  # no window fits: sliding_window_view would raise
        return np.empty((*shape[:dim], 0, *shape[dim + 1 :], size), tensor.dtype)
    view = sliding_window_view(tensor, size, axis=dim)
    if step == 1:
        return view
    return view[(slice(None),) * dim + (slice(None, None, step),)]


def last_writes(flat: np.ndarray) -> np.ndarray:
    """Positions into `flat` (1-D targets) of the last occurrence of each distinct target.

    Example:
        >>> last_writes(np.array([2, 0, 2, 1])).tolist()
        [1, 3, 2]
    """
    n = flat.shape[0]
    if n < 2:
        return np.arange(n)
    order = np.argsort(flat, kind="stable")  # equal targets keep their row-major order
    ordered = flat[order]
    last = np.empty(n, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=last[:-1])
    last[-1] = True
    return order[last]  # type: ignore[no-any-return]


def _nd_rows(op: str, shape: tuple[int, ...], indices: Array) -> tuple[np.ndarray, int]:
    """Flat row numbers (1-D ints) of the ``[..., K]`` `indices` into ``shape[:K]``, and `K`;
    out-of-range indices raise an `IndexError` naming the op, the column and the bound."""
    k = indices.shape[-1]
    pairs = np.asarray(indices).reshape(math.prod(indices.shape[:-1]), k)  # -1 is ambiguous for K = 0
    if k == 0:
        return np.zeros(pairs.shape[0], np.intp), 0
    unsigned = np.dtype(f"u{pairs.dtype.itemsize}")
    flat = None
    for j in range(k):
        column = pairs[:, j]
        # One pass per column: seen as unsigned, a negative index is larger than any bound.
        if column.size and column.view(unsigned).max() >= shape[j]:
            raise IndexError(
                f"{op}: indices[..., {j}] out of range [0, {shape[j]}) for a tensor of shape "
                f"{shape}: min {column.min()}, max {column.max()}"
            )
        stride = math.prod(shape[j + 1 : k])
        term = column * stride if stride != 1 else column
        flat = term if flat is None else flat + term
    return flat, k  # type: ignore[return-value]


def gather_nd(self: Any, tensor: Array, indices: Array) -> Array:
    shape = tuple(tensor.shape)
    rows, k = _nd_rows("gather_nd", shape, indices)
    table = np.asarray(tensor).reshape(-1, *shape[k:])
    return table.take(rows, axis=0).reshape(*indices.shape[:-1], *shape[k:])


def _combine_rows(table: np.ndarray, rows: np.ndarray, updates: np.ndarray, ufunc: np.ufunc) -> None:
    """``table[r] = ufunc(table[r], u1, u2, ...)`` for the updates sent to each row `r`.

    ``ufunc.at`` handles whole rows slowly; instead the updates are sorted by row (stable: each
    run keeps its row-major order), each run is reduced with one ``ufunc.reduceat``, and the
    distinct rows are combined with one fancy-indexed pass."""
    if rows.shape[0] == 0:
        return
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    reduced = ufunc.reduceat(updates[order], starts, axis=0)
    targets = ordered[starts]
    table[targets] = ufunc(table[targets], reduced)


def _assign_rows(out: np.ndarray, rows: np.ndarray, updates: np.ndarray) -> None:
    """``out[rows] = updates`` along axis 0, the last update of a repeated row winning."""
    won = last_writes(rows)
    out[rows[won]] = updates[won]


def scatter_nd(self: Any, tensor: Array, indices: Array, values: Array, mode: str) -> Array:
    shape = tuple(tensor.shape)
    rows, k = _nd_rows("scatter_nd", shape, indices)
    out = np.array(tensor, order="C")  # our own copy, written in place below
    table = out.reshape(-1, *shape[k:])
    updates = np.asarray(values).reshape(rows.shape[0], *shape[k:]).astype(out.dtype, copy=False)
    if mode == "assign":
        _assign_rows(table, rows, updates)
    elif mode in _COMBINE:
        _combine_rows(table, rows, updates, _COMBINE[mode])
    else:
        raise ValueError(f"scatter_nd: unknown mode {mode!r}; expected one of {(*_COMBINE, 'assign')}")
    return out


def scatter_assign(self: Any, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
    shape = tuple(tensor.shape)
    if indices.shape != values.shape or indices.ndim != len(shape):
        raise ShapeError(
            f"scatter_assign: indices {indices.shape} and values {values.shape} must have one shape, "
            f"of the tensor's rank ({shape})"
        )
    check_bounds("scatter_assign", indices, shape[dim])
    out = np.array(tensor, order="C")
    flat = linear_index(indices, dim, shape).ravel()
    _assign_rows(out.reshape(-1), flat, np.asarray(values).ravel().astype(out.dtype, copy=False))
    return out


def select_assign(self: Any, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    check_bounds("select_assign", indices, tensor.shape[dim])
    out = np.array(tensor)
    rows = np.moveaxis(np.asarray(values), dim, 0).astype(out.dtype, copy=False)
    _assign_rows(np.moveaxis(out, dim, 0), np.asarray(indices).astype(np.intp, copy=False), rows)
    return out


def bool_or_scatter(self: Any, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
    """OR-accumulate: every true value sets its target (setting is idempotent, so repeats and
    their order do not matter)."""
    shape = tuple(tensor.shape)
    if indices.shape != values.shape or indices.ndim != len(shape):
        raise ShapeError(
            f"scatter_add: indices {indices.shape} and values {values.shape} must have one shape, "
            f"of the tensor's rank ({shape})"
        )
    check_bounds("scatter_add", indices, shape[dim])
    out = np.array(tensor, order="C")
    flat = linear_index(indices, dim, shape).ravel()
    out.reshape(-1)[flat[np.asarray(values).ravel()]] = True
    return out


def bool_or_select(self: Any, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    check_bounds("select_add", indices, tensor.shape[dim])
    out = np.array(tensor)
    # Unbuffered: `out[idx] |= v` would let a later false row undo an earlier true one.
    np.logical_or.at(np.moveaxis(out, dim, 0), indices, np.moveaxis(np.asarray(values), dim, 0))
    return out


def cross(self: Any, lhs: Array, rhs: Array, dim: int) -> Array:
    return np.cross(lhs, rhs, axis=dim)


class LayoutOps:
    """The shape and indexing ops of `burn.backend.layout_ops` for `burn_ndarray.NdArray`."""

    float_unfold = int_unfold = bool_unfold = unfold
    float_gather_nd = int_gather_nd = bool_gather_nd = gather_nd
    float_scatter_nd = int_scatter_nd = scatter_nd
    float_scatter_assign = int_scatter_assign = bool_scatter_assign = scatter_assign
    float_select_assign = int_select_assign = bool_select_assign = select_assign
    bool_scatter_add = bool_or_scatter
    bool_select_add = bool_or_select
    float_cross = int_cross = cross
