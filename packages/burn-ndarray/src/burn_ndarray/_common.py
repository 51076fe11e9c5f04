"""Ops that behave the same for every kind (float, int, bool): host exchange, shape ops, indexing,
sorting. Each is a plain function taking ``self`` so that one body backs the ``float_``, ``int_``
and ``bool_`` methods (see `backend.NdArray`).

Primitives are NumPy arrays, or NumPy scalars (``np.float32(1.0)``...) where a ufunc was applied to
0-d arrays: both have ``shape``, ``dtype``, ``ndim``, ``reshape``, ``transpose`` and ``astype``, so
only the functions that write (``slice_assign``) or need an array (`into_data`) normalize them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.errors import DeviceError, DTypeError, ShapeError
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType
from burn_ndarray._dtypes import BF16, DTYPE_OF, F32, FLOATS
from burn_ndarray._select import where

Array = Any  # np.ndarray or a NumPy scalar (0-d results)
_REVERSE = slice(None, None, -1)
_ALL = slice(None)


def from_data(op: str, data: TensorData, accepts: frozenset[DType]) -> np.ndarray:
    """The primitive for `data`: its array itself, adopted without a copy.

    `TensorData` hands its array over: the Tensor layer copies user data it does not own before
    building a `TensorData`, so copying again here would only cost time on every upload.
    """
    if data.dtype not in accepts:
        raise DTypeError(f"{op}: got {data.dtype.value} data, which is not of this kind")
    return data.array


def into_data(tensor: Array) -> TensorData:
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


def get_dtype(self: Any, tensor: Array) -> DType:
    return DTYPE_OF[tensor.dtype]


def device(self: Any, tensor: Array) -> Device:
    return self._device  # type: ignore[no-any-return]


def to_device(self: Any, tensor: Array, device: Device) -> Array:
    if device != self._device:
        raise DeviceError(f"to_device: backend 'ndarray' has only the device ndarray:cpu, got {device}")
    return tensor


def reshape(self: Any, tensor: Array, shape: tuple[int, ...]) -> Array:
    return tensor.reshape(shape)


def permute(self: Any, tensor: Array, axes: tuple[int, ...]) -> Array:
    return tensor.transpose(axes)


def flip(self: Any, tensor: Array, axes: tuple[int, ...]) -> Array:
    return tensor[tuple(_REVERSE if d in axes else _ALL for d in range(tensor.ndim))]


def expand(self: Any, tensor: Array, shape: tuple[int, ...]) -> Array:
    # A read-only broadcast view; primitives are never written to, so sharing is safe.
    return np.broadcast_to(tensor, shape)


def slice_(self: Any, tensor: Array, slices: tuple[slice, ...]) -> Array:
    return tensor[slices]


def slice_assign(self: Any, tensor: Array, slices: tuple[slice, ...], value: Array) -> Array:
    out = np.array(tensor)  # a fresh, writable copy (also turns NumPy scalars into 0-d arrays)
    out[slices] = value
    return out


def cat(self: Any, tensors: Sequence[Array], dim: int) -> Array:
    return np.concatenate(tensors, axis=dim)


def swap_dims(self: Any, tensor: Array, dim1: int, dim2: int) -> Array:
    return tensor.swapaxes(dim1, dim2)


def repeat_dim(self: Any, tensor: Array, dim: int, times: int) -> Array:
    # A broadcast view with a new axis before `dim`, flattened into it: exactly one copy.
    shape = tensor.shape
    tiled = np.broadcast_to(tensor[(_ALL,) * dim + (None,)], shape[:dim] + (times,) + shape[dim:])
    return tiled.reshape(shape[:dim] + (times * shape[dim],) + shape[dim + 1 :])


def _gather_source(tensor: Array, dim: int, indices: Array) -> Array:
    """`tensor` cut to the index's extent in the dims other than `dim` (PyTorch allows smaller)."""
    if indices.ndim != tensor.ndim:
        raise ShapeError(
            f"gather: indices of shape {indices.shape} must have the rank of the tensor {tensor.shape}"
        )
    if indices.shape != tensor.shape:
        cut = tuple(_ALL if d == dim else slice(0, n) for d, n in enumerate(indices.shape))
        tensor = tensor[cut]
    return tensor


def gather(self: Any, dim: int, tensor: Array, indices: Array) -> Array:
    return np.take_along_axis(_gather_source(tensor, dim, indices), indices, axis=dim)


def check_bounds(op: str, indices: Array, size: int) -> None:
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise IndexError(f"{op}: indices out of range [0, {size}): min {indices.min()}, max {indices.max()}")


def linear_index(indices: Array, dim: int, shape: tuple[int, ...]) -> np.ndarray:
    """Flat (row-major) positions in an array of `shape` that `indices` names along `dim`, the
    other coordinates being the index's own position (scatter/gather semantics)."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat = indices.astype(np.intp) * strides[dim]
    for d, n in enumerate(indices.shape):
        if d != dim and strides[d]:
            grid = np.arange(n, dtype=np.intp) * strides[d]
            flat = flat + grid.reshape((n,) + (1,) * (indices.ndim - d - 1))
    return flat  # type: ignore[no-any-return]


def scatter_add(self: Any, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
    shape = tensor.shape
    if indices.shape != values.shape or indices.ndim != len(shape):
        raise ShapeError(
            f"scatter_add: indices {indices.shape} and values {values.shape} must have one shape, "
            f"of the tensor's rank ({shape})"
        )
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


def select(self: Any, tensor: Array, dim: int, indices: Array) -> Array:
    return tensor.take(indices, axis=dim)


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


def mask_where(self: Any, tensor: Array, mask: Array, value: Array) -> Array:
    return where(mask, value, tensor)


def mask_fill(self: Any, tensor: Array, mask: Array, value: Any) -> Array:
    # The value typed like the tensor: np.where would widen bfloat16 (and ints) otherwise.
    return where(mask, tensor.dtype.type(value), tensor)


def _sort_keys(tensor: Array) -> Array:
    # ml_dtypes' bfloat16 sort mishandles NaN (the order comes out scrambled): sort float32 keys.
    return tensor.astype(F32) if tensor.dtype is BF16 else tensor


def _argsort(tensor: Array, dim: int, descending: bool) -> Array:
    keys = _sort_keys(tensor)
    if not descending:
        return np.argsort(keys, axis=dim, kind="stable")
    # Stable descending: sort the reversed axis ascending, reverse the order, map positions back.
    # Ties keep their original order, and NaNs (largest for NumPy) come first.
    rev = (_ALL,) * dim + (_REVERSE,)
    return (tensor.shape[dim] - 1) - np.argsort(keys[rev], axis=dim, kind="stable")[rev]


def sort_with_indices(self: Any, tensor: Array, dim: int, descending: bool) -> tuple[Array, Array]:
    indices = _argsort(tensor, dim, descending)
    return np.take_along_axis(tensor, indices, axis=dim), indices.astype(self._int_np, copy=False)


def sort(self: Any, tensor: Array, dim: int, descending: bool) -> Array:
    if descending or tensor.dtype is BF16:
        return np.take_along_axis(tensor, _argsort(tensor, dim, descending), axis=dim)
    return np.sort(tensor, axis=dim, kind="stable")


def argsort(self: Any, tensor: Array, dim: int, descending: bool) -> Array:
    return _argsort(tensor, dim, descending).astype(self._int_np, copy=False)


def argmax(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.argmax(axis=dim, keepdims=True).astype(self._int_np, copy=False)


def argmin(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.argmin(axis=dim, keepdims=True).astype(self._int_np, copy=False)


def max_dim(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.max(axis=dim, keepdims=True)


def min_dim(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.min(axis=dim, keepdims=True)


def max_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    return tensor.max(axis=dim, keepdims=True), tensor.argmax(axis=dim, keepdims=True).astype(
        self._int_np, copy=False
    )


def min_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    return tensor.min(axis=dim, keepdims=True), tensor.argmin(axis=dim, keepdims=True).astype(
        self._int_np, copy=False
    )


def max_(self: Any, tensor: Array) -> Array:
    return tensor.max().reshape(1)


def min_(self: Any, tensor: Array) -> Array:
    return tensor.min().reshape(1)
