"""How each burn dtype is stored and computed in OpenCL C, and the promotion rule of binary ops."""

from __future__ import annotations

import numpy as np

from burn.tensor.dtype import DType

# Storage type of each dtype in device buffers. float16 is stored as `half` and read and written
# with vload_half/vstore_half, which are core OpenCL (no cl_khr_fp16 needed); bool is one byte 0/1.
STORAGE: dict[DType, str] = {
    DType.F64: "double",
    DType.F32: "float",
    DType.F16: "half",
    DType.I64: "long",
    DType.I32: "int",
    DType.I16: "short",
    DType.I8: "char",
    DType.U8: "uchar",
    DType.BOOL: "uchar",
}

# Type values are computed in (float16 in float; everything else in itself).
COMPUTE: dict[DType, str] = {**STORAGE, DType.F16: "float"}

# NumPy type of a scalar kernel argument in the compute type.
SCALAR_NP: dict[str, type] = {
    "double": np.float64,
    "float": np.float32,
    "long": np.int64,
    "int": np.int32,
    "short": np.int16,
    "char": np.int8,
    "uchar": np.uint8,
}

# Rank used by `wider`: floats beat ints beat bool; within a kind, more bytes win.
_RANK = {
    DType.BOOL: 0,
    DType.U8: 1,
    DType.I8: 1,
    DType.I16: 2,
    DType.I32: 3,
    DType.I64: 4,
    DType.F16: 10,
    DType.BF16: 10,
    DType.F32: 11,
    DType.F64: 12,
}


def wider(a: DType, b: DType) -> DType:
    """The dtype a binary op on `a` and `b` returns: the wider one.

    Example:
        >>> wider(DType.F32, DType.F64), wider(DType.U8, DType.I8)
        (burn.float64, burn.int16)
    """
    if a is b:
        return a
    ra, rb = _RANK[a], _RANK[b]
    if ra == rb:
        # uint8 vs int8 (or float16 vs bfloat16): the next size up holds both.
        return DType.I16 if a.is_int else DType.F32
    return a if ra > rb else b


def load(dtype: DType, ptr: str, index: str) -> str:
    """C expression reading element `index` of buffer `ptr` as its compute type."""
    if dtype is DType.F16:
        return f"vload_half({index}, {ptr})"
    return f"{ptr}[{index}]"


def store(dtype: DType, ptr: str, index: str, value: str) -> str:
    """C statement writing `value` (already in the compute type) to element `index`."""
    if dtype is DType.F16:
        return f"vstore_half_rte({value}, {index}, {ptr});"
    return f"{ptr}[{index}] = {value};"


def is_double(*dtypes: DType) -> bool:
    return DType.F64 in dtypes


def build_options(*dtypes: DType) -> tuple[str, ...]:
    """Build options for a program using `dtypes`: float literals stay single precision unless
    the program computes in double (devices without fp64 reject double literals)."""
    return () if is_double(*dtypes) else ("-cl-single-precision-constant",)


PRELUDE = r"""
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
"""
