"""NumPy dtype tables shared by every op module: burn-core's (`burn.backend.xp.dtypes`), every
burn dtype included; float16 and bfloat16 (`LOW`) reductions, matmul and module ops compute in
float32 and cast back (NumPy has no BLAS or accumulating kernels for them)."""

from __future__ import annotations

from burn.backend.xp.dtypes import (
    ALL_DTYPES,
    BF16,
    BOOL,
    BOOL_DTYPES,
    DTYPE_OF,
    F16,
    F32,
    F64,
    FLOAT_DTYPES,
    FLOATS,
    INT_DTYPES,
    LOW,
    NP_OF,
)

BF16_SCALAR = BF16.type
"""ml_dtypes' bfloat16 scalar: NumPy would widen a bfloat16 array with a Python float to float32."""

__all__ = [
    "ALL_DTYPES",
    "BF16",
    "BF16_SCALAR",
    "BOOL",
    "BOOL_DTYPES",
    "DTYPE_OF",
    "F16",
    "F32",
    "F64",
    "FLOATS",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "LOW",
    "NP_OF",
]
