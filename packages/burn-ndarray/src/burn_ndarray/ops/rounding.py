"""Half-precision results of float32 work: rounding to bfloat16 by a compiled pass, and the
bfloat16 ReLU, its gradient, the bias add of a bfloat16 Linear and GELU on the values' bits
(`burn_ndarray.kernels.bfloat16`).

Every half-precision matmul, convolution, activation and pooling of burn-ndarray computes in
float32 and rounds its result once to the operands' dtype (`to_dtype`); an autocast step
(`burn.tensor.autocast`) does so for every "low" op, so the rounding is a large share of what it
pays over float32. `to_dtype` gives ml_dtypes' bits (round to nearest even, NaN made quiet) in
2.3x less time for bfloat16 from float32; other pairs, small arrays and arrays whose elements do
not fill one block of memory take NumPy's ``astype``. Results keep the layout of the values (a
channels-last conv output stays channels-last).

Example:
    >>> import numpy as np
    >>> from burn_ndarray.runtime.dtypes import BF16
    >>> to_dtype(np.array([1.0, 1.00390625, 1.01171875], np.float32), BF16).tolist()  # ties to even
    [1.0, 1.0, 1.015625]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray import kernels
from burn_ndarray.runtime import split
from burn_ndarray.runtime.dtypes import BF16, F32

Array = Any
# Below this many elements the kernel call costs more than ml_dtypes' cast saves.
COMPILED_MIN_SIZE = 1 << 12
_U16, _U32 = np.dtype(np.uint16), np.dtype(np.uint32)


def to_dtype(values: Array, dtype: Any) -> Array:
    """`values` as `dtype` (no copy when it is theirs already), layout kept; float32 to bfloat16
    by the compiled rounding.

    Example:
        >>> import numpy as np
        >>> to_dtype(np.ones(3, np.float32), np.float32).dtype
        dtype('float32')
    """
    if dtype is BF16 and values.dtype is F32 and values.size >= COMPILED_MIN_SIZE:
        out = _bits_pass("narrow", values, None, BF16)
        if out is not None:
            return out
    return values.astype(dtype, copy=False)


def relu(x: Array) -> Array | None:
    """``maximum(x, 0)`` of a bfloat16 array on its bits, layout kept; None for the caller's path
    (another dtype, small, gaps in memory, or numba missing)."""
    if x.dtype is not BF16 or x.size < COMPILED_MIN_SIZE:
        return None
    return _bits_pass("relu", x, None, BF16)


def relu_backward(output: Array, grad: Array) -> Array | None:
    """``where(output > 0, grad, 0)`` of bfloat16 arrays of one layout on their bits; None for the
    caller's path."""
    if output.dtype is not BF16 or grad.dtype is not BF16 or output.size < COMPILED_MIN_SIZE:
        return None
    if output.shape != grad.shape or output.strides != grad.strides:
        return None
    return _bits_pass("relu_backward", output, grad, BF16)


def gelu(x: Array) -> Array | None:
    """GELU of a bfloat16 array in one compiled pass (widened a block at a time, the float32
    kernel, rounded), layout kept; None for the caller's path.

    Example:
        >>> import numpy as np
        >>> gelu(np.ones(8, BF16)) is None  # small: the caller's path
        True
    """
    if x.dtype is not BF16 or x.size < COMPILED_MIN_SIZE:
        return None
    return _bits_pass("gelu", x, None, BF16)


def gelu_backward(x: Array, grad: Array) -> Array | None:
    """``grad * gelu'(x)`` for a bfloat16 `x` and a float32 `grad` of one layout (an autocast
    step's), float32, in one compiled pass that widens `x` a block at a time; None for the
    caller's path."""
    if x.__class__ is not np.ndarray or grad.__class__ is not np.ndarray:
        return None
    if x.dtype is not BF16 or grad.dtype is not F32 or x.size < COMPILED_MIN_SIZE:
        return None
    if x.shape != grad.shape or x.strides != tuple(s // 2 for s in grad.strides):
        return None
    flat, grad_flat = split.flat_in_memory_order(x), split.flat_in_memory_order(grad)
    compiled = kernels.load("bfloat16")
    if flat is None or grad_flat is None or compiled is None:
        return None
    out = np.empty_like(grad)
    out_flat = split.flat_in_memory_order(out)
    if out_flat is None:  # pragma: no cover - empty_like of a dense array is dense
        return None
    args = (flat.size, split.copy_parts(flat.size), flat.view(_U16), grad_flat, out_flat)
    split.run_ranges(compiled.gelu_backward_range, compiled.gelu_backward, *args)
    return out


def add_row(x: Array, row: Array) -> Array | None:
    """``x + row`` for a C-contiguous bfloat16 `x` and a bfloat16 `row` as long as its last axis
    (a Linear layer's bias add under autocast) in one compiled pass, ml_dtypes' bits; None for
    the caller's path (other dtypes or layouts, small, a NaN in `row`, or numba missing).

    Example:
        >>> import numpy as np
        >>> x = np.ones((4096, 2), BF16)
        >>> add_row(x, np.array([0.5, -1.0], BF16))[0].tolist()  # doctest: +SKIP
        [1.5, 0.0]
    """
    if x.__class__ is not np.ndarray or row.__class__ is not np.ndarray:
        return None
    if x.dtype is not BF16 or row.dtype is not BF16 or x.size < COMPILED_MIN_SIZE:
        return None
    if row.ndim != 1 or x.ndim < 1 or x.shape[-1] != row.shape[0] or not x.flags.c_contiguous:
        return None
    compiled = kernels.load("bfloat16")
    if compiled is None:
        return None
    wide_row = row.astype(F32)
    if np.isnan(wide_row).any():  # a NaN-NaN pair keeps the row's NaN in ml_dtypes: not the CPU's
        return None
    out = np.empty(x.shape, BF16)
    rows = x.size // row.shape[0]
    parts = split.copy_parts(x.size)
    args = (x.reshape(-1).view(_U16), wide_row, out.reshape(-1).view(_U16))
    split.run_ranges(compiled.add_row_range, compiled.add_row, rows, parts, *args)
    return out


def _bits_pass(kernel: str, x: Array, other: Array | None, dtype: Any) -> Array | None:
    """`kernel` of `burn_ndarray.kernels.bfloat16` over the integer views of `x` (and `other`),
    into a new `dtype` array of `x`'s layout; None when an operand is no plain array whose
    elements fill one block of memory, or numba is missing."""
    if x.__class__ is not np.ndarray or (other is not None and other.__class__ is not np.ndarray):
        return None
    flat = split.flat_in_memory_order(x)
    other_flat = None if other is None else split.flat_in_memory_order(other)
    if flat is None or (other is not None and other_flat is None):
        return None
    compiled = kernels.load("bfloat16")
    if compiled is None:
        return None
    out = np.empty_like(x, dtype=dtype)  # order K: x's layout, so the flat views line up
    out_flat = split.flat_in_memory_order(out)
    if out_flat is None:  # pragma: no cover - empty_like of a dense array is dense
        return None
    bits = _U32 if x.dtype.itemsize == 4 else _U16
    args = [flat.view(bits)]
    if other_flat is not None:
        args.append(other_flat.view(_U16))
    args.append(out_flat.view(_U16))
    parts = split.copy_parts(flat.size)
    split.run_ranges(getattr(compiled, f"{kernel}_range"), getattr(compiled, kernel), flat.size, parts, *args)
    return out
