"""Ops that behave the same for every kind (float, int, bool): host exchange, shape ops, indexing,
sorting. Each is a plain function taking ``self``, so one body backs the ``float_``, ``int_`` and
``bool_`` methods (see `backend.Cuda`). Primitives are CuPy arrays (0-d arrays, never scalars), and
may be views: they are never written to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cupy as cp
import numpy as np

from burn.backend.device import Device
from burn.errors import DTypeError, ShapeError
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType
from burn_cuda import _kernels as k
from burn_cuda._dtypes import DTYPE_OF, F16, F32, FLOATS, I64, U64
from burn_cuda._runtime import device_id

Array = Any  # cupy.ndarray
_REVERSE = slice(None, None, -1)
_ALL = slice(None)


# -- host exchange, metadata --------------------------------------------------------------------
def from_data(self: Any, op: str, data: TensorData, accepts: frozenset[DType], device: Device) -> Array:
    """Upload `data` to `device` (one host-to-device copy)."""
    if data.dtype not in accepts:
        raise DTypeError(f"{op}: got {data.dtype.value} data, which is not of this kind (or not on cuda)")
    with cp.cuda.Device(device_id(device, len(self._devices))):
        return cp.asarray(data.array)


def into_data(tensor: Array) -> TensorData:
    """Download to a C-contiguous host array (waits for the work that produces it)."""
    array = tensor.get(order="C")
    out = TensorData.__new__(TensorData)
    out.array = array
    out.dtype = DTYPE_OF[array.dtype]
    return out


def get_dtype(self: Any, tensor: Array) -> DType:
    return DTYPE_OF[tensor.dtype]


def shape(self: Any, tensor: Array) -> tuple[int, ...]:
    return tensor.shape  # type: ignore[no-any-return]


def device(self: Any, tensor: Array) -> Device:
    return self._devices[tensor.device.id]  # type: ignore[no-any-return]


def to_device(self: Any, tensor: Array, device: Device) -> Array:
    target = device_id(device, len(self._devices))
    if tensor.device.id == target:
        return tensor
    with cp.cuda.Device(target):
        return tensor.copy()  # CuPy copies onto the current device (peer-to-peer where it can)


# -- shape ops ----------------------------------------------------------------------------------
def reshape(self: Any, tensor: Array, shape: tuple[int, ...]) -> Array:
    return tensor.reshape(shape)


def permute(self: Any, tensor: Array, axes: tuple[int, ...]) -> Array:
    return tensor.transpose(axes)


def flip(self: Any, tensor: Array, axes: tuple[int, ...]) -> Array:
    return tensor[tuple(_REVERSE if d in axes else _ALL for d in range(tensor.ndim))]


def expand(self: Any, tensor: Array, shape: tuple[int, ...]) -> Array:
    return cp.broadcast_to(tensor, shape)  # a view with zero strides: never written to


def slice_(self: Any, tensor: Array, slices: tuple[slice, ...]) -> Array:
    return tensor[slices]


def slice_assign(self: Any, tensor: Array, slices: tuple[slice, ...], value: Array) -> Array:
    out = tensor.copy()
    out[slices] = value
    return out


def cat(self: Any, tensors: Sequence[Array], dim: int) -> Array:
    return cp.concatenate(list(tensors), axis=dim)


def swap_dims(self: Any, tensor: Array, dim1: int, dim2: int) -> Array:
    return tensor.swapaxes(dim1, dim2)


def repeat_dim(self: Any, tensor: Array, dim: int, times: int) -> Array:
    # A broadcast view with a new axis before `dim`, flattened into it: exactly one copy.
    shape = tensor.shape
    tiled = cp.broadcast_to(tensor[(_ALL,) * dim + (None,)], shape[:dim] + (times,) + shape[dim:])
    return tiled.reshape(shape[:dim] + (times * shape[dim],) + shape[dim + 1 :])


# -- indexing -----------------------------------------------------------------------------------
def gather(self: Any, dim: int, tensor: Array, indices: Array) -> Array:
    if indices.ndim != tensor.ndim:
        raise ShapeError(
            f"gather: indices of shape {indices.shape} must have the rank of the tensor {tensor.shape}"
        )
    if indices.shape != tensor.shape:  # PyTorch allows an index smaller in the other dims
        tensor = tensor[tuple(_ALL if d == dim else slice(0, n) for d, n in enumerate(indices.shape))]
    return cp.take_along_axis(tensor, indices, axis=dim)


def _positions(indices: Array, dim: int, shape: tuple[int, ...]) -> Array:
    """Flat (row-major) positions in an array of `shape` that `indices` names along `dim`, the
    other coordinates being the index's own position (scatter semantics), as int64."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat = indices.astype(I64) * strides[dim]
    for d, n in enumerate(indices.shape):
        if d != dim and strides[d]:
            grid = cp.arange(n, dtype=I64) * strides[d]
            flat = flat + grid.reshape((n,) + (1,) * (indices.ndim - d - 1))
    return flat


def _scatter(tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    """`tensor` plus `values` summed at `indices` along `dim` (indices/values of one shape)."""
    dtype = tensor.dtype
    if dtype in FLOATS:
        work = F32 if dtype == F16 else dtype
        out = tensor.astype(work, order="C", copy=True)
        add = values.astype(work)
    else:  # ints: two's complement adds in 64 bits, wrapped to the type by the final cast
        out = tensor.astype(I64, order="C", copy=True).view(U64)
        add = values.astype(I64).view(U64)
    if indices.size:
        positions = _positions(indices, dim, tensor.shape)
        k.scatter_add(positions, add, indices.astype(I64), tensor.shape[dim], out.reshape(-1))
    if dtype not in FLOATS:
        out = out.view(I64)
    return out.astype(dtype, copy=False)


def scatter_add(self: Any, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
    if indices.shape != values.shape or indices.ndim != tensor.ndim:
        raise ShapeError(
            f"scatter_add: indices {indices.shape} and values {values.shape} must have one shape, "
            f"of the tensor's rank ({tensor.shape})"
        )
    return _scatter(tensor, dim, indices, values)


def select(self: Any, tensor: Array, dim: int, indices: Array) -> Array:
    return cp.take(tensor, indices, axis=dim)


def select_add(self: Any, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    # Row `indices[i]` of `dim` gets row `i` of `values`: a scatter with the index broadcast.
    values = cp.broadcast_to(values, tensor.shape[:dim] + (indices.shape[0],) + tensor.shape[dim + 1 :])
    index_shape = (1,) * dim + (-1,) + (1,) * (tensor.ndim - dim - 1)
    full = cp.broadcast_to(indices.reshape(index_shape), values.shape)
    return _scatter(tensor, dim, full, values)


def mask_where(self: Any, tensor: Array, mask: Array, value: Array) -> Array:
    return cp.where(mask, value, tensor)


def mask_fill(self: Any, tensor: Array, mask: Array, value: Any) -> Array:
    # The value typed like the tensor, so the result keeps the tensor's dtype.
    return cp.where(mask, tensor.dtype.type(value), tensor)


# -- sorting ------------------------------------------------------------------------------------
def _keys(tensor: Array) -> Array:
    return tensor.astype(F32) if tensor.dtype == F16 else tensor  # exact: same order


def _argsort(tensor: Array, dim: int, descending: bool) -> Array:
    keys = _keys(tensor)
    if not descending:
        return cp.argsort(keys, axis=dim)  # stable (CUB radix sort); NaNs last
    # Stable descending: sort the reversed axis ascending, reverse the order, map positions back.
    # Ties keep their original order, and NaNs come first.
    rev = (_ALL,) * dim + (_REVERSE,)
    return (tensor.shape[dim] - 1) - cp.argsort(keys[rev], axis=dim)[rev]


def sort_with_indices(self: Any, tensor: Array, dim: int, descending: bool) -> tuple[Array, Array]:
    indices = _argsort(tensor, dim, descending)
    return cp.take_along_axis(tensor, indices, axis=dim), indices.astype(self._int_np, copy=False)


def sort(self: Any, tensor: Array, dim: int, descending: bool) -> Array:
    if descending or tensor.dtype == F16:
        return cp.take_along_axis(tensor, _argsort(tensor, dim, descending), axis=dim)
    return cp.sort(tensor, axis=dim)


def argsort(self: Any, tensor: Array, dim: int, descending: bool) -> Array:
    return _argsort(tensor, dim, descending).astype(self._int_np, copy=False)


# -- reductions shared by float and int -----------------------------------------------------------
def argmax(self: Any, tensor: Array, dim: int) -> Array:
    return cp.argmax(tensor, axis=dim, keepdims=True).astype(self._int_np, copy=False)


def argmin(self: Any, tensor: Array, dim: int) -> Array:
    return cp.argmin(tensor, axis=dim, keepdims=True).astype(self._int_np, copy=False)


def max_dim(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.max(axis=dim, keepdims=True)


def min_dim(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.min(axis=dim, keepdims=True)


def max_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    indices = argmax(self, tensor, dim)
    return cp.take_along_axis(tensor, indices, axis=dim), indices


def min_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    indices = argmin(self, tensor, dim)
    return cp.take_along_axis(tensor, indices, axis=dim), indices


def max_(self: Any, tensor: Array) -> Array:
    return tensor.max().reshape(1)


def min_(self: Any, tensor: Array) -> Array:
    return tensor.min().reshape(1)


def host_index(values: np.ndarray) -> Array:
    """A host index table on the current device, as int64."""
    return cp.asarray(np.ascontiguousarray(values, dtype=np.int64))
