"""GELU forward and backward by the compiled float32 kernels of `_gelu_kernels`.

From `_parallel.GELU_COMPILED_MIN_SIZE` elements, float32 GELU (and float16/bfloat16, computed
in float32 like the NumPy path) runs as one compiled pass instead of ~40 NumPy passes: about 6x
faster on one thread (4M elements: 28 -> 4.8 ms forward, 34 -> 6.4 ms backward), split on the TBB
pool from `NATIVE_PER_THREAD` elements per thread. float64 keeps the NumPy path (its float64 erf
fit).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray import _parallel
from burn_ndarray._dtypes import BF16, F16, F32

Array = Any
# Elements per thread before a pass is split (2 threads, split / whole time, forward and
# backward): on the TBB pool 8K elements 0.90 / 0.85, 16K 0.83 / 0.78, 32K 0.66 / 0.63; on the
# Python pool 128K 1.18 / 0.93, 256K 0.68 / 0.62.
NATIVE_PER_THREAD = 1 << 12
PER_THREAD = 1 << 17
_HALF_FLOATS = (F16, BF16)


def compiled_gelu(x: Array, grad: Array | None = None) -> Array | None:
    """GELU of `x`, or with `grad` its backward pass ``grad * gelu'(x)``, in `x`'s memory layout.

    None (the caller takes the NumPy path) unless the operands are NumPy arrays of one float32,
    float16 or bfloat16 dtype that fill one block of memory in the same layout, and numba is
    installed.
    """
    dtype = x.dtype
    if x.__class__ is not np.ndarray or (dtype is not F32 and dtype not in _HALF_FLOATS):
        return None
    if grad is not None and (grad.__class__ is not np.ndarray or grad.dtype is not dtype):
        return None
    if _parallel.kernels() is None:
        return None
    if dtype is F32:  # in place of x's layout, when its elements fill one block of memory
        flat = _parallel.flat_in_memory_order(x)
        if flat is None or (grad is not None and grad.strides != x.strides):
            return None
        out = np.empty_like(x)
        out_flat = out.ravel(order="K")  # a view whose order is flat's
        grad_flat = None if grad is None else grad.ravel(order="K")
    else:  # computed in float32 like the NumPy path: C-ordered float32 copies
        flat = np.ascontiguousarray(x, F32).reshape(-1)
        out = np.empty(x.shape, F32)
        out_flat = out.reshape(-1)
        grad_flat = None if grad is None else np.ascontiguousarray(grad, F32).reshape(-1)
    from burn_ndarray import _gelu_kernels as compiled
    from burn_ndarray._kernels_parallel import run_ranges

    parts = _parallel.compiled_parts(flat.size, PER_THREAD, NATIVE_PER_THREAD)
    if grad_flat is None:
        run_ranges(compiled.gelu_range, compiled.gelu, flat.size, parts, flat, out_flat)
    else:
        run_ranges(
            compiled.gelu_backward_range, compiled.gelu_backward, flat.size, parts, flat, grad_flat, out_flat
        )
    return out if dtype is F32 else out.astype(dtype)
