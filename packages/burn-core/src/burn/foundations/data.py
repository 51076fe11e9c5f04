"""`TensorData`: the only form in which tensor contents cross the backend boundary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from burn.foundations.dtype import DType, from_numpy_dtype, to_numpy_dtype


class TensorData:
    """Host-side tensor contents: a C-contiguous NumPy array plus its burn `DType`.

    Backends build primitives from a `TensorData` and give one back from `*_into_data`.
    bfloat16 values are held in an ``ml_dtypes.bfloat16`` array.

    Example:
        >>> data = TensorData([[1.0, 2.0], [3.0, 4.0]], dtype="float32")
        >>> data.shape, data.dtype
        ((2, 2), burn.float32)
        >>> data.convert("float16").array.dtype
        dtype('float16')
    """

    __slots__ = ("array", "dtype")

    array: np.ndarray
    dtype: DType

    def __init__(self, values: Any, dtype: DType | str | None = None) -> None:
        if dtype is not None:
            dtype = DType.from_any(dtype)
            array = np.asarray(values, dtype=to_numpy_dtype(dtype), order="C")  # keeps rank 0
        else:
            array = np.asarray(values, order="C")
            if array.dtype.kind in "US" or array.dtype == object:
                raise TypeError(f"TensorData needs numbers or booleans, got dtype {array.dtype}")
            dtype = from_numpy_dtype(array.dtype)
        self.array = array
        self.dtype = dtype

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> TensorData:
        """Wrap `array` without copying when it is already C-contiguous."""
        data = cls.__new__(cls)
        data.array = np.asarray(array, order="C")
        data.dtype = from_numpy_dtype(data.array.dtype)
        return data

    @classmethod
    def new(cls, values: Sequence[Any], shape: Sequence[int], dtype: DType | str | None = None) -> TensorData:
        """Burn's constructor: flat `values` laid out in `shape` (row-major)."""
        data = cls(values, dtype)
        expected = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
        if data.array.size != expected:
            raise ValueError(f"TensorData.new: {data.array.size} values cannot fill shape {tuple(shape)}")
        data.array = data.array.reshape(tuple(shape))
        return data

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape  # type: ignore[no-any-return]

    @property
    def num_elements(self) -> int:
        return int(self.array.size)

    def convert(self, dtype: DType | str) -> TensorData:
        """This data in another dtype (no copy when it already has it)."""
        dtype = DType.from_any(dtype)
        if dtype is self.dtype:
            return self
        out = TensorData.__new__(TensorData)
        out.array = self.array.astype(to_numpy_dtype(dtype))
        out.dtype = dtype
        return out

    def to_numpy(self) -> np.ndarray:
        return self.array

    def to_list(self) -> Any:
        """Nested Python lists (bfloat16 widened to float)."""
        array = self.array.astype(np.float32) if self.dtype is DType.BF16 else self.array
        return array.tolist()

    def to_bytes(self) -> bytes:
        """Raw little-endian bytes in row-major order."""
        return self.array.astype(self.array.dtype.newbyteorder("<"), copy=False).tobytes()

    @classmethod
    def from_bytes(cls, raw: bytes | memoryview, shape: Sequence[int], dtype: DType | str) -> TensorData:
        """Inverse of `to_bytes`; checks the byte count against `shape` before reading."""
        dtype = DType.from_any(dtype)
        count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
        if count * dtype.itemsize != len(raw):
            raise ValueError(
                f"TensorData.from_bytes: shape {tuple(shape)} of {dtype.value} needs "
                f"{count * dtype.itemsize} bytes, got {len(raw)}"
            )
        np_dtype = to_numpy_dtype(dtype).newbyteorder("<")
        array = np.frombuffer(raw, dtype=np_dtype).reshape(tuple(shape)).astype(to_numpy_dtype(dtype))
        return cls.from_numpy(array)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TensorData):
            return NotImplemented
        same_type = self.dtype is other.dtype and self.shape == other.shape
        return same_type and bool(np.array_equal(self.array, other.array))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TensorData(shape={self.shape}, dtype={self.dtype.value}, {self.array!r})"

    def assert_approx_eq(self, other: TensorData, rtol: float = 1e-5, atol: float = 1e-6) -> None:
        """Raise AssertionError naming the largest difference when the values differ."""
        if self.shape != other.shape:
            raise AssertionError(f"shapes differ: {self.shape} vs {other.shape}")
        np.testing.assert_allclose(
            self.array.astype(np.float64), other.array.astype(np.float64), rtol=rtol, atol=atol
        )
