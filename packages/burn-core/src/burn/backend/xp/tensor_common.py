"""Tensor ops that behave the same for every kind (float, int, bool): metadata, shape ops, gather
and select, masks, sorting, max/min. Each is a plain function taking ``self`` so that one body
backs the ``float_``, ``int_`` and ``bool_`` methods (see `float_ops.XpFloatOps`).

Primitives are arrays of the backend's namespace (``self.xp``), or NumPy scalars where NumPy
applied a ufunc to 0-d arrays: both have ``shape``, ``dtype``, ``ndim``, ``reshape``,
``transpose`` and ``astype``. They may be views and are never written to.

What differs between namespaces stays in the backend: where a primitive lives (``from_data``,
``into_data``, ``device``, ``to_device``) and how values are summed into an array (``scatter_add``,
``select_add``), plus the hooks of `XpTensorBase`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar, TypeVar

import numpy as np

from burn.backend.device import Device
from burn.backend.xp.dtypes import DTYPE_OF, F32
from burn.errors import ShapeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

Array = Any
C = TypeVar("C", bound=type)
_REVERSE = slice(None, None, -1)
_ALL = slice(None)


class XpTensorBase:
    """What the shared ops read from the backend: its namespace, index type and hooks."""

    xp: ClassVar[ModuleType]
    """The array namespace (the module ``numpy`` or ``cupy``), set on the backend class."""
    _int_np: np.dtype
    """The element type of int tensors created without a dtype, and of indices."""
    _sort_as_f32: ClassVar[frozenset[np.dtype]] = frozenset()
    """Dtypes sorted by float32 keys (the same order): those the namespace sorts wrong, or slowly."""

    def _from_data(self, op: str, data: TensorData, accepts: frozenset[DType], device: Device) -> Array:
        """The primitive holding `data` on `device`; a DTypeError unless its dtype is in `accepts`."""
        raise NotImplementedError(f"{type(self).__name__}: _from_data")

    def _where(self, mask: Array, a: Array, b: Array) -> Array:
        """`a` where `mask` holds, else `b` (broadcast), of their promoted dtype."""
        return self.xp.where(mask, a, b)


def bind_ufuncs(xp: Any, table: Mapping[str, str]) -> Callable[[C], C]:
    """A class decorator binding each op of `table` (op name: ufunc name) to ``xp``'s ufunc.

    Ufuncs are not descriptors: ``self.float_add(a, b)`` *is* ``xp.add(a, b)``, with no Python frame
    in between. Ops the decorated class defines itself are left as they are.
    """

    def bind(cls: C) -> C:
        for name, ufunc in table.items():
            if name not in cls.__dict__:
                setattr(cls, name, getattr(xp, ufunc))
        return cls

    return bind


# -- metadata, shape ops --------------------------------------------------------------------------
def get_dtype(self: Any, tensor: Array) -> DType:
    return DTYPE_OF[tensor.dtype]


def reshape(self: Any, tensor: Array, shape: tuple[int, ...]) -> Array:
    return tensor.reshape(shape)


def permute(self: Any, tensor: Array, axes: tuple[int, ...]) -> Array:
    return tensor.transpose(axes)


def flip(self: Any, tensor: Array, axes: tuple[int, ...]) -> Array:
    return tensor[tuple(_REVERSE if d in axes else _ALL for d in range(tensor.ndim))]


def expand(self: Any, tensor: Array, shape: tuple[int, ...]) -> Array:
    # A read-only broadcast view (zero strides); primitives are never written to, so sharing is safe.
    return self.xp.broadcast_to(tensor, shape)


def slice_(self: Any, tensor: Array, slices: tuple[slice, ...]) -> Array:
    return tensor[slices]


def slice_assign(self: Any, tensor: Array, slices: tuple[slice, ...], value: Array) -> Array:
    out = self.xp.array(tensor)  # a fresh, writable copy (also turns NumPy scalars into 0-d arrays)
    out[slices] = value
    return out


def cat(self: Any, tensors: Sequence[Array], dim: int) -> Array:
    return self.xp.concatenate(tensors, axis=dim)


def swap_dims(self: Any, tensor: Array, dim1: int, dim2: int) -> Array:
    return tensor.swapaxes(dim1, dim2)


def repeat_dim(self: Any, tensor: Array, dim: int, times: int) -> Array:
    # A broadcast view with a new axis before `dim`, flattened into it: exactly one copy.
    shape = tensor.shape
    tiled = self.xp.broadcast_to(tensor[(_ALL,) * dim + (None,)], shape[:dim] + (times,) + shape[dim:])
    return tiled.reshape(shape[:dim] + (times * shape[dim],) + shape[dim + 1 :])


# -- indexing -------------------------------------------------------------------------------------
def gather(self: Any, dim: int, tensor: Array, indices: Array) -> Array:
    if indices.ndim != tensor.ndim:
        raise ShapeError(
            f"gather: indices of shape {indices.shape} must have the rank of the tensor {tensor.shape}"
        )
    if indices.shape != tensor.shape:  # PyTorch allows an index smaller in the other dims
        tensor = tensor[tuple(_ALL if d == dim else slice(0, n) for d, n in enumerate(indices.shape))]
    return self.xp.take_along_axis(tensor, indices, axis=dim)


def check_bounds(op: str, indices: Array, size: int) -> None:
    """An IndexError unless every index is in ``[0, size)``."""
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise IndexError(f"{op}: indices out of range [0, {size}): min {indices.min()}, max {indices.max()}")


def check_scatter(op: str, indices: Array, values: Array, shape: tuple[int, ...]) -> None:
    """A ShapeError unless `indices` and `values` have one shape, of the tensor's rank."""
    if indices.shape != values.shape or indices.ndim != len(shape):
        raise ShapeError(
            f"{op}: indices {indices.shape} and values {values.shape} must have one shape, "
            f"of the tensor's rank ({shape})"
        )


def linear_index(xp: Any, indices: Array, dim: int, shape: tuple[int, ...], dtype: Any = np.intp) -> Array:
    """Flat (row-major) positions in an array of `shape` that `indices` names along `dim`, the
    other coordinates being the index's own position (scatter/gather semantics), as `dtype`."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat = indices.astype(dtype) * strides[dim]
    for d, n in enumerate(indices.shape):
        if d != dim and strides[d]:
            grid = xp.arange(n, dtype=dtype) * strides[d]
            flat = flat + grid.reshape((n,) + (1,) * (indices.ndim - d - 1))
    return flat


def select(self: Any, tensor: Array, dim: int, indices: Array) -> Array:
    return tensor.take(indices, axis=dim)


def mask_where(self: Any, tensor: Array, mask: Array, value: Array) -> Array:
    return self._where(mask, value, tensor)


def mask_fill(self: Any, tensor: Array, mask: Array, value: Any) -> Array:
    # The value typed like the tensor, so the result keeps the tensor's dtype (a Python scalar
    # would let bfloat16 widen; ints of another width would promote).
    return self._where(mask, tensor.dtype.type(value), tensor)


# -- sorting --------------------------------------------------------------------------------------
def _argsort(self: Any, tensor: Array, dim: int, descending: bool) -> Array:
    keys = tensor.astype(F32) if tensor.dtype in self._sort_as_f32 else tensor
    if not descending:
        return self.xp.argsort(keys, axis=dim, kind="stable")  # NaNs last
    # Stable descending: sort the reversed axis ascending, reverse the order, map positions back.
    # Ties keep their original order, and NaNs (largest in sort order) come first.
    rev = (_ALL,) * dim + (_REVERSE,)
    return (tensor.shape[dim] - 1) - self.xp.argsort(keys[rev], axis=dim, kind="stable")[rev]


def sort_with_indices(self: Any, tensor: Array, dim: int, descending: bool) -> tuple[Array, Array]:
    indices = _argsort(self, tensor, dim, descending)
    return self.xp.take_along_axis(tensor, indices, axis=dim), indices.astype(self._int_np, copy=False)


def sort(self: Any, tensor: Array, dim: int, descending: bool) -> Array:
    if descending or tensor.dtype in self._sort_as_f32:
        return self.xp.take_along_axis(tensor, _argsort(self, tensor, dim, descending), axis=dim)
    return self.xp.sort(tensor, axis=dim, kind="stable")


def argsort(self: Any, tensor: Array, dim: int, descending: bool) -> Array:
    return _argsort(self, tensor, dim, descending).astype(self._int_np, copy=False)


# -- max / min (float and int) --------------------------------------------------------------------
def argmax(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.argmax(axis=dim, keepdims=True).astype(self._int_np, copy=False)


def argmin(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.argmin(axis=dim, keepdims=True).astype(self._int_np, copy=False)


def max_dim(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.max(axis=dim, keepdims=True)


def min_dim(self: Any, tensor: Array, dim: int) -> Array:
    return tensor.min(axis=dim, keepdims=True)


def max_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    indices = tensor.argmax(axis=dim, keepdims=True).astype(self._int_np, copy=False)
    return tensor.max(axis=dim, keepdims=True), indices


def min_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    indices = tensor.argmin(axis=dim, keepdims=True).astype(self._int_np, copy=False)
    return tensor.min(axis=dim, keepdims=True), indices


def max_(self: Any, tensor: Array) -> Array:
    return tensor.max().reshape(1)


def min_(self: Any, tensor: Array) -> Array:
    return tensor.min().reshape(1)
