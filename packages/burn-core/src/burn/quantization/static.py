"""Statically quantized layers: a Linear and a Conv2d whose int8 weights multiply an input
quantized with a scale and zero point calibrated beforehand (`burn.quantization.calibrate`), with
int32 sums on backends that have the integer kernels
(`burn.tensor.module.static_quantized_linear` / `static_quantized_conv2d`; the others dequantize
and multiply in float).

The calibrated input scale (float32 ``[1]``) and zero point (int8 ``[1]``) are params like the
weight's integers and scales, so a record of the layer stores them and loads them back bit for
bit into a layer of the same structure (`calibrate` the float model on any one batch first).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from burn.foundations.dtype import DType
from burn.module.base import Module
from burn.module.param import Param
from burn.nn.conv import Conv2d
from burn.nn.linear import Linear
from burn.quantization.scheme import QuantScheme
from burn.quantization.tensor import QuantizedTensor, int_dtype, quantize_tensor
from burn.tensor import module as F
from burn.tensor.tensor import Tensor

__all__ = ["StaticQuantizedConv2d", "StaticQuantizedLinear"]


def _static_weight_scheme(scheme: QuantScheme, op: str) -> QuantScheme:
    """The weight scheme of a static layer: int8, symmetric, per tensor or per output channel."""
    if (scheme.value, scheme.mode) != ("int8", "symmetric") or scheme.level == "block":
        raise ValueError(
            f"{op}: static activations need int8 symmetric weights per tensor or per output channel, "
            f"got value={scheme.value!r}, mode={scheme.mode!r}, level={scheme.level!r}"
        )
    return QuantScheme("int8", scheme.level, "symmetric", 0, scheme.block_size, "static")


def _input_params(like: Tensor, scale: np.ndarray, zero_point: np.ndarray) -> tuple[Param, Param]:
    """The calibrated ``[1]`` scale and zero point as params on `like`'s device (no gradient)."""
    s = np.asarray(scale, np.float32).reshape(1)
    zp = np.asarray(zero_point).reshape(1)
    if not (np.isfinite(s).all() and s[0] > 0):
        raise ValueError(f"static quantization: the input scale must be positive and finite, got {s[0]}")
    if not -127 <= int(zp[0]) <= 127:
        raise ValueError(
            f"static quantization: the input zero point must be in [-127, 127], got {int(zp[0])}"
        )
    scale_t = Tensor.from_data(s, like.device, dtype=DType.F32)
    zp_t = Tensor.from_data(zp, like.device, dtype=int_dtype(like, DType.I8))
    return Param.from_tensor(scale_t, require_grad=False), Param.from_tensor(zp_t, require_grad=False)


def _row_major(q: QuantizedTensor) -> QuantizedTensor:
    # Integers quantized from a transposed view may keep its layout; host data stores them row by
    # row, as a record loads them and as the integer kernels read them.
    values = Tensor.from_data(q.values.to_data(), q.values.device, dtype=q.values.dtype)
    return dataclasses.replace(q, values=values)


class StaticQuantizedLinear(Module):
    """A `Linear` with an int8 ``[d_output, d_input]`` weight (one scale per output row, or one)
    and its input quantized by calibrated parameters.

    Attributes:
        values: Int (int8) param of the weight.
        scales: float32 param, ``[d_output, 1]`` or ``[1]``.
        input_scale: float32 ``[1]`` param, the input's calibrated step.
        input_zero_point: Int ``[1]`` param, in [-127, 127].
        bias: float ``[d_output]`` or None, kept as it was.
        d_input, d_output: the sizes.
    """

    values: Param
    scales: Param
    input_scale: Param
    input_zero_point: Param
    bias: Param | None
    d_input: int
    d_output: int

    @classmethod
    def from_linear(
        cls, linear: Linear, scheme: QuantScheme, scale: np.ndarray, zero_point: np.ndarray
    ) -> StaticQuantizedLinear:
        """Quantize `linear`'s weight with `scheme`'s int8 weights and keep the input's
        calibrated `scale` and `zero_point` (``[1]`` each)."""
        weight = linear.weight.val().detach()
        d_input, d_output = weight.shape
        q = _row_major(quantize_tensor(weight.swap_dims(0, 1), _static_weight_scheme(scheme, "calibrate")))
        s, zp = _input_params(weight, scale, zero_point)
        values = Param.from_tensor(q.values, require_grad=False)
        scales = Param.from_tensor(q.scales, require_grad=False)
        return cls(values, scales, s, zp, linear.bias, d_input, d_output)

    def forward(self, x: Tensor) -> Tensor:
        scales = self.scales.val()
        return F.static_quantized_linear(
            x,
            self.values.val(),
            scales.reshape((scales.shape[0],)),
            self.input_scale.val(),
            self.input_zero_point.val(),
            None if self.bias is None else self.bias.val(),
        )


class StaticQuantizedConv2d(Module):
    """A `Conv2d` with an int8 ``[C_out, C_in / groups, KH, KW]`` weight (one scale per output
    channel, or one) and its input quantized by calibrated parameters; on ndarray a grouped or
    depthwise layer sums its integers in the direct grouped kernels, the others through im2col
    and the int8 GEMM.

    Attributes:
        values: Int (int8) param of the weight.
        scales: float32 param, ``[C_out, 1]`` or ``[1]``.
        input_scale, input_zero_point: the input's calibrated ``[1]`` params.
        bias: float ``[C_out]`` or None, kept as it was.
        stride, padding, dilation, groups: the `Conv2d`'s.
    """

    values: Param
    scales: Param
    input_scale: Param
    input_zero_point: Param
    bias: Param | None
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] | tuple[tuple[int, int], tuple[int, int]] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    @classmethod
    def from_conv2d(
        cls, conv: Conv2d, scheme: QuantScheme, scale: np.ndarray, zero_point: np.ndarray
    ) -> StaticQuantizedConv2d:
        """Quantize `conv`'s weight (per output channel or per tensor) and keep the input's
        calibrated `scale` and `zero_point`."""
        weight = conv.weight.val().detach()
        shape = tuple(weight.shape)
        rows = quantize_tensor(weight.reshape((shape[0], -1)), _static_weight_scheme(scheme, "calibrate"))
        s, zp = _input_params(weight, scale, zero_point)
        values = Param.from_tensor(rows.values.reshape(shape), require_grad=False)
        scales = Param.from_tensor(rows.scales, require_grad=False)
        return cls(values, scales, s, zp, conv.bias, conv.stride, conv.padding, conv.dilation, conv.groups)

    def forward(self, x: Tensor) -> Tensor:
        scales = self.scales.val()
        return F.static_quantized_conv2d(
            x,
            self.values.val(),
            scales.reshape((scales.shape[0],)),
            self.input_scale.val(),
            self.input_zero_point.val(),
            None if self.bias is None else self.bias.val(),
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )
