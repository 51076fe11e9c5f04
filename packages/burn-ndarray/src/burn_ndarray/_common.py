"""What NumPy primitives do differently from the shared bodies (`burn.backend.xp.tensor_common`):
host data adopted without copies, the one CPU device, sums into an array by ``np.bincount`` and
``np.add.at``, branch-free selection, and bfloat16 sorting. One body backs the ``float_``, ``int_``
and ``bool_`` names (`CommonOps`).

Primitives are NumPy arrays, or NumPy scalars (``np.float32(1.0)``...) where a ufunc was applied to
0-d arrays: both have ``shape``, ``dtype``, ``ndim``, ``reshape``, ``transpose`` and ``astype``, so
only the functions that write (``slice_assign``) or need an array (`into_data`) normalize them.
"""

from __future__ import annotations

from functools import partial
from typing import Any, ClassVar

import numpy as np

from burn.backend.device import Device
from burn.backend.xp import tensor_common as tc
from burn.backend.xp.tensor_common import XpTensorBase, check_bounds, check_scatter
from burn.errors import DeviceError, DTypeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn_ndarray._dtypes import BF16, DTYPE_OF, FLOATS
from burn_ndarray._select import where

Array = Any  # np.ndarray or a NumPy scalar (0-d results)

linear_index = partial(tc.linear_index, np)
"""`tc.linear_index` on NumPy: ``linear_index(indices, dim, shape)``, as ``np.intp``."""

__all__ = ["CommonOps", "check_bounds", "linear_index"]


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


class CommonOps(XpTensorBase):
    """NumPy's own kind-agnostic ops and hooks; before the shared kind mixins in the MRO."""

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

    float_into_data = int_into_data = bool_into_data = into_data
    float_device = int_device = bool_device = device
    float_to_device = int_to_device = bool_to_device = to_device
    float_scatter_add = int_scatter_add = scatter_add
    float_select_add = int_select_add = select_add
