"""Compiled kernels on bfloat16 bits: rounding float32 to bfloat16, ReLU and its gradient on
bfloat16 operands, a bfloat16 matrix plus a bfloat16 row (a Linear layer's bias), and GELU and
its gradient on a bfloat16 input, each one pass over memory.

NumPy has no bfloat16: ml_dtypes gives the dtype, and its cast from float32 takes about 0.5 ns a
value on the development machine, 2.3x the pass here; its element-wise loops run one value at a
time. An autocast step (`burn.tensor.autocast`) rounds the result of every half-precision matmul,
convolution, activation and pooling to bfloat16, so these passes are a large part of what it pays
over float32 (docs/benchmarks-log.md, issue 37).

Rounding (`narrow_range`) is ml_dtypes' conversion, bit for bit: round to nearest, ties to even, on
the float32 bits (``(bits + 0x7FFF + lsb) >> 16``), infinities kept, every NaN made the quiet NaN
``sign | 0x7FC0``. ReLU (`relu_range`) and its gradient (`relu_backward_range`) give the bits that
widening to float32, the float32 kernels of `burn_ndarray.kernels.activation` and rounding back
give: ``maximum(x, 0)`` keeps NaN (made quiet) and maps -0.0 to +0.0; the gradient keeps `grad`'s
value (NaN made quiet) where ``output > 0`` and gives +0.0 elsewhere. Arrays are passed as their
integer views (uint32 for float32, uint16 for bfloat16). The row add (`add_row_range`) gives the
bits of ml_dtypes' ``x + row`` for a NaN-free row: each sum in float32, rounded once (a NaN of
`x` made quiet; with a NaN in the row, whose NaN ml_dtypes' loop would keep, the caller takes
the widening path).

``*_range`` kernels compute elements ``lo`` to ``hi``; the launchers run chunks of them on numba's
TBB pool (`burn_ndarray.runtime.split.run_ranges`): the same bits at any thread count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from burn_ndarray.kernels.activation import gelu_backward_range as _gelu_backward_float32
from burn_ndarray.kernels.activation import gelu_range as _gelu_float32
from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any
_inline = njit(inline="always", error_model="numpy")

_U16, _U32 = np.uint16, np.uint32
_ONE16, _ZERO16 = _U16(1), _U16(0)
_SIGN16 = _U16(0x8000)
_MAGNITUDE16 = _U16(0x7FFF)
_INF16 = _U16(0x7F80)
_QUIET16 = _U16(0x7FC0)
_MAGNITUDE32 = _U32(0x7FFFFFFF)
_BLOCK = 4096  # elements widened at a time: 16 KB of float32, in L1
_INF32 = _U32(0x7F800000)

# Each choice below is written so that LLVM makes it a select and vectorizes the loop: the values
# are computed for every element first. A ReLU gradient whose NaN handling was a call inside one
# arm of the choice stayed a branch: 4.7 ns a value on random bits, 0.15 as it is. The rounding's
# if/else is turned into a select as it stands (0.22 ns a value, the select form 0.34).


@_inline
def _quiet(bits: Any) -> Any:
    """`bits` with a NaN made the quiet NaN ``sign | 0x7FC0`` (what a round trip through float32
    and ml_dtypes' rounding gives)."""
    quiet = (bits & _SIGN16) | _QUIET16
    return quiet if (bits & _MAGNITUDE16) > _INF16 else bits


@_inline
def _positive(bits: Any) -> Any:
    """Whether the bfloat16 `bits` hold a value > 0: 0x0001 to 0x7F80 (+inf), as unsigned."""
    return _U16(bits - _ONE16) < _INF16


@jit
def narrow_range(lo: int, hi: int, src: Array, out: Array) -> None:
    """Elements `lo` to `hi` of the float32 bits `src` (uint32) rounded to bfloat16 bits (uint16):
    to nearest, ties to even; NaN made the quiet NaN."""
    xs, outs = src[lo:hi], out[lo:hi]  # indices from 0: no negative-index wrap, so the loop vectorizes
    for i in range(outs.size):
        b = xs[i]
        if (b & _MAGNITUDE32) > _INF32:
            outs[i] = _U16((b >> _U32(16)) & _U32(0x8000) | _U32(0x7FC0))
        else:
            outs[i] = _U16((b + _U32(0x7FFF) + ((b >> _U32(16)) & _U32(1))) >> _U32(16))


@jit
def relu_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """``maximum(x, 0)`` for elements `lo` to `hi` of bfloat16 bits (uint16)."""
    xs, outs = x[lo:hi], out[lo:hi]
    for i in range(outs.size):
        b = xs[i]
        nan_or_zero = (b & _SIGN16) | _QUIET16 if (b & _MAGNITUDE16) > _INF16 else _ZERO16
        outs[i] = b if _positive(b) else nan_or_zero


@jit
def relu_backward_range(lo: int, hi: int, output: Array, grad: Array, out: Array) -> None:
    """``where(output > 0, grad, 0)`` for elements `lo` to `hi` of bfloat16 bits (uint16)."""
    os, gs, outs = output[lo:hi], grad[lo:hi], out[lo:hi]
    for i in range(outs.size):
        g = _quiet(gs[i])  # computed for every element: the choice below is a select
        outs[i] = g if _positive(os[i]) else _ZERO16


@jit
def add_row_range(lo: int, hi: int, x: Array, row: Array, out: Array) -> None:
    """Rows `lo` to `hi` of ``x + row``: `x` and `out` the bfloat16 bits (uint16) of a C-ordered
    ``[rows, width]`` matrix, flat; `row` its ``[width]`` addend widened to float32, NaN-free (a
    NaN in `x` is the sum's, as the CPU's float32 add keeps its one NaN operand)."""
    width = row.size
    block = max(1, 4096 // width)  # rows per block: 16 KB of float32 sums, in L1
    wide = np.empty(block * width, np.uint32)
    values = wide.view(np.float32)
    for first in range(lo, hi, block):
        n = min(block, hi - first) * width
        xs, outs = x[first * width : first * width + n], out[first * width : first * width + n]
        for j in range(n):
            wide[j] = _U32(xs[j]) << _U32(16)
        for r in range(n // width):
            vs = values[r * width : (r + 1) * width]
            for j in range(width):
                vs[j] += row[j]
        narrow_range(0, n, wide, outs)


@jit
def gelu_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """Elements `lo` to `hi` of GELU of bfloat16 bits (uint16) into bfloat16 bits: blocks widened
    in L1, `burn_ndarray.kernels.activation`'s float32 GELU, the rounding; the bits of widening
    the whole array, that kernel and `narrow` (three passes over memory)."""
    wide = np.empty(_BLOCK, np.uint32)
    results = np.empty(_BLOCK, np.uint32)  # not in place: aliased operands keep LLVM from vectorizing
    values, gelus = wide.view(np.float32), results.view(np.float32)
    for start in range(lo, hi, _BLOCK):
        n = min(_BLOCK, hi - start)
        xs = x[start : start + n]
        for j in range(n):
            wide[j] = _U32(xs[j]) << _U32(16)
        _gelu_float32(0, n, values, gelus)
        narrow_range(0, n, results, out[start : start + n])


@jit
def gelu_backward_range(lo: int, hi: int, x: Array, grad: Array, out: Array) -> None:
    """Elements `lo` to `hi` of ``grad * gelu'(x)`` for bfloat16 bits `x` (uint16) and a float32
    `grad`, into float32 `out` (an autocast step's half activation and float32 gradient): blocks
    of `x` widened in L1, then `burn_ndarray.kernels.activation`'s float32 kernel."""
    wide = np.empty(_BLOCK, np.uint32)
    values = wide.view(np.float32)
    for start in range(lo, hi, _BLOCK):
        n = min(_BLOCK, hi - start)
        xs = x[start : start + n]
        for j in range(n):
            wide[j] = _U32(xs[j]) << _U32(16)
        _gelu_backward_float32(0, n, values, grad[start : start + n], out[start : start + n])


@jit_parallel
def gelu(parts: int, x: Array, out: Array) -> None:
    """`gelu_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        gelu_range(lo, hi, x, out)


@jit_parallel
def gelu_backward(parts: int, x: Array, grad: Array, out: Array) -> None:
    """`gelu_backward_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        gelu_backward_range(lo, hi, x, grad, out)


@jit_parallel
def add_row(parts: int, x: Array, row: Array, out: Array) -> None:
    """`add_row_range` over all rows of `x`, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size // row.size, c, parts)
        add_row_range(lo, hi, x, row, out)


@jit_parallel
def narrow(parts: int, src: Array, out: Array) -> None:
    """`narrow_range` over all of `src`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        narrow_range(lo, hi, src, out)


@jit_parallel
def relu(parts: int, x: Array, out: Array) -> None:
    """`relu_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        relu_range(lo, hi, x, out)


@jit_parallel
def relu_backward(parts: int, output: Array, grad: Array, out: Array) -> None:
    """`relu_backward_range` over all of `output`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        relu_backward_range(lo, hi, output, grad, out)
