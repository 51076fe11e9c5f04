"""The quantization family of `Autodiff`: quantize, dequantize, the two quantized Linears and
the static int8 Linear and conv2d.

The ops carry no gradient (rounding has none worth following: quantization-aware training uses
`burn.quantization.fake_quantize`, whose straight-through rule is made of recorded float ops). So
each runs the inner backend's op on the inner primitives, its integer kernel included, and a
float result is an untracked leaf, as a quantized model's inference needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn_autodiff.node import ADTensor as AD

if TYPE_CHECKING:
    from burn.backend import Backend
    from burn.foundations.dtype import DType


class AutodiffQuantizationOps:
    """The quantization family of `Autodiff` (mixed into it; see `burn.backend.ops.quantization`)."""

    _in: Backend

    def quantize_into_int(
        self, tensor: AD, scales: AD, zero_points: Any | None, qmin: int, qmax: int, dtype: DType
    ) -> Any:
        return self._in.quantize_into_int(tensor.p, scales.p, zero_points, qmin, qmax, dtype)

    def dequantize(self, values: Any, scales: AD, zero_points: Any | None, dtype: DType) -> AD:
        return AD(self._in.dequantize(values, scales.p, zero_points, dtype), None)

    def quantized_linear(self, x: AD, weight: Any, weight_scales: AD, bias: AD | None) -> AD:
        inner_bias = None if bias is None else bias.p
        return AD(self._in.quantized_linear(x.p, weight, weight_scales.p, inner_bias), None)

    def dequantized_linear(
        self, x: AD, values: Any, scales: AD, zero_points: Any | None, value: str, bias: AD | None
    ) -> AD:
        inner_bias = None if bias is None else bias.p
        return AD(self._in.dequantized_linear(x.p, values, scales.p, zero_points, value, inner_bias), None)

    def static_quantized_linear(
        self, x: AD, weight: Any, weight_scales: AD, input_scale: AD, input_zero_point: Any, bias: AD | None
    ) -> AD:
        inner_bias = None if bias is None else bias.p
        out = self._in.static_quantized_linear(
            x.p, weight, weight_scales.p, input_scale.p, input_zero_point, inner_bias
        )
        return AD(out, None)

    def static_quantized_conv2d(
        self,
        x: AD,
        weight: Any,
        weight_scales: AD,
        input_scale: AD,
        input_zero_point: Any,
        bias: AD | None,
        stride: tuple[int, int],
        padding: tuple[int, int],
        dilation: tuple[int, int],
        groups: int,
    ) -> AD:
        inner_bias = None if bias is None else bias.p
        operands = (x.p, weight, weight_scales.p, input_scale.p, input_zero_point, inner_bias)
        return AD(self._in.static_quantized_conv2d(*operands, stride, padding, dilation, groups), None)
