"""Element types (`DType`) shared by every backend."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np


class DType(enum.Enum):
    """An element type. Values are the NumPy-style names (``"float32"``...).

    Example:
        >>> DType.from_any("float32") is DType.F32
        True
        >>> DType.F16.is_float, DType.I64.is_int, DType.BOOL.is_bool
        (True, True, True)
    """

    F64 = "float64"
    F32 = "float32"
    F16 = "float16"
    BF16 = "bfloat16"
    I64 = "int64"
    I32 = "int32"
    I16 = "int16"
    I8 = "int8"
    U8 = "uint8"
    BOOL = "bool"

    def __repr__(self) -> str:
        return f"burn.{self.value}"

    __str__ = __repr__

    @property
    def is_float(self) -> bool:
        return self in _FLOATS

    @property
    def is_int(self) -> bool:
        return self in _INTS

    @property
    def is_bool(self) -> bool:
        return self is DType.BOOL

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return _ITEMSIZE[self]

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype holding this element type on the host (bfloat16 via ml_dtypes)."""
        return to_numpy_dtype(self)

    @staticmethod
    def from_any(value: Any) -> DType:
        """Accept a `DType`, its name (``"float32"``), a NumPy dtype or a NumPy scalar type."""
        if isinstance(value, DType):
            return value
        if isinstance(value, str):
            try:
                return DType(value)
            except ValueError:
                pass
            raise ValueError(f"unknown dtype {value!r}; expected one of {[d.value for d in DType]}")
        try:
            return from_numpy_dtype(np.dtype(value))
        except TypeError as exc:
            raise ValueError(f"unknown dtype {value!r}") from exc


_FLOATS = frozenset({DType.F64, DType.F32, DType.F16, DType.BF16})
_INTS = frozenset({DType.I64, DType.I32, DType.I16, DType.I8, DType.U8})
_ITEMSIZE = {
    DType.F64: 8, DType.F32: 4, DType.F16: 2, DType.BF16: 2, DType.I64: 8,
    DType.I32: 4, DType.I16: 2, DType.I8: 1, DType.U8: 1, DType.BOOL: 1,
}

_NUMPY_CACHE: dict[DType, np.dtype] = {}
_FROM_NUMPY: dict[np.dtype, DType] = {}


def _bfloat16() -> np.dtype:
    try:
        import ml_dtypes
    except ImportError as exc:  # pragma: no cover - ml_dtypes is a dependency of burn-core
        raise ImportError("bfloat16 needs ml_dtypes: pip install ml_dtypes") from exc
    return np.dtype(ml_dtypes.bfloat16)


def to_numpy_dtype(dtype: DType) -> np.dtype:
    """The NumPy dtype for `dtype`."""
    cached = _NUMPY_CACHE.get(dtype)
    if cached is None:
        cached = _bfloat16() if dtype is DType.BF16 else np.dtype(dtype.value)
        _NUMPY_CACHE[dtype] = cached
        _FROM_NUMPY[cached] = dtype
    return cached


def from_numpy_dtype(dtype: np.dtype) -> DType:
    """The `DType` of a NumPy dtype; raises ValueError for types burn does not have."""
    found = _FROM_NUMPY.get(dtype)
    if found is not None:
        return found
    if dtype.name == "bfloat16":
        return DType.BF16
    try:
        found = DType(dtype.name)
    except ValueError:
        raise ValueError(f"NumPy dtype {dtype} has no burn equivalent") from None
    to_numpy_dtype(found)
    return found


for _d in DType:
    if _d is not DType.BF16:
        to_numpy_dtype(_d)

float64 = DType.F64
float32 = DType.F32
float16 = DType.F16
bfloat16 = DType.BF16
int64 = DType.I64
int32 = DType.I32
int16 = DType.I16
int8 = DType.I8
uint8 = DType.U8
bool_ = DType.BOOL
