"""Dtype tables shared by the op modules (CuPy arrays carry NumPy dtypes)."""

from __future__ import annotations

import numpy as np

from burn.tensor.dtype import DType

SUPPORTED = frozenset(d for d in DType if d is not DType.BF16)
"""Every burn dtype but bfloat16, which CuPy 14 has no arithmetic for."""

NP_OF: dict[DType, np.dtype] = {d: np.dtype(d.numpy) for d in SUPPORTED}
DTYPE_OF: dict[np.dtype, DType] = {v: k for k, v in NP_OF.items()}

F64 = NP_OF[DType.F64]
F32 = NP_OF[DType.F32]
F16 = NP_OF[DType.F16]
I64 = NP_OF[DType.I64]
U64 = np.dtype(np.uint64)
BOOL = NP_OF[DType.BOOL]

FLOATS = frozenset({F64, F32, F16})
FLOAT_DTYPES = frozenset(d for d in SUPPORTED if d.is_float)
INT_DTYPES = frozenset(d for d in SUPPORTED if d.is_int)
BOOL_DTYPES = frozenset({DType.BOOL})


def work(dtype: np.dtype) -> np.dtype:
    """The dtype kernels compute in: float16 goes through float32 (accurate sums, CUDA math)."""
    return F32 if dtype == F16 else dtype
