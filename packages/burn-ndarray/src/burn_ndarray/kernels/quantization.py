"""Compiled kernels of the quantization family (numba): the dynamic int8 Linear's row
quantization, its integer dot products for few rows, and the scaling epilogue
(`burn_ndarray.ops.quantization`). Each is a serial kernel over a range of rows and a launcher
over chunks of them (`burn_ndarray.kernels.jit`): the same bits at any thread count.

The float steps are the contract default's, in the same order and in float32
(``scale = max|row| / 127``, 1 for a zero row; ``q = clamp(rint(x / scale), -127, 127)``;
``float32(sum) * scale * weight_scale + bias``), so results are the default's, bit for bit.

`int8_dots` forms each product as int16 (|q| <= 127) and sums in int32 along the contiguous
input dim: the shape of x86's ``vpmaddwd``, which LLVM emits for the loop (checked in the asm).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any
_f32 = np.float32
_QMAX = _f32(127.0)
_LOW4, _SHIFT4 = np.int32(15), np.int32(4)


@jit
def quantize_rows_range(lo: int, hi: int, x: Array, q: Array, scales: Array) -> None:
    """Rows `lo` to `hi` of the float32 ``x [m, k]`` into ``q`` (int8, or float32 holding the
    same integers), each row's scale into ``scales [m]``."""
    k = x.shape[1]
    for i in range(lo, hi):
        amax = _f32(0.0)
        for p in range(k):
            a = abs(x[i, p])
            amax = a if a > amax else amax
        s = amax / _QMAX
        s = _f32(1.0) if amax == _f32(0.0) else s
        scales[i] = s
        for p in range(k):
            v = np.rint(x[i, p] / s)
            q[i, p] = -_QMAX if v < -_QMAX else (_QMAX if v > _QMAX else v)


@jit
def int8_dots_range(lo: int, hi: int, q: Array, w: Array, sums: Array) -> None:
    """``sums[i, j] = sum_p q[i, p] * w[j, p]`` in int32 for the weight rows `lo` to `hi` of the
    int8 ``w [n, k]`` and every row of the int8 ``q [m, k]``."""
    m, k = q.shape
    for j in range(lo, hi):
        for i in range(m):
            acc = np.int32(0)
            for p in range(k):
                acc += np.int32(np.int16(q[i, p]) * np.int16(w[j, p]))
            sums[i, j] = acc


@jit
def scale_sums_range(
    lo: int, hi: int, sums: Array, scales: Array, w_scales: Array, bias: Array, out: Array
) -> None:
    """Rows `lo` to `hi` of ``out = float32(sums) * scales[:, None] * w_scales (+ bias)``."""
    n = sums.shape[1]
    for i in range(lo, hi):
        s = scales[i]
        for j in range(n):
            v = _f32(sums[i, j]) * s * w_scales[j]
            out[i, j] = v if bias is None else v + bias[j]


@jit_parallel
def quantize_rows(parts: int, x: Array, q: Array, scales: Array) -> None:
    """`quantize_rows_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        quantize_rows_range(lo, hi, x, q, scales)


@jit_parallel
def int8_dots(parts: int, q: Array, w: Array, sums: Array) -> None:
    """`int8_dots_range` over every weight row, chunks of weight rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(w.shape[0], c, parts)
        int8_dots_range(lo, hi, q, w, sums)


@jit_parallel
def scale_sums(parts: int, sums: Array, scales: Array, w_scales: Array, bias: Array, out: Array) -> None:
    """`scale_sums_range` over every row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(sums.shape[0], c, parts)
        scale_sums_range(lo, hi, sums, scales, w_scales, bias, out)


# The weight-only Linear (`burn_ndarray.ops.quantization`, "int8-weight" / "int4-weight"): each
# weight row is dequantized into a float32 row that stays in L1 and multiplied there, so a call
# reads the stored bytes once and never writes a float32 copy of the weight. A packed row is
# dequantized in "split" order, its even-index values first and its odd-index ones after, so that
# every load and store is contiguous (interleaved stores kept LLVM from vectorizing: 1.3 ns a
# value); the caller splits x's columns the same way, which leaves each dot product unchanged.
# Reassociation lets LLVM split the dot product's sum into SIMD lanes and contraction fuses each
# multiply-add into an FMA (not fastmath=True, which would assume no inf or NaN): the sums are
# float32 sums in another order and rounding, a matmul's tolerance.
_reassoc = njit(cache=True, error_model="numpy", nogil=True, fastmath={"reassoc", "nsz", "contract"})
_inline = njit(inline="always", error_model="numpy")


@_inline
def _dequantize_row(w: Array, j: int, packed: bool, sign: int, scales: Array, zps: Array, buf: Array) -> None:
    """Row `j` of the stored weight into the float32 ``buf`` (its padded length): ``(q - zp) *
    scale`` per block of ``len(buf) / scales.shape[1]`` values, the default's formula. Packed
    rows hold two 4-bit values a byte, the even index low, and go to `buf` in split order;
    `sign` is 8 to read a nibble as two's complement (``(v ^ 8) - 8``), 0 to read it unsigned."""
    blocks = scales.shape[1]
    size = buf.shape[0] // blocks
    row = w[j]
    # Slices indexed from 0: no negative-index wrap in the loops, so LLVM vectorizes them.
    for b in range(blocks):
        s = scales[j, b]
        z = _f32(0.0) if zps is None else _f32(zps[j, b])
        if packed:
            half = buf.shape[0] // 2
            src = row[b * size // 2 : (b + 1) * size // 2]
            even = buf[b * size // 2 : (b + 1) * size // 2]
            odd = buf[half + b * size // 2 : half + (b + 1) * size // 2]
            # numba widens integer arithmetic to int64, and AVX2 has no vector int64 -> float32
            # conversion: the int32 casts let LLVM narrow the chain and vectorize the conversion.
            sg = np.int32(sign)
            for t in range(src.size):
                byte = np.int32(src[t])
                even[t] = (_f32(np.int32(((byte & _LOW4) ^ sg) - sg)) - z) * s
                odd[t] = (_f32(np.int32(((byte >> _SHIFT4) ^ sg) - sg)) - z) * s
        else:
            src = row[b * size : (b + 1) * size]
            dst = buf[b * size : (b + 1) * size]
            for t in range(src.size):
                dst[t] = (_f32(src[t]) - z) * s


# One input row and packed rows (`_packed_rows_dot`): a signed nibble ``q = (u ^ 8) - 8`` is read
# as the unsigned nibble of ``byte ^ 0x88`` and its offset 8 joins the zero point, so a block's
# term is ``(sum(u * x) - (8 + z) * sum(x)) * s``: no sign step per value and the scale applied
# once a block. The rows and x are indexed as [blocks, bytes] views, whose indices LLVM knows are
# not negative (slices per block cost their bounds arithmetic every 16 bytes), and the nibbles
# are read in int32 (numba's int64 has no vector conversion to float32 on AVX2: scalar code).
# With four weight rows a loop, LLVM keeps a block's 16 bytes in two 8-lane steps per row and
# each x value is loaded once for the four: 768 -> 3072 at one thread took 0.39-0.70 ms one row a
# loop, 0.39 two, 0.32 four, 0.30 eight (docs/benchmarks-log.md, "int4 at one row").
_ROWS = 4


@_inline
def _packed_rows_dot(
    xe: Array, xo: Array, w3: Array, sign: int, scales: Array, zps: Array, first: Any, rows: int,
    x_sums: Array, bias: Array, out: Array,
) -> None:
    """``out[0, first:first + rows]`` (`rows` 4 or 1) for the packed rows ``w3 [n, blocks,
    bytes]`` and one input row split into its even (`xe`) and odd (`xo`) values as ``[blocks,
    bytes]``, with the block sums of x given (`x_sums`)."""
    blocks, size = xe.shape
    # `sign` is a constant at each call (weight_gemv_range): with a run-time flip LLVM kept the
    # nibble steps in int64 lanes (its range unknown), 30 % slower.
    flip = np.int32(0x88 if sign else 0)
    off = _f32(sign)
    if rows == _ROWS:
        a0 = a1 = a2 = a3 = _f32(0.0)
        for blk in range(blocks):
            d0 = d1 = d2 = d3 = _f32(0.0)
            for t in range(size):
                u, v = xe[blk, t], xo[blk, t]
                g0 = np.int32(np.int32(w3[first, blk, t]) ^ flip)
                g1 = np.int32(np.int32(w3[first + 1, blk, t]) ^ flip)
                g2 = np.int32(np.int32(w3[first + 2, blk, t]) ^ flip)
                g3 = np.int32(np.int32(w3[first + 3, blk, t]) ^ flip)
                d0 += _f32(np.int32(g0 & _LOW4)) * u + _f32(np.int32(g0 >> _SHIFT4)) * v
                d1 += _f32(np.int32(g1 & _LOW4)) * u + _f32(np.int32(g1 >> _SHIFT4)) * v
                d2 += _f32(np.int32(g2 & _LOW4)) * u + _f32(np.int32(g2 >> _SHIFT4)) * v
                d3 += _f32(np.int32(g3 & _LOW4)) * u + _f32(np.int32(g3 >> _SHIFT4)) * v
            xs = x_sums[blk]
            z0 = z1 = z2 = z3 = off
            if zps is not None:
                z0, z1 = off + _f32(zps[first, blk]), off + _f32(zps[first + 1, blk])
                z2, z3 = off + _f32(zps[first + 2, blk]), off + _f32(zps[first + 3, blk])
            a0 += (d0 - z0 * xs) * scales[first, blk]
            a1 += (d1 - z1 * xs) * scales[first + 1, blk]
            a2 += (d2 - z2 * xs) * scales[first + 2, blk]
            a3 += (d3 - z3 * xs) * scales[first + 3, blk]
        if bias is not None:
            a0, a1 = a0 + bias[first], a1 + bias[first + 1]
            a2, a3 = a2 + bias[first + 2], a3 + bias[first + 3]
        out[0, first], out[0, first + 1], out[0, first + 2], out[0, first + 3] = a0, a1, a2, a3
        return
    acc = _f32(0.0)
    for blk in range(blocks):
        d = _f32(0.0)
        for t in range(size):
            g = np.int32(np.int32(w3[first, blk, t]) ^ flip)
            d += _f32(np.int32(g & _LOW4)) * xe[blk, t] + _f32(np.int32(g >> _SHIFT4)) * xo[blk, t]
        z = off if zps is None else off + _f32(zps[first, blk])
        acc += (d - z * x_sums[blk]) * scales[first, blk]
    out[0, first] = acc if bias is None else acc + bias[first]


@_reassoc
def weight_gemv_range(
    lo: int, hi: int, x: Array, w: Array, packed: bool, sign: int, scales: Array, zps: Array,
    bias: Array, out: Array,
) -> None:
    """``out[:, j] = x @ dequantized_row(j) (+ bias[j])`` for the weight rows `lo` to `hi`, with
    ``x [m, padded]`` (split order for packed rows, zeros in the padding). For one input row, an
    int8 row with one scale and no zero point is dotted as it is and scaled once, and packed rows
    go through `_packed_rows_dot`, four at a time; otherwise each weight row is dequantized once
    into an L1-sized buffer and dotted with the rows of x, four at a time."""
    m, size = x.shape
    buf = np.empty(size, np.float32)
    if packed and m == 1:
        half = size // 2
        blocks = scales.shape[1]
        x0 = x[0]  # a row of a C array, C itself: x[0, :half] would be typed any-layout
        xe = x0[:half].reshape(blocks, half // blocks)
        xo = x0[half:].reshape(blocks, half // blocks)
        x_sums = np.zeros(blocks, np.float32)
        for blk in range(blocks):  # byte t holds the values 2t and 2t + 1: xe and xo at t
            for t in range(half // blocks):
                x_sums[blk] += xe[blk, t] + xo[blk, t]
        w3 = w.reshape(w.shape[0], blocks, half // blocks)
        # int64: the chunk bounds of a prange arrive as uint64, and uint64 + int64 is float64.
        r, end = np.int64(lo), np.int64(hi)
        while r + _ROWS <= end:
            if sign:
                _packed_rows_dot(xe, xo, w3, 8, scales, zps, r, _ROWS, x_sums, bias, out)
            else:
                _packed_rows_dot(xe, xo, w3, 0, scales, zps, r, _ROWS, x_sums, bias, out)
            r += _ROWS
        while r < end:
            _packed_rows_dot(xe, xo, w3, sign, scales, zps, r, 1, x_sums, bias, out)
            r += 1
        return
    if m == 1 and zps is None and scales.shape[1] == 1:  # int8, one scale a row
        x0 = x[0]
        for j in range(lo, hi):
            row = w[j]
            acc = _f32(0.0)
            for p in range(size):
                acc += x0[p] * _f32(row[p])
            acc *= scales[j, 0]
            out[0, j] = acc if bias is None else acc + bias[j]
        return
    for j in range(lo, hi):
        _dequantize_row(w, j, packed, sign, scales, zps, buf)
        b = _f32(0.0) if bias is None else bias[j]
        i = 0
        # Four input rows at a time: each dequantized value is loaded once for four sums, which
        # LLVM keeps in four vector registers.
        while i + 4 <= m:
            x0, x1, x2, x3 = x[i], x[i + 1], x[i + 2], x[i + 3]
            a0 = a1 = a2 = a3 = _f32(0.0)
            for p in range(size):
                v = buf[p]
                a0 += x0[p] * v
                a1 += x1[p] * v
                a2 += x2[p] * v
                a3 += x3[p] * v
            out[i, j] = a0 + b
            out[i + 1, j] = a1 + b
            out[i + 2, j] = a2 + b
            out[i + 3, j] = a3 + b
            i += 4
        while i < m:
            xi = x[i]
            acc = _f32(0.0)
            for p in range(size):
                acc += xi[p] * buf[p]
            out[i, j] = acc + b
            i += 1


@jit
def dequantize_rows_range(
    lo: int, hi: int, w: Array, packed: bool, sign: int, scales: Array, zps: Array, first: int, out: Array
) -> None:
    """Rows `lo` to `hi` of ``out`` (float32, padded rows, split order for packed ones): the
    weight rows ``first + lo`` to ``first + hi`` dequantized."""
    for r in range(lo, hi):
        _dequantize_row(w, first + r, packed, sign, scales, zps, out[r])


@jit_parallel
def weight_gemv(
    parts: int, x: Array, w: Array, packed: bool, sign: int, scales: Array, zps: Array, bias: Array,
    out: Array,
) -> None:
    """`weight_gemv_range` over every weight row, chunks of rows on the pool."""
    for c in prange(parts):
        lo, hi = bounds(w.shape[0], c, parts)
        weight_gemv_range(lo, hi, x, w, packed, sign, scales, zps, bias, out)


@jit_parallel
def dequantize_rows(
    parts: int, w: Array, packed: bool, sign: int, scales: Array, zps: Array, first: int, out: Array
) -> None:
    """`dequantize_rows_range` over every row of ``out``, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.shape[0], c, parts)
        dequantize_rows_range(lo, hi, w, packed, sign, scales, zps, first, out)
