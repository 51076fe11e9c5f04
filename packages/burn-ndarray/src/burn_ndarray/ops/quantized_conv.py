"""The statically quantized Linear and 2-D convolution (`burn.backend.ops.quantization`'s
``static_quantized_linear`` / ``static_quantized_conv2d``) with int32 sums, for float32 inputs
and int8 weights (other dtypes take the contract's dequantize + float default).

The input is quantized once with its calibrated scale and zero point (the default's formula,
``clamp(rint(x / scale) + zero_point, -127, 127)``), then:

- Linear, and a convolution through im2col: the quantized columns (padding holds the zero point)
  times the int8 weight through `burn_ndarray.ops.quantization.int8_sums`, the dynamic int8
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

from typing import Any

import numpy as np

from burn.backend.ops.quantization import ACTIVATION_QMAX
from burn.backend.ops.quantization import QuantizationOps as Contract
from burn.backend.xp.windows import out_size as axis_out_size
from burn_ndarray.ops import grouped
from burn_ndarray.ops.conv import _columns, _ungroup, _weight_matrix
from burn_ndarray.ops.quantization import _parts, int8_sums, sums_dtype
from burn_ndarray.runtime import split

Array = Any
Pair = tuple[int, int]
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


class QuantizedConvOps:
    """The static quantization ops of `burn_ndarray.NdArray`."""

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
