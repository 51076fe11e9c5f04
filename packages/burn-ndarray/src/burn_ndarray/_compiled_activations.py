"""GELU, sigmoid and SiLU (forward and backward) by the compiled float32 kernels of
`_activation_kernels`.

From `_parallel.GELU_COMPILED_MIN_SIZE` / `SIGMOID_COMPILED_MIN_SIZE` elements, float32
activations (and float16/bfloat16 forward passes, computed in float32 like the NumPy paths) run
as one compiled pass instead of the NumPy path's whole-array passes, split on the TBB pool from
`NATIVE_PER_THREAD` (`SIGMOID_NATIVE_PER_THREAD`) elements per thread. One thread: GELU about 6x
faster (4M elements: 28 -> 4.8 ms forward, 34 -> 6.4 ms backward), sigmoid 4x on 4M elements
(8.8 -> 2.1 ms) and 2.5x on a [32, 768] gate block (42 -> 17 us). float64 keeps the NumPy paths
(GELU's float64 erf fit, NumPy's float64 exp); so do half-float sigmoid gradients, which the
NumPy path computes in their own dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray import _parallel
from burn_ndarray._dtypes import BF16, F16, F32

Array = Any
# Elements per thread before a pass is split (2 threads, split / whole time, GELU forward and
# backward): on the TBB pool 8K elements 0.90 / 0.85, 16K 0.83 / 0.78, 32K 0.66 / 0.63; on the
# Python pool 128K 1.18 / 0.93, 256K 0.68 / 0.62.
NATIVE_PER_THREAD = 1 << 12
PER_THREAD = 1 << 17
# Sigmoid's pass is a few times cheaper than GELU's, so the TBB split pays later: 16K elements
# 1.68, 64K 0.79 of the unsplit time (2 threads, tools/bench_thresholds.py).
SIGMOID_NATIVE_PER_THREAD = 1 << 15
_HALF_FLOATS = (F16, BF16)


def compiled_gelu(x: Array, grad: Array | None = None) -> Array | None:
    """GELU of `x`, or with `grad` its backward pass ``grad * gelu'(x)``, in `x`'s memory layout;
    None for the caller's NumPy path (see `_compiled`)."""
    if grad is None:
        return _compiled("gelu", x, None, True, NATIVE_PER_THREAD)
    return _compiled("gelu_backward", x, grad, True, NATIVE_PER_THREAD)


def compiled_sigmoid(x: Array) -> Array | None:
    """``1 / (1 + exp(-x))`` in `x`'s memory layout; None for the caller's NumPy path."""
    return _compiled("sigmoid", x, None, True, SIGMOID_NATIVE_PER_THREAD)


def compiled_sigmoid_backward(output: Array, grad: Array) -> Array | None:
    """``grad * (output * (1 - output))`` for float32 (the NumPy path's bits); None otherwise."""
    return _compiled("sigmoid_backward", output, grad, False, SIGMOID_NATIVE_PER_THREAD)


def compiled_silu(x: Array) -> Array | None:
    """``x * sigmoid(x)`` in `x`'s memory layout; None for the caller's NumPy path."""
    return _compiled("silu", x, None, True, SIGMOID_NATIVE_PER_THREAD)


def _compiled(
    kernel: str, x: Array, other: Array | None, half_floats: bool, native_per_thread: int
) -> Array | None:
    """`kernel` of `_activation_kernels` over `x` (and `other`, the gradient), split on the TBB
    pool from `native_per_thread` elements per thread; or None (the caller takes the NumPy path)
    unless the operands are NumPy arrays of one dtype, float32 (or float16 / bfloat16 when
    `half_floats`: computed in float32), and numba is installed. Operands whose elements fill one
    block of memory in the same layout are read in place and the result takes that layout; others
    are copied in C order first (a [32, 768] gate view: copy and pass 19 us, the NumPy path 48)."""
    dtype = x.dtype
    if x.__class__ is not np.ndarray or (dtype is not F32 and not (half_floats and dtype in _HALF_FLOATS)):
        return None
    if other is not None and (other.__class__ is not np.ndarray or other.dtype is not dtype):
        return None
    if _parallel.kernels() is None:
        return None
    flat = _parallel.flat_in_memory_order(x) if dtype is F32 else None
    if flat is not None and (other is None or other.strides == x.strides):
        # in x's layout, its elements filling one block of memory (a channels-last view too)
        out = np.empty_like(x)
        out_flat = out.ravel(order="K")  # a view whose order is flat's
        other_flat = None if other is None else other.ravel(order="K")
    else:  # half floats, views with gaps (an LSTM's gates), layouts that differ: C-ordered copies
        flat = np.ascontiguousarray(x, F32).reshape(-1)
        out = np.empty(x.shape, F32)
        out_flat = out.reshape(-1)
        other_flat = None if other is None else np.ascontiguousarray(other, F32).reshape(-1)
    from burn_ndarray import _activation_kernels as compiled
    from burn_ndarray._kernels_parallel import run_ranges

    serial, split = getattr(compiled, f"{kernel}_range"), getattr(compiled, kernel)
    parts = _parallel.compiled_parts(flat.size, PER_THREAD, native_per_thread)
    if other_flat is None:
        run_ranges(serial, split, flat.size, parts, flat, out_flat)
    else:
        run_ranges(serial, split, flat.size, parts, flat, other_flat, out_flat)
    return out if dtype is F32 else out.astype(dtype)
