"""Dtype tables of the op modules: burn-core's (`burn.backend.xp.dtypes`; CuPy arrays carry NumPy
dtypes), bfloat16 included where CuPy computes with it.

CuPy 14 supports ``ml_dtypes.bfloat16`` arrays (its v14 upgrade guide: "initial support ... most
functionality should work", NumPy 2.1.2 or later). float16 and bfloat16 (`LOW`) go through
float32 in burn-cuda's own kernels and in reductions, sorts and scatters.
"""

from __future__ import annotations

import numpy as np

from burn.backend.xp import dtypes as xp_dtypes
from burn.backend.xp.dtypes import BF16, BOOL, BOOL_DTYPES, F16, F32, F64, I64, LOW, U64, work
from burn.foundations.dtype import DType


def _cupy_has_bfloat16() -> bool:
    """CuPy 14+ on NumPy 2.1.2+ (its bfloat16 comes from ml_dtypes, which burn-core requires);
    False without CuPy (the tables still load, for the fusion code tested without a GPU)."""
    try:
        import cupy as cp
    except ImportError:
        return False
    major = int(cp.__version__.split(".")[0])
    return major >= 14 and np.lib.NumpyVersion(np.__version__) >= "2.1.2"


BFLOAT16 = _cupy_has_bfloat16()
"""Whether this CuPy computes with bfloat16 (else `SUPPORTED` leaves it out)."""

SUPPORTED = frozenset(d for d in DType if d is not DType.BF16 or BFLOAT16)
"""Every burn dtype (bfloat16 only with `BFLOAT16`)."""

NP_OF: dict[DType, np.dtype] = {d: xp_dtypes.NP_OF[d] for d in SUPPORTED}
DTYPE_OF: dict[np.dtype, DType] = {v: k for k, v in NP_OF.items()}

FLOAT_DTYPES = xp_dtypes.FLOAT_DTYPES & SUPPORTED
INT_DTYPES = xp_dtypes.INT_DTYPES & SUPPORTED
FLOATS = frozenset(NP_OF[d] for d in FLOAT_DTYPES)

__all__ = [
    "BF16",
    "BFLOAT16",
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
    "LOW",
    "NP_OF",
    "SUPPORTED",
    "U64",
    "work",
]
