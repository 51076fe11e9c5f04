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

from burn.foundations.kind import Float
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

