"""The quantization family (`burn.backend.ops.quantization`) on NumPy arrays: quantize and
dequantize as one NumPy expression each (the default's steps, without its intermediate
tensors), and the dynamic int8 Linear for float32 inputs and int8 weights (other dtypes take the
contract's default).

The int32 sums are exact on every path, and the result is the default's bit for bit:

- on a CPU with AVX2 (`burn_ndarray.kernels.int8_gemm.HAS_AVX2`): the int8 GEMM micro-kernel
  (``vpmaddubsw`` + ``vpmaddwd``), for any number of rows, with the weight packed into its panel
  layout on first use and kept (`_packed`: one packing per weight array, dropped with it);
- without AVX2, few rows (under `GEMV_ROWS`: decoding a token, a small batch): compiled int8 dot
  products (`burn_ndarray.kernels.quantization.int8_dots`), which read the int8 weight directly;
- without AVX2, more rows: BLAS's float32 GEMM on the integers. A product of two values in
  [-127, 127] and a sum of up to `EXACT_TERMS` of them stay below 2^24, where every integer is a
  float32, so each GEMM over a chunk of at most that many input features gives the int32 sums
  exactly; chunks are added as int32.

Speeds measured in docs/guides/precision.md.

The statically quantized Linear and 2-D convolution (``static_quantized_linear`` /
``static_quantized_conv2d``) also sum in int32, for float32 inputs and int8 weights (other dtypes
take the contract's dequantize + float default).

The input is quantized once with its calibrated scale and zero point (the default's formula,
``clamp(rint(x / scale) + zero_point, -127, 127)``), then:

- Linear, and a convolution through im2col: the quantized columns (padding holds the zero point)
  times the int8 weight through `int8_sums`, the dynamic int8
  Linear's integer GEMM entry (the AVX2 int8 GEMM; without AVX2, compiled int8 dot products for
  few rows, BLAS's exact float32 GEMM on the integers for more);
- a grouped or depthwise convolution: the direct grouped kernels (`burn_ndarray.ops.grouped`,
  whose reduction of ``C/G * KH * KW`` taps is too short for im2col and a GEMM to pay) on the
  centred integers ``q - zero_point`` held in float32. Their sums are exact while ``254 * 127 *
  C/G * KH * KW < 2^24`` (`CENTRED_EXACT_TERMS`), where float32 holds every integer; the zero
  padding the kernels skip is then exactly the zero point's. On AVX2 without VNNI a float32 lane
  multiplies-adds as many values an instruction as an int16 pair does, and an int32 row of
  accumulators measured 4-6x slower than these kernels (docs/benchmarks-log.md, "static int8").

The zero point comes out of the sums as ``sum (q - zp) * w = sum q * w - zp * sum w``, so the
GEMM only ever sees values in [-127, 127]. The sums are exact; the epilogue
``float32(sums) * input_scale * weight_scale + bias`` differs from the default's float product of
the dequantized operands only by float rounding.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from burn.backend.ops.quantization import ACTIVATION_QMAX
from burn.backend.ops.quantization import QuantizationOps as Contract
from burn.backend.xp.windows import out_size as axis_out_size
from burn.foundations.dtype import DType
from burn_ndarray.ops import grouped
from burn_ndarray.ops.conv import _columns, _ungroup, _weight_matrix
from burn_ndarray.runtime import split
from burn_ndarray.runtime.dtypes import NP_OF

Array = Any
Pair = tuple[int, int]
# Input rows below which the integer dot products beat converting the weight for a GEMM.
GEMV_ROWS = 16
# Input rows from which the weight-only Linear dequantizes the weight for BLAS's GEMM instead of
# dotting each dequantized weight row with the input rows (four at a time). On a 768 -> 3072
# Linear at one thread the dot products win up to 8 rows and lose at 16 for int8; for int4 they
# tie at 8 and still win at 16 (docs/guides/precision.md).
WEIGHT_GEMV_ROWS = 16
# Bytes of float32 weight dequantized for one GEMM. One GEMM over the whole dequantized weight
# beat panels of 128 or 256 rows that fit a core's L2 (a 768 -> 3072 Linear at 1024 rows: 56 ms
# against 62 and 66 ms, float32 55 ms; docs/guides/precision.md): a panel's GEMM is narrower and
# its result is copied into place. Panels only bound the scratch memory of a very large weight.
PANEL_BYTES = 64 << 20
# 127 * 128 * 1032 < 2^24: the most features whose integer sums float32 holds exactly, for
# activations in [-127, 127] and any int8 weight (PyTorch's qint8 weights, loaded by
# `load_pytorch`, may hold -128).
EXACT_TERMS = 1032


# The packed panels of each int8 weight the AVX2 GEMM has multiplied, by the array's id; an entry
# goes when its array is collected (`weakref.finalize`), so an id is never reused while listed.
# A module's weight is the same array at every call, so it is packed once. Writing into a packed
# weight's array in place is not seen: replace the array (as loading a record does) instead.
_PACKED: dict[int, tuple[weakref.ref[Array], Array]] = {}
# Tests set this to run the portable path on an AVX2 CPU.
FORCE_PORTABLE = False


def _packed(weight: Array) -> Array:
    """`weight`'s panels for `burn_ndarray.kernels.int8_gemm`, packed on first use."""
    from burn_ndarray.kernels import int8_gemm

    key = id(weight)
    hit = _PACKED.get(key)
    if hit is not None and hit[0]() is weight:
        return hit[1]
    packed = int8_gemm.pack_weight(weight)
    try:
        ref = weakref.ref(weight)
    except TypeError:  # an array type without weak references: pack at every call
        return packed
    _PACKED[key] = (ref, packed)
    weakref.finalize(weight, _PACKED.pop, key, None)
    return packed


def _parts(work: int) -> int:
    """Chunks for a kernel doing `work` cheap steps (an int8 product pair counts 1/8: vectorized)."""
    return split.compiled_parts(work, split.UFUNC_PER_THREAD, split.NATIVE_UFUNC_PER_THREAD)


def _native(k: int) -> bool:
    """Whether sums over `k` input features run on the AVX2 int8 GEMM."""
    from burn_ndarray.kernels import int8_gemm

    return int8_gemm.HAS_AVX2 and not FORCE_PORTABLE and 0 < k <= int8_gemm.MAX_K


def sums_dtype(m: int, k: int) -> Any:
    """The dtype `int8_sums` takes activations in for ``m`` rows of ``k`` features: int8 for the
    AVX2 GEMM and the few-row dot products, float32-held integers for BLAS's GEMM. Callers write
    the activations once, in this dtype."""
    return np.int8 if _native(k) or m < GEMV_ROWS else np.float32


def _native_sums(q: Array, weight: Array) -> Array:
    """The AVX2 GEMM's int32 sums for int8 ``q [m, steps * STEP]`` (zeros past the weight's k)."""
    from burn_ndarray.kernels import int8_gemm

    m, n = q.shape[0], weight.shape[0]
    panels = -(-n // int8_gemm.PANEL)
    wide = np.zeros((m, panels * int8_gemm.PANEL), np.int32)
    work = _parts(m * n * q.shape[1] // 32)
    split.run_ranges(int8_gemm.gemm_range, int8_gemm.gemm, panels, work, q, _packed(weight), wide)
    return wide[:, :n]


def int8_sums(q: Array, weight: Array) -> Array:
    """``sum_p q[i, p] * weight[j, p]`` exactly, ``[m, n]``, for activations ``q [m, k]`` in
    [-127, 127] (in `sums_dtype`'s dtype) and the int8 ``weight [n, k]``: int32 from the AVX2 GEMM
    or, without it, from the compiled dot products when ``m < GEMV_ROWS``, else from BLAS's
    float32 GEMM in exact chunks (the sums float32 holding integers, or int32 for more than one
    chunk)."""
    from burn_ndarray.kernels import int8_gemm
    from burn_ndarray.kernels import quantization as kq

    m, k = q.shape
    n = weight.shape[0]
    if _native(k):
        steps = -(-k // int8_gemm.STEP)
        if q.dtype != np.int8 or k != steps * int8_gemm.STEP or not q.flags.c_contiguous:
            wide = np.zeros((m, steps * int8_gemm.STEP), np.int8)  # the kernel's whole steps
            wide[:, :k] = q
            q = wide
        return _native_sums(q, weight)
    if m < GEMV_ROWS:
        sums = np.empty((m, n), np.int32)
        w = np.ascontiguousarray(weight)
        split.run_ranges(kq.int8_dots_range, kq.int8_dots, n, _parts(m * n * k // 8), q, w, sums)
        return sums
    chunks = [
        q[:, lo : lo + EXACT_TERMS].dot(weight[:, lo : lo + EXACT_TERMS].T.astype(np.float32))
        for lo in range(0, k, EXACT_TERMS)
    ]
    # One chunk's exact float32 sums are float32(int32 sums) already; more add as int32.
    return chunks[0] if len(chunks) == 1 else sum(c.astype(np.int32) for c in chunks)


# 254 * 127 * 520 < 2^24: the most taps whose centred integer sums float32 holds exactly.
CENTRED_EXACT_TERMS = 520


def _fast(x: Array, weight: Array, weight_scales: Array, input_scale: Array, bias: Array | None) -> bool:
    return (
        x.dtype == np.float32
        and weight.dtype == np.int8
        and weight_scales.dtype == np.float32
        and input_scale.dtype == np.float32
        and (bias is None or bias.dtype == np.float32)
    )


def _quantized(x: Array, scale: Array, zero_point: Array, dtype: Any) -> Array:
    """`x`'s integers under the calibrated parameters, in `dtype` (int8, or float32 for BLAS)."""
    q = np.rint(np.divide(x, scale.reshape(())))
    q += np.float32(zero_point.reshape(()))
    np.clip(q, -ACTIVATION_QMAX, ACTIVATION_QMAX, out=q)
    return q.astype(dtype, copy=False)


def _epilogue(sums: Array, correction: Array, scales: Array, bias: Array | None) -> Array:
    """``float32(sums - correction) * scales (+ bias)`` in one compiled pass, the zero point's
    correction subtracted in int32 (`burn_ndarray.kernels.quantized_conv.epilogue`)."""
    from burn_ndarray.kernels import quantized_conv as kc

    m, o = sums.shape
    out = np.empty((m, o), np.float32)
    scales = np.ascontiguousarray(np.broadcast_to(scales, (o,)), np.float32)
    args = (sums, correction.astype(np.int32), scales, bias, out)
    split.run_ranges(kc.epilogue_range, kc.epilogue, m, _parts(m * o), *args)
    return out


class QuantizationOps:
    """The quantization ops of `burn_ndarray.NdArray`."""

    def quantized_linear(self, x: Array, weight: Array, weight_scales: Array, bias: Array | None) -> Array:
        n, k = weight.shape
        fast = (
            x.dtype == np.float32
            and weight.dtype == np.int8
            and weight_scales.dtype == np.float32
            and (bias is None or bias.dtype == np.float32)
            and x.ndim >= 1
            and x.shape[-1] == k
        )
        if not fast:
            return Contract.quantized_linear(self, x, weight, weight_scales, bias)  # type: ignore[arg-type]
        from burn_ndarray.kernels import int8_gemm
        from burn_ndarray.kernels import quantization as kq

        rows = np.ascontiguousarray(x.reshape(-1, k))
        m = rows.shape[0]
        scales = np.empty(m, np.float32)
        if _native(k):
            # The kernel's layout: rows padded with zeros to whole steps of 4 features.
            q = np.zeros((m, -(-k // int8_gemm.STEP) * int8_gemm.STEP), np.int8)
            split.run_ranges(kq.quantize_rows_range, kq.quantize_rows, m, _parts(m * k), rows, q, scales)
            sums = _native_sums(q, weight)
        else:
            q = np.empty((m, k), sums_dtype(m, k))
            split.run_ranges(kq.quantize_rows_range, kq.quantize_rows, m, _parts(m * k), rows, q, scales)
            sums = int8_sums(q, weight)
        out = np.empty((m, n), np.float32)
        w_scales = np.full(n, weight_scales[0], np.float32) if weight_scales.shape[0] == 1 else weight_scales
        split.run_ranges(
            kq.scale_sums_range, kq.scale_sums, m, _parts(m * n), sums, scales, w_scales, bias, out
        )
        return out.reshape((*x.shape[:-1], n))

    def dequantized_linear(
        self, x: Array, values: Array, scales: Array, zero_points: Array | None, value: str,
        bias: Array | None,
    ) -> Array:
        n = values.shape[0]
        packed = value != "int8"
        fast = (
            x.dtype == np.float32
            and values.dtype == (np.uint8 if packed else np.int8)
            and scales.dtype == np.float32
            and (bias is None or bias.dtype == np.float32)
            and (zero_points is None or zero_points.dtype.kind in "iu")
        )
        if not fast:
            return Contract.dequantized_linear(self, x, values, scales, zero_points, value, bias)  # type: ignore[arg-type]
        from burn_ndarray.kernels import quantization as kq

        k = x.shape[-1]
        padded = values.shape[1] * (2 if packed else 1)
        rows = x.reshape(-1, k)
        m = rows.shape[0]
        if k != padded or packed:
            # x padded with zeros to the stored rows (the padding's products are 0) and, for
            # packed rows, its columns split as the kernels dequantize them: even ones, then odd.
            wide = np.zeros((m, padded), np.float32)
            wide[:, :k] = rows
            rows = np.concatenate([wide[:, 0::2], wide[:, 1::2]], axis=1) if packed else wide
        rows = np.ascontiguousarray(rows)
        # Scales (and zero points) as [n, blocks]: one block a row for per-row and per-tensor.
        blocks = scales.shape[1] if scales.ndim == 3 else 1
        s2 = np.ascontiguousarray(np.broadcast_to(scales.reshape(-1, blocks), (n, blocks)))
        z2 = None
        if zero_points is not None:
            z2 = np.ascontiguousarray(np.broadcast_to(zero_points.reshape(-1, blocks), (n, blocks)), np.int32)
        w = np.ascontiguousarray(values)
        sign = 8 if value == "int4" else 0
        out = np.empty((m, n), np.float32)
        if m < WEIGHT_GEMV_ROWS:
            parts = _parts(n * padded * (m + 1) // 8)
            split.run_ranges(
                kq.weight_gemv_range, kq.weight_gemv, n, parts, rows, w, packed, sign, s2, z2, bias, out
            )
            return out.reshape((*x.shape[:-1], n))
        step = max(1, min(n, PANEL_BYTES // (4 * padded)))
        panel = np.empty((step, padded), np.float32)
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            part = panel[: hi - lo]
            split.run_ranges(
                kq.dequantize_rows_range, kq.dequantize_rows, hi - lo, _parts((hi - lo) * padded),
                w, packed, sign, s2, z2, lo, part,
            )
            if hi - lo == n:
                np.dot(rows, part.T, out=out)
            else:
                out[:, lo:hi] = rows.dot(part.T)
        if bias is not None:
            out += bias
        return out.reshape((*x.shape[:-1], n))

    def quantize_into_int(
        self, tensor: Array, scales: Array, zero_points: Array | None, qmin: int, qmax: int, dtype: DType
    ) -> Array:
        # The default's steps in one expression: division, round half to even, shift, clamp.
        q = np.rint(np.divide(tensor, scales))
        if zero_points is not None:
            q += zero_points.astype(q.dtype)
        np.clip(q, qmin, qmax, out=q)
        return q.astype(NP_OF[dtype])

    def dequantize(self, values: Array, scales: Array, zero_points: Array | None, dtype: DType) -> Array:
        x = values.astype(NP_OF[dtype])
        if zero_points is not None:
            x -= zero_points.astype(x.dtype)
        x *= scales.astype(x.dtype, copy=False)
        return x

    def static_quantized_linear(
        self,
        x: Array,
        weight: Array,
        weight_scales: Array,
        input_scale: Array,
        input_zero_point: Array,
        bias: Array | None,
    ) -> Array:
        n, k = weight.shape
        if not (_fast(x, weight, weight_scales, input_scale, bias) and x.ndim >= 1 and x.shape[-1] == k):
            default = Contract.static_quantized_linear
            return default(self, x, weight, weight_scales, input_scale, input_zero_point, bias)  # type: ignore[arg-type]
        rows = x.reshape(-1, k)
        m = rows.shape[0]
        q = _quantized(rows, input_scale, input_zero_point, sums_dtype(m, k))
        zp = int(input_zero_point.reshape(()))
        correction = zp * weight.sum(axis=1, dtype=np.int32)
        scales = input_scale.reshape(()) * weight_scales
        out = _epilogue(int8_sums(q, weight), correction, scales, bias)
        return out.reshape((*x.shape[:-1], n))

    def static_quantized_conv2d(
        self,
        x: Array,
        weight: Array,
        weight_scales: Array,
        input_scale: Array,
        input_zero_point: Array,
        bias: Array | None,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        groups: int,
    ) -> Array:
        if not _fast(x, weight, weight_scales, input_scale, bias):
            given = (x, weight, weight_scales, input_scale, input_zero_point, bias, stride, padding, dilation)
            return Contract.static_quantized_conv2d(self, *given, groups)  # type: ignore[arg-type]
        n, c, h, w = x.shape
        o, cg, kh, kw = weight.shape
        oh = axis_out_size(h, kh, stride[0], padding[0], dilation[0])
        ow = axis_out_size(w, kw, stride[1], padding[1], dilation[1])
        zp = int(input_zero_point.reshape(()))
        ph, pw = padding
        scales = (input_scale.reshape(()) * np.broadcast_to(weight_scales, (o,))).astype(np.float32)
        from burn_ndarray.kernels import quantized_conv as kc

        rows = n * oh * ow
        if groups > 1 and cg * kh * kw <= CENTRED_EXACT_TERMS and grouped.applies(
            np.dtype(np.float32), groups, cg, rows * o
        ):
            # Grouped and depthwise: the direct grouped kernels on centred integers in float32,
            # whose zero padding is then the zero point's: no correction is left to take out.
            centred = np.empty((n, h, w, c), np.float32)
            into = (x, float(input_scale.reshape(())), zp, zp, centred, 0, 0, True)
            split.run_ranges(kc.quantize_padded_range, kc.quantize_padded, n, _parts(x.size), *into)
            sums = grouped.conv(centred, weight.astype(np.float32), None, stride, padding, dilation, (oh, ow))
            out = _epilogue(sums.reshape(rows, o), np.zeros(o, np.int32), scales, bias)
            return out.reshape(n, oh, ow, o).transpose(0, 3, 1, 2)
        correction = zp * weight.reshape(o, -1).sum(axis=1, dtype=np.int32)
        # The GEMM's activation dtype: int8 (AVX2 or few rows) or float32-held integers for BLAS.
        dtype = sums_dtype(rows, cg * kh * kw)
        q = np.full((n, h + 2 * ph, w + 2 * pw, c), zp, dtype)  # the padding: the zero point
        into = (x, float(input_scale.reshape(())), zp, 0, q, ph, pw, True)
        split.run_ranges(kc.quantize_padded_range, kc.quantize_padded, n, _parts(x.size), *into)
        cols = _columns(q, (0, 0), (kh, kw), (oh, ow), stride, dilation, groups)
        wm = _weight_matrix(weight, groups, np.dtype(np.int8))
        if groups == 1:
            sums = int8_sums(cols[0], wm[0])
        else:
            per_group = [np.asarray(int8_sums(cols[g], wm[g]), np.int32) for g in range(groups)]
            sums = _ungroup(np.stack(per_group))
        out = _epilogue(sums, correction, scales, bias)
        # [N * OH * OW, O] channels-last memory seen as [N, O, OH, OW], as ndarray's conv2d returns.
        return out.reshape(n, oh, ow, o).transpose(0, 3, 1, 2)
