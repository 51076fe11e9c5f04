"""NumPy dtype tables for array namespaces whose arrays carry NumPy dtypes (NumPy, CuPy).

Built once at import. The dtype objects are burn's own (``DType.numpy``), so a primitive's
``dtype`` may be compared with ``is`` on NumPy (its dtypes are singletons); shared code compares
with ``==`` or set membership, which holds for every namespace.
"""

from __future__ import annotations

import numpy as np

from burn.foundations.dtype import DType

NP_OF: dict[DType, np.dtype] = {d: d.numpy for d in DType}
"""The NumPy dtype of each burn dtype (bfloat16 is ``ml_dtypes.bfloat16``)."""

DTYPE_OF: dict[np.dtype, DType] = {v: k for k, v in NP_OF.items()}
"""The burn dtype of each NumPy dtype a primitive may carry."""

F64 = NP_OF[DType.F64]
F32 = NP_OF[DType.F32]
F16 = NP_OF[DType.F16]
BF16 = NP_OF[DType.BF16]
I64 = NP_OF[DType.I64]
U64 = np.dtype(np.uint64)
BOOL = NP_OF[DType.BOOL]

LOW = frozenset({F16, BF16})
"""Float types without accurate accumulating kernels: reductions compute in float32, cast back."""

FLOATS = frozenset({F64, F32, F16, BF16})
ALL_DTYPES = frozenset(DType)
FLOAT_DTYPES = frozenset(d for d in DType if d.is_float)
INT_DTYPES = frozenset(d for d in DType if d.is_int)
BOOL_DTYPES = frozenset({DType.BOOL})


def work(dtype: np.dtype) -> np.dtype:
    """The dtype to compute in: float16 and bfloat16 go through float32 (accurate sums, math)."""
    return F32 if dtype in LOW else dtype
