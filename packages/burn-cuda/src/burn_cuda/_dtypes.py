"""Dtype tables of the op modules: burn-core's (`burn.backend.xp.dtypes`; CuPy arrays carry NumPy
dtypes) without bfloat16, which CuPy 14 has no arithmetic for."""

from __future__ import annotations

import numpy as np

from burn.backend.xp import dtypes as xp_dtypes
from burn.backend.xp.dtypes import BOOL, BOOL_DTYPES, F16, F32, F64, I64, U64, work
from burn.tensor.dtype import DType

SUPPORTED = frozenset(d for d in DType if d is not DType.BF16)
"""Every burn dtype but bfloat16."""

NP_OF: dict[DType, np.dtype] = {d: xp_dtypes.NP_OF[d] for d in SUPPORTED}
DTYPE_OF: dict[np.dtype, DType] = {v: k for k, v in NP_OF.items()}

FLOAT_DTYPES = xp_dtypes.FLOAT_DTYPES & SUPPORTED
INT_DTYPES = xp_dtypes.INT_DTYPES & SUPPORTED
FLOATS = frozenset(NP_OF[d] for d in FLOAT_DTYPES)

__all__ = [
    "BOOL",
    "BOOL_DTYPES",
    "DTYPE_OF",
    "F16",
    "F32",
    "F64",
    "FLOATS",
    "FLOAT_DTYPES",
    "I64",
    "INT_DTYPES",
    "NP_OF",
    "SUPPORTED",
    "U64",
    "work",
]
