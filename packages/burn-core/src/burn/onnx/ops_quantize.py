"""The linear quantization ops as plain computations: ``QuantizeLinear``, ``DequantizeLinear``
and ``DynamicQuantizeLinear``. The quantized values are integer tensors (int8, uint8, int16:
burn computes them in Int and each output comes back in its declared type) or, for the types
narrower than any burn dtype (int4, uint4, int2, uint2, float8, float4), NumPy arrays of their
``ml_dtypes`` type (`burn.onnx.narrow_dtypes`). Scales and zero points are per tensor, per axis
or per block (``block_size``), as ONNX defines them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np

from burn.foundations.kind import Float, Int
from burn.onnx.errors import OnnxError
from burn.onnx.graph import onnx_dtype
from burn.onnx.narrow_dtypes import cast_narrow, is_narrow, is_narrow_integer
from burn.onnx.ops import register
from burn.onnx.runtime import Ctx, is_tensor, norm_axis

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Value
    from burn.tensor.tensor import Tensor


def _opt(inputs: Sequence[Any], i: int) -> Any:
    return inputs[i] if len(inputs) > i and inputs[i] is not None else None


def _spread(ctx: Ctx, node: Node, value: Value, shape: tuple[int, ...], kind: Any) -> Tensor:
    """A scale or zero point shaped to broadcast over an input of `shape`: one value, one per
    index of ``axis``, or one per block of ``block_size`` indices along ``axis``."""
    t = ctx.tensor(value, kind)
    rank = len(shape)
    if t.num_elements() == 1 and len(t.shape) <= 1:
        return t.reshape((1,) * rank)
    axis = norm_axis(node.attr("axis", 1), rank, node)
    block = int(node.attr("block_size", 0) or 0)
    n = shape[axis]
    if block > 0:
        blocks = -(-n // block)
        if len(t.shape) != rank or t.shape[axis] != blocks:
            raise OnnxError(
                f"node {node.name!r} ({node.op_type}): a blocked scale needs shape {list(shape)} with "
                f"{blocks} blocks of {block} on axis {axis}, got {list(t.shape)}"
            )
        return t.select(axis, [i // block for i in range(n)])
    if len(t.shape) != 1 or t.shape[0] != n:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): a per-axis scale must be 1-D of size {n} (axis {axis}), "
            f"got shape {list(t.shape)}"
        )
    return t.reshape(tuple(n if d == axis else 1 for d in range(rank)))


def _value_dtype(node: Node, inputs: Sequence[Value], index: int) -> np.dtype[Any] | None:
    value = _opt(inputs, index)
    if value is None:
        return None
    if not is_tensor(value):
        return np.asarray(value).dtype
    return node.input_dtype(index)


def _integer_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = ml_dtypes.iinfo(dtype) if is_narrow(dtype) else np.iinfo(dtype)
    return int(info.min), int(info.max)


@register("QuantizeLinear", "math", "results of types narrower than burn's (int4, float8...) are host arrays")
def _quantize(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0], Float)
    zp_type = _value_dtype(node, inputs, 2)
    attr_type = node.attr("output_dtype")
    target = zp_type if zp_type is not None else onnx_dtype(attr_type) if attr_type else np.dtype(np.uint8)
    shape = tuple(x.shape)
    scaled = x / _spread(ctx, node, inputs[1], shape, Float)
    zp = _opt(inputs, 2)
    integer = target.kind in "iu" or is_narrow_integer(target)
    if integer:
        # round half to even, add the zero point, saturate to the type's range
        q = scaled.round()
        if zp is not None:
            q = q + _spread(ctx, node, zp, shape, Float)
        lo, hi = _integer_range(target)
        q = q.clamp(float(lo), float(hi))
        if is_narrow(target):
            return [Ctx.host(q).astype(target)]
        if target.itemsize * 8 > 32 or target.kind not in "iu":
            raise OnnxError(f"node {node.name!r} (QuantizeLinear): {target.name} is not a quantized type")
        return [q.int()]
    if not is_narrow(target):
        raise OnnxError(f"node {node.name!r} (QuantizeLinear): {target.name} is not a quantized type")
    if zp is not None and target.name == "float4_e2m1fn":
        scaled = scaled + _spread(ctx, node, zp, shape, Float)
    return [cast_narrow(Ctx.host(scaled), target, bool(node.attr("saturate", 1)))]


@register("DequantizeLinear", "math")
def _dequantize(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    # in the run's float dtype: exact for int8/int16 and the narrow types in float32
    x = ctx.tensor(inputs[0], Float)
    shape = tuple(x.shape)
    zp = _opt(inputs, 2)
    if zp is not None:
        x = x - _spread(ctx, node, zp, shape, Float)
    return [x * _spread(ctx, node, inputs[1], shape, Float)]


@register("DynamicQuantizeLinear", "math")
def _dynamic_quantize(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0], Float)
    # The range always holds 0, so that 0 quantizes exactly; uint8 over [0, 255].
    lo = x.min().reshape(()).clamp_max(0.0)
    hi = x.max().reshape(()).clamp_min(0.0)
    scale = (hi - lo) / 255.0
    zero = (lo.neg() / scale).round().clamp(0.0, 255.0)
    ones = (1,) * len(x.shape)
    y = ((x / scale.reshape(ones)).round() + zero.reshape(ones)).clamp(0.0, 255.0)
    return [y.int(), scale, zero.int()]



# -- integer products: MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv -----------------------
def _centered(ctx: Ctx, node: Node, inputs: Sequence[Value], i: int, zp_index: int, zp_axis: int) -> Tensor:
    """Input `i` as an Int tensor minus its zero point (input `zp_index`): one value, or one per
    index of the input's dim `zp_axis` (counted from the end: a matrix's row -2 or column -1, a
    weight's output channel 0)."""
    x = ctx.tensor(inputs[i], Int)
    zp = _opt(inputs, zp_index)
    if zp is None:
        return x
    z = ctx.tensor(zp, Int)
    if z.num_elements() == 1:
        return x - z.reshape((1,) * len(x.shape))
    axis = zp_axis % len(x.shape)
    n = x.shape[axis]
    if len(z.shape) != 1 or z.shape[0] != n:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): the zero point of input {i} must be one value or "
            f"{n} values (one per index of dim {axis} of shape {list(x.shape)}), got shape {list(z.shape)}"
        )
    return x - z.reshape(tuple(n if d == axis else 1 for d in range(len(x.shape))))


def _scale_along(ctx: Ctx, node: Node, value: Value, rank: int, axis: int) -> Tensor:
    """A scale (or output zero point): one value, or one per index of dim `axis` of a rank-`rank`
    result."""
    s = ctx.tensor(value, Float)
    if s.num_elements() == 1:
        return s.reshape((1,) * rank)
    if len(s.shape) != 1:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): a scale or zero point must be one value or 1-D, "
            f"got shape {list(s.shape)}"
        )
    return s.reshape(tuple(s.shape[0] if d == axis % rank else 1 for d in range(rank)))


def _exact_float_conv(ctx: Ctx, node: Node, x: Tensor, w: Tensor, bias: Tensor | None) -> Tensor:
    """The convolution of two Int tensors (and an Int bias), exact: in float64 where the backend
    has it, else in float32 only while every sum stays below 2**24 (checked on the values)."""
    from burn.foundations.dtype import DType
    from burn.onnx.ops_nn import conv_nd

    caps = ctx.backend.capabilities
    wide = DType.F64 if caps.supports(DType.F64) else DType.F32
    if wide is DType.F32:
        terms = int(np.prod(w.shape[1:]))
        bound = float(x.abs().max().to_numpy()) * float(w.abs().max().to_numpy()) * terms
        if bias is not None:
            bound += float(bias.abs().max().to_numpy())
        if bound >= 2**24:
            raise OnnxError(
                f"node {node.name!r} ({node.op_type}): sums up to {bound:.0f} are not exact in float32 "
                f"and backend {ctx.backend.name!r} has no float64: refused rather than rounded"
            )
    b = None if bias is None else bias.float().cast(wide)
    y = conv_nd(node, x.float().cast(wide), w.float().cast(wide), b)
    return y.round().int()


def _requantize(
    ctx: Ctx, node: Node, acc: Tensor, scale: Tensor, inputs: Sequence[Value], y_zp: int, axis: int
) -> Tensor:
    """``saturate(round(acc * scale) + y_zero_point)`` in the zero point's type (without one, the
    first input's type), as ONNX's reference computes it; the zero point is one value or one per
    index of the result's dim `axis`."""
    target = _value_dtype(node, inputs, y_zp) or _value_dtype(node, inputs, 0) or np.dtype(np.uint8)
    y = (acc.float().cast(scale.dtype) * scale).round()
    zp = _opt(inputs, y_zp)
    if zp is not None:
        y = y + _scale_along(ctx, node, zp, len(y.shape), axis).cast(scale.dtype)
    lo, hi = _integer_range(target)
    return y.clamp(float(lo), float(hi)).int()


@register("MatMulInteger", "nn")
def _matmul_integer(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    # int8 / uint8 operands minus their zero points (per row of A, per column of B), summed in Int
    a = _centered(ctx, node, inputs, 0, 2, -2 if len(_shape(inputs[0])) > 1 else -1)
    b = _centered(ctx, node, inputs, 1, 3, -1)
    return [a.matmul(b)]


@register("ConvInteger", "nn", "1-D to 3-D; exact (float64 sums, or float32 checked below 2**24)")
def _conv_integer(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = _centered(ctx, node, inputs, 0, 2, 0)
    w = _centered(ctx, node, inputs, 1, 3, 0)
    return [_exact_float_conv(ctx, node, x, w, None)]


@register("QLinearMatMul", "nn")
def _qlinear_matmul(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    a = _centered(ctx, node, inputs, 0, 2, -2 if len(_shape(inputs[0])) > 1 else -1)
    b = _centered(ctx, node, inputs, 3, 5, -1)
    acc = a.matmul(b)
    rank = len(acc.shape)
    scale = _scale_along(ctx, node, inputs[1], rank, -2) * _scale_along(ctx, node, inputs[4], rank, -1)
    scale = scale / _scale_along(ctx, node, inputs[6], rank, -2)
    return [_requantize(ctx, node, acc, scale, inputs, 7, -2)]


@register("QLinearConv", "nn", "1-D to 3-D; per-tensor or per-output-channel weight scales")
def _qlinear_conv(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = _centered(ctx, node, inputs, 0, 2, 0)
    w = _centered(ctx, node, inputs, 3, 5, 0)
    bias = ctx.tensor(inputs[8], Int) if _opt(inputs, 8) is not None else None
    acc = _exact_float_conv(ctx, node, x, w, bias)
    rank = len(acc.shape)
    scale = _scale_along(ctx, node, inputs[1], rank, 1) * _scale_along(ctx, node, inputs[4], rank, 1)
    scale = scale / _scale_along(ctx, node, inputs[6], rank, 1)
    return [_requantize(ctx, node, acc, scale, inputs, 7, 1)]


def _shape(value: Value) -> tuple[int, ...]:
    """The shape of an input value (a tensor or a host array)."""
    return tuple(value.shape) if is_tensor(value) else np.shape(value)
