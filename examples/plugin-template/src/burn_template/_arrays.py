"""NumPy helpers shared by the float, int and bool ops (the same code serves every kind)."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.errors import DTypeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

# The element types this backend supports, declared in its capabilities.
DTYPES = frozenset({DType.F32, DType.F64, DType.I64, DType.BOOL})


def from_data(op: str, data: TensorData) -> np.ndarray:
    """A private copy of host data (the caller may reuse its buffer)."""
    if data.dtype not in DTYPES:
        raise DTypeError(f"{op}: backend 'template' does not support {data.dtype.value}")
    return np.array(data.array, copy=True)


def into_data(array: np.ndarray) -> TensorData:
    """Host data in the primitive's own dtype."""
    return TensorData.from_numpy(np.array(array, copy=True))


def cast(op: str, array: np.ndarray, dtype: DType) -> np.ndarray:
    """`array` converted to `dtype`, which must be one the backend declares."""
    if dtype not in DTYPES:
        raise DTypeError(f"{op}: backend 'template' does not support {dtype.value}")
    return array.astype(dtype.numpy)


def out(value: Any) -> np.ndarray:
    """Every primitive is an array: NumPy returns scalars from 0-d operations, wrap them back."""
    return np.asarray(value)


def sort_indices(array: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable argsort along `dim`. Descending keeps ties in their original order."""
    if not descending:
        return np.argsort(array, axis=dim, kind="stable")
    # Sort the reversed array ascending, then map positions back: ties stay in order.
    n = array.shape[dim]
    idx = np.flip(np.argsort(np.flip(array, axis=dim), axis=dim, kind="stable"), axis=dim)
    return n - 1 - idx if n else idx


def scatter_add(dim: int, base: np.ndarray, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`base` with `values` summed into the positions `indices` names along `dim`."""
    result = base.copy()
    where: list[Any] = list(np.indices(indices.shape, sparse=True))
    where[dim] = indices
    np.add.at(result, tuple(where), values.astype(result.dtype))
    return result


def select_add(base: np.ndarray, dim: int, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`base` with `values` added at rows `indices` of `dim`; repeated rows accumulate."""
    result = base.copy()
    where: Any = (slice(None),) * dim + (indices,)
    np.add.at(result, where, values.astype(result.dtype))
    return result


def slice_assign(base: np.ndarray, slices: tuple[slice, ...], value: np.ndarray) -> np.ndarray:
    """A copy of `base` with the region `slices` replaced by `value`."""
    result = base.copy()
    result[slices] = value
    return result
