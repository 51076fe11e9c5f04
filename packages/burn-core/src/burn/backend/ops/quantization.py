"""The quantization family of the backend contract: float values to integers and back, and the
int8 matrix product of dynamically quantized activations with quantized weights.

A quantized tensor (`burn.quantization.QuantizedTensor`) is held as an int primitive of its
stored values and float primitives of its scales (and, affine, an int primitive of its zero
points). Each op here is a ``@default`` written once with the float and int ops, so every backend
runs quantized models; a backend with integer kernels overrides them to be faster and must give
the default's values (`quantize_into_int` and `dequantize` exactly, `quantized_linear` within the
conformance suite's ``quantized_linear`` tolerance).

The formulas (``round`` is round half to even, as `float_round`):

- quantize: ``q = clamp(round(x / scale) + zero_point, qmin, qmax)``
- dequantize: ``x' = (q - zero_point) * scale``

4-bit values are stored two to a uint8 byte along the last dim, the even index in the low 4 bits
(``"int4"``: a nibble in two's complement; ``"uint4"``: unsigned), as `burn.quantization.pack`.

`scales` and `zero_points` broadcast against the tensor (per tensor: one value; per channel: the
channel's dim kept, every other dim 1; per block: the caller reshapes the tensor to
``[..., blocks, block]`` and gives ``[..., blocks, 1]``). None of the ops carries a gradient:
quantization-aware training goes through `burn.quantization.fake_quantize`, whose
straight-through rule is written with differentiable float ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.contract import default, family
from burn.foundations.dtype import DType

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any

# Symmetric int8 activations use [-127, 127]: negation stays in range, and two products of such
# values sum within int16 (2 * 127 * 127 = 32258), which integer GEMM kernels rely on.
ACTIVATION_QMAX = 127


@family("quantization", grad=False, bound=None)
class QuantizationOps:
    """Quantize, dequantize, the int8 Linear product with dynamic activation quantization, and
    the Linear product with a weight-only quantized weight."""

    @default(grad=False, results=("int",))
    def quantize_into_int(
        self, tensor: P, scales: P, zero_points: P | None, qmin: int, qmax: int, dtype: DType
    ) -> P:
        """``clamp(round(tensor / scales) + zero_points, qmin, qmax)`` as an int primitive of
        `dtype`; `scales` (float) and `zero_points` (int, or None for 0) broadcast against
        `tensor`. NaN has no integer value: the caller checks for it."""
        b: Backend = self  # type: ignore[assignment]
        q = b.float_round(b.float_div(tensor, scales))
        if zero_points is not None:
            q = b.float_add(q, b.int_into_float(zero_points, b.float_get_dtype(q)))
        # The clamped values are integers, so the truncating conversion is exact.
        return b.float_into_int(b.float_clamp(q, float(qmin), float(qmax)), dtype)

    @default(grad=False)
    def dequantize(self, values: P, scales: P, zero_points: P | None, dtype: DType) -> P:
        """``(values - zero_points) * scales`` as a float primitive of `dtype`; `scales` (float)
        and `zero_points` (int, or None for 0) broadcast against the int `values`."""
        b: Backend = self  # type: ignore[assignment]
        x = b.int_into_float(values, dtype)
        if zero_points is not None:
            x = b.float_sub(x, b.int_into_float(zero_points, dtype))
        if b.float_get_dtype(scales) != dtype:
            scales = b.float_cast(scales, dtype)
        return b.float_mul(x, scales)

    @default(grad=False)
    def quantized_linear(self, x: P, weight: P, weight_scales: P, bias: P | None) -> P:
        """``x @ dequantize(weight).T + bias`` through integers, as PyTorch's dynamic int8 Linear.

        The float ``x [..., k]`` is quantized per row (symmetric int8 in [-127, 127],
        ``scale = max|row| / 127``, 1 for a row of zeros), multiplied with the int8
        ``weight [n, k]`` (symmetric, one scale per output row: ``weight_scales [n]``, or ``[1]``
        for one scale) with int32 sums, and the sums scaled back: a float ``[..., n]`` of x's
        dtype, plus the float ``bias [n]`` when given.
        """
        b: Backend = self  # type: ignore[assignment]
        shape = b.float_shape(x)
        n, k = b.int_shape(weight)
        if len(shape) < 1 or shape[-1] != k:
            raise ValueError(
                f"quantized_linear: input {tuple(shape)} and weight [n, k] = {(n, k)} do not multiply"
            )
        dtype = b.float_get_dtype(x)
        rows = b.float_reshape(x, (-1, k))
        amax = b.float_max_dim(b.float_abs(rows), 1)
        scale = b.float_div_scalar(amax, float(ACTIVATION_QMAX))
        scale = b.float_mask_fill(scale, b.float_equal_elem(amax, 0.0), 1.0)
        # int32 sums (int64 on a backend without int32: the same values).
        wide = DType.I32 if b.capabilities.supports(DType.I32) else DType.I64
        q = b.quantize_into_int(rows, scale, None, -ACTIVATION_QMAX, ACTIVATION_QMAX, wide)
        acc = b.int_matmul(q, b.int_swap_dims(b.int_cast(weight, wide), 0, 1))
        out = b.float_mul(
            b.float_mul(b.int_into_float(acc, dtype), scale), b.float_cast(weight_scales, dtype)
        )
        if bias is not None:
            out = b.float_add(out, bias)
        return b.float_reshape(out, (*shape[:-1], n))

    @default(grad=False)
    def dequantized_linear(
        self, x: P, values: P, scales: P, zero_points: P | None, value: str, bias: P | None
    ) -> P:
        """``x @ dequantize(weight).T + bias`` for a weight-only quantized weight, in x's dtype.

        The weight ``[n, k]`` is stored as `values`: int8 ``[n, kp]`` (`value` ``"int8"``) or
        uint8 ``[n, kp / 2]`` packing two 4-bit values a byte (``"int4"``, ``"uint4"``), where
        ``kp >= k`` is the row padded to whole blocks (the padding's values are never read: the
        product stops at ``k = x.shape[-1]``). `scales` (float) and `zero_points` (int, or None)
        give the scale layout: ``[1]`` per tensor, ``[n, 1]`` per output row, ``[n, kp / block,
        1]`` per block of each row. A backend's kernel may multiply without dequantizing the
        whole weight at once; the sums are a float matmul's, within its tolerance.
        """
        b: Backend = self  # type: ignore[assignment]
        shape = b.float_shape(x)
        k = shape[-1]
        dtype = b.float_get_dtype(x)
        n, stored = b.int_shape(values)
        if value == "int8":
            unpacked = values
        else:
            wide = b.int_cast(values, DType.I32 if b.capabilities.supports(DType.I32) else b.int_dtype)
            low = b.int_bitwise_and_scalar(wide, 15)
            high = b.int_bitwise_right_shift_scalar(wide, 4)
            if value == "int4":  # a nibble >= 8 is negative: subtract 16 (bit 3 moved to bit 4)
                low, high = (
                    b.int_sub(t, b.int_bitwise_left_shift_scalar(b.int_bitwise_right_shift_scalar(t, 3), 4))
                    for t in (low, high)
                )
            pairs = [b.int_reshape(t, (n, stored, 1)) for t in (low, high)]
            unpacked = b.int_reshape(b.int_cat(pairs, 2), (n, 2 * stored))
        padded = b.int_shape(unpacked)[1]
        scale_shape = b.float_shape(scales)
        if len(scale_shape) == 3:  # per block: the values seen as [n, blocks, block]
            unpacked = b.int_reshape(unpacked, (n, scale_shape[1], padded // scale_shape[1]))
        weight = b.float_reshape(b.dequantize(unpacked, scales, zero_points, dtype), (n, padded))
        if padded != k:
            weight = b.float_slice(weight, (slice(0, n), slice(0, k)))
        out = b.float_matmul(b.float_reshape(x, (-1, k)), b.float_swap_dims(weight, 0, 1))
        if bias is not None:
            out = b.float_add(out, bias)
        return b.float_reshape(out, (*shape[:-1], n))

    @default(grad=False)
    def static_quantized_linear(
        self, x: P, weight: P, weight_scales: P, input_scale: P, input_zero_point: P, bias: P | None
    ) -> P:
        """``x @ dequantize(weight).T + bias`` with `x` quantized by calibrated parameters, as a
        statically quantized Linear (PyTorch's ``quantized.Linear`` with a float output).

        `x [..., k]` is quantized with ``input_scale [1]`` (float) and ``input_zero_point [1]``
        (int) into ``[-ACTIVATION_QMAX, ACTIVATION_QMAX]`` (values outside the calibrated range
        saturate); ``weight [n, k]`` is int8, symmetric, with ``weight_scales [n]`` or ``[1]``.
        This default dequantizes both and multiplies in x's float dtype; a backend's integer
        kernel sums ``(q_x - zero_point) * q_w`` exactly in int32 and gives the same values within
        a float matmul's tolerance.
        """
        b: Backend = self  # type: ignore[assignment]
        shape = b.float_shape(x)
        n, k = b.int_shape(weight)
        if len(shape) < 1 or shape[-1] != k:
            raise ValueError(
                f"static_quantized_linear: input {tuple(shape)} and weight [n, k] = {(n, k)} do not multiply"
            )
        dtype = b.float_get_dtype(x)
        rows = _requantized_input(b, b.float_reshape(x, (-1, k)), input_scale, input_zero_point, dtype)
        w_scales = b.float_reshape(b.float_cast(weight_scales, dtype), (-1, 1))
        w = b.dequantize(weight, w_scales, None, dtype)
        out = b.float_matmul(rows, b.float_swap_dims(w, 0, 1))
        if bias is not None:
            out = b.float_add(out, bias)
        return b.float_reshape(out, (*shape[:-1], n))

    @default(grad=False)
    def static_quantized_conv2d(
        self,
        x: P,
        weight: P,
        weight_scales: P,
        input_scale: P,
        input_zero_point: P,
        bias: P | None,
        stride: tuple[int, int],
        padding: tuple[int, int],
        dilation: tuple[int, int],
        groups: int,
    ) -> P:
        """`conv2d` of `x` quantized by calibrated parameters with an int8 weight.

        `x [N, C_in, H, W]` is quantized as in `static_quantized_linear`; ``weight [C_out,
        C_in / groups, KH, KW]`` is int8, symmetric, with ``weight_scales [C_out]`` or ``[1]``;
        padding stands for the quantized zero (the zero point), so it dequantizes to 0 exactly.
        This default is the dequantize + float convolution path (`conv2d` on the dequantized
        input and weight) for backends without an integer kernel; a kernel's int32 sums give the
        same values within a float convolution's tolerance.
        """
        b: Backend = self  # type: ignore[assignment]
        dtype = b.float_get_dtype(x)
        xq = _requantized_input(b, x, input_scale, input_zero_point, dtype)
        c_out = b.int_shape(weight)[0]
        w_scales = b.float_reshape(b.float_cast(weight_scales, dtype), (-1, 1, 1, 1))
        if b.float_shape(w_scales)[0] not in (1, c_out):
            raise ValueError(
                f"static_quantized_conv2d: weight_scales of {b.float_shape(w_scales)[0]} values for "
                f"{c_out} output channels"
            )
        w = b.dequantize(weight, w_scales, None, dtype)
        return b.conv2d(xq, w, bias, stride, padding, dilation, groups)


def _requantized_input(b: Backend, x: P, scale: P, zero_point: P, dtype: DType) -> P:
    """`x` rounded to the values the calibrated ``scale [1]`` and ``zero_point [1]`` store in
    ``[-ACTIVATION_QMAX, ACTIVATION_QMAX]``, as floats of `dtype` (the static ops' input step)."""
    rank = len(b.float_shape(x))
    s = b.float_reshape(b.float_cast(scale, dtype), (1,) * rank)
    zp = b.int_reshape(zero_point, (1,) * rank)
    wide = DType.I32 if b.capabilities.supports(DType.I32) else b.int_dtype
    q = b.quantize_into_int(x, s, zp, -ACTIVATION_QMAX, ACTIVATION_QMAX, wide)
    return b.dequantize(q, s, zp, dtype)
