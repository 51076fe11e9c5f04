"""Kind-generic bodies of burn-ndarray's float, int and bool families: one body backs the
``float_``, ``int_`` and ``bool_`` names, each family binding the names it has (`ops.float`,
`ops.int`, `ops.bool`). Not a family. Also `KindOps`, the hooks the shared bodies
(`burn.backend.xp.tensor_common`) read, which NumPy implements its own way.

What NumPy primitives do differently from the shared bodies: host data adopted without copies,
the one CPU device, sums into an array by ``np.bincount`` and ``np.add.at``, branch-free
selection, and bfloat16 sorting. Primitives are NumPy arrays, or NumPy scalars
(``np.float32(1.0)``...) where a ufunc was applied to 0-d arrays: both have ``shape``, ``dtype``,
``ndim``, ``reshape``, ``transpose`` and ``astype``, so only the functions that write
(``slice_assign``) or need an array (`into_data`) normalize them.

The layout ops (unfold, gather_nd / scatter_nd, the assign mode of scatter / select, cross): the
core defaults sort the updates and run a log-step segmented scan to combine repeated targets;
here the sorted runs are reduced by one ``ufunc.reduceat`` (add, mul, max, min). ``assign`` picks
the winners explicitly (the last update of each target in row-major order, one stable argsort):
NumPy's fancy assignment with repeated indices happens to keep the last write but does not
promise it. Either way the final write has distinct targets.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, ClassVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from burn.backend.device import Device
from burn.backend.xp import tensor_common as tc
from burn.backend.xp.tensor_common import XpTensorBase, check_bounds, check_scatter
from burn.errors import DeviceError, DTypeError, ShapeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn_ndarray.ops.select import where
from burn_ndarray.runtime.dtypes import BF16, DTYPE_OF, FLOATS

Array = Any  # np.ndarray or a NumPy scalar (0-d results)

linear_index = partial(tc.linear_index, np)
"""`tc.linear_index` on NumPy: ``linear_index(indices, dim, shape)``, as ``np.intp``."""

_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


class KindOps(XpTensorBase):
    """NumPy's own hooks of the shared bodies; a base of each kind's ops, before the shared kind
    mixins in the MRO."""

    _device: Device

    # ml_dtypes' bfloat16 sort mishandles NaN (the order comes out scrambled): sort float32 keys.
    _sort_as_f32: ClassVar[frozenset[np.dtype]] = frozenset({BF16})
    # np.where branches per element and crawls on random masks: `where` selects by bit masks.
    _where = staticmethod(where)

    def _from_data(self, op: str, data: TensorData, accepts: frozenset[DType], device: Device) -> Array:
        """The primitive for `data`: its array itself, adopted without a copy.

        `TensorData` hands its array over: the Tensor layer copies user data it does not own before
        building a `TensorData`, so copying again here would only cost time on every upload.
        """
        if data.dtype not in accepts:
            raise DTypeError(f"{op}: got {data.dtype.value} data, which is not of this kind")
        return data.array


def into_data(self: Any, tensor: Array) -> TensorData:
    """The contents as `TensorData`, without a copy when the primitive is C-contiguous.

    The array handed out is then a read-only view: tensors are immutable, and a caller writing into
    ``to_data().array`` must not change the tensor. Non-contiguous primitives are copied (writable).
    """
    if tensor.__class__ is np.ndarray and tensor.flags.c_contiguous:
        array = tensor.view()
        array.flags.writeable = False
    else:
        # np.ascontiguousarray would turn 0-d into 1-d; np.array keeps the shape and copies.
        array = np.array(tensor, order="C")
    data = TensorData.__new__(TensorData)
    data.array = array
    data.dtype = DTYPE_OF[array.dtype]
    return data


def device(self: Any, tensor: Array) -> Device:
    return self._device  # type: ignore[no-any-return]


def to_device(self: Any, tensor: Array, device: Device) -> Array:
    if device != self._device:
        raise DeviceError(f"to_device: backend 'ndarray' has only the device ndarray:cpu, got {device}")
    return tensor


def scatter_add(self: Any, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
    shape = tensor.shape
    check_scatter("scatter_add", indices, values, shape)
    check_bounds("scatter_add", indices, shape[dim])
    flat = linear_index(indices, dim, shape).ravel()
    if tensor.dtype in FLOATS:
        # bincount sums in float64 with one final rounding: faster than np.add.at, and more accurate.
        sums = np.bincount(flat, weights=values.astype(np.float64).ravel(), minlength=int(np.prod(shape)))
        total = np.asarray(tensor).astype(np.float64, copy=False).reshape(-1) + sums
        return total.astype(tensor.dtype, copy=False).reshape(shape)
    out = np.array(tensor, order="C")
    np.add.at(out.reshape(-1), flat, values.ravel().astype(out.dtype, copy=False))
    return out


def select_add(self: Any, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    check_bounds("select_add", indices, tensor.shape[dim])
    out = np.array(tensor)
    # A view of our fresh copy with `dim` first: np.add.at accumulates repeated rows.
    np.add.at(
        np.moveaxis(out, dim, 0),
        indices,
        np.moveaxis(np.asarray(values), dim, 0).astype(out.dtype, copy=False),
    )
    return out


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


def cross(self: Any, lhs: Array, rhs: Array, dim: int) -> Array:
    return np.cross(lhs, rhs, axis=dim)
