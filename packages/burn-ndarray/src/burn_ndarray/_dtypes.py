"""NumPy dtype tables shared by every op module (built once at import)."""

from __future__ import annotations

import numpy as np

from burn.tensor.dtype import DType

NP_OF: dict[DType, np.dtype] = {d: d.numpy for d in DType}
"""The NumPy dtype of each burn dtype (bfloat16 is ``ml_dtypes.bfloat16``)."""

DTYPE_OF: dict[np.dtype, DType] = {v: k for k, v in NP_OF.items()}
"""The burn dtype of each NumPy dtype a primitive may carry."""

F64 = NP_OF[DType.F64]
F32 = NP_OF[DType.F32]
F16 = NP_OF[DType.F16]
BF16 = NP_OF[DType.BF16]
BOOL = NP_OF[DType.BOOL]
BF16_SCALAR = BF16.type

LOW = frozenset({F16, BF16})
"""Float types NumPy has no fast (BLAS) or accurate (accumulating) kernels for: reductions, matmul
and the module ops compute in float32 and cast back."""

ALL_DTYPES = frozenset(DType)
FLOATS = frozenset({F64, F32, F16, BF16})
FLOAT_DTYPES = frozenset(d for d in DType if d.is_float)
INT_DTYPES = frozenset(d for d in DType if d.is_int)
BOOL_DTYPES = frozenset({DType.BOOL})
