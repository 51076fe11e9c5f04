"""The quantization family of `Autodiff`: quantize, dequantize and the two quantized Linears.

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
