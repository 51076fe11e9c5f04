"""Moved to `burn.foundations.dtype`; this path keeps working for existing imports."""

from burn.foundations.dtype import DType, from_numpy_dtype, to_numpy_dtype

__all__ = ["DType", "from_numpy_dtype", "to_numpy_dtype"]
