"""How big a node's output will be, from its inputs, before it is computed.

A constant fold at load time (and a host computation or a tensor op at call time) may build an
array far larger than its inputs: ``Expand`` of one float to ``[2^14, 2^15]`` is 2 GiB from 20
bytes. `output_size` computes, in Python ints that cannot overflow, the elements and item size
of what the ops that can grow their inputs produce (`GROWING_OPS`); `check_output` refuses a node
over the limits with an `OnnxError` naming it, before NumPy or a backend allocates anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from burn.foundations.limits import Limits
from burn.onnx.errors import OnnxError
from burn.onnx.graph import Node
from burn.onnx.runtime import is_tensor

_BROADCASTING = {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal", "Greater", "GreaterOrEqual",
    "Less", "LessOrEqual", "Where", "Max", "Min", "Mean", "Sum", "PRelu",
}  # fmt: skip
_SPATIAL = {"Conv", "ConvTranspose", "MaxPool", "AveragePool"}


def _shape(value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    return tuple(value.shape) if is_tensor(value) else tuple(np.shape(value))


def _itemsize(value: Any) -> int:
    if value is None:
        return 0
    if is_tensor(value):
        return 4
    return int(np.asarray(value).dtype.itemsize)


def _host_ints(node: Node, value: Any, what: str) -> list[int]:
    array = value.to_numpy() if is_tensor(value) else np.asarray(value)
    if not np.issubdtype(array.dtype, np.integer) or array.ndim > 1:
        raise OnnxError(f"node {node.name!r} ({node.op_type}): {what} must be a 1-D integer tensor")
    return [int(v) for v in array.reshape(-1)]


def _broadcast(node: Node, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for shape in shapes:
        for i, n in enumerate((1,) * (rank - len(shape)) + tuple(shape)):
            if n == 1:
                continue
            if out[i] not in (1, n):
                raise OnnxError(
                    f"node {node.name!r} ({node.op_type}): shapes {', '.join(map(str, map(list, shapes)))} "
                    f"do not broadcast"
                )
            out[i] = n
    return tuple(out)


def _spatial_elements(node: Node, inputs: Sequence[Any]) -> int | None:
    x = _shape(inputs[0])
    if x is None or len(x) < 3:
        return None
    rank = len(x) - 2
    w = _shape(inputs[1]) if len(inputs) > 1 else None
    kernel = list(node.attr("kernel_shape") or (w[2:] if w is not None else [1] * rank))
    strides = list(node.attr("strides") or [1] * rank)
    dilations = list(node.attr("dilations") or [1] * rank)
    pads = list(node.attr("pads") or [0] * (2 * rank))
    if not (len(kernel) == len(strides) == len(dilations) == rank and len(pads) == 2 * rank):
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): kernel_shape {kernel}, strides {strides}, dilations "
            f"{dilations} and pads {pads} do not fit a {rank}-D input of shape {list(x)}"
        )
    padded = [x[2 + i] + pads[i] + pads[i + rank] for i in range(rank)]
    channels = x[1]
    if node.op_type == "ConvTranspose" and w is not None and len(w) >= 2:
        out_pad = list(node.attr("output_padding") or [0] * rank)[:rank] + [0] * rank
        spatial = [
            max((x[2 + i] - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 + out_pad[i]
                - pads[i] - pads[i + rank], 0)
            for i in range(rank)
        ]  # fmt: skip
        return x[0] * w[1] * int(node.attr("group", 1) or 1) * math.prod(spatial)
    if node.op_type == "Conv" and w is not None and w:
        channels = max(channels, w[0])
    # The padded input (pooling pads it explicitly) bounds the output of a convolution or a pool.
    return x[0] * channels * math.prod(padded)


Size = tuple[int, int] | None  # (elements, itemsize) of an op's largest output, None: unknown


def _expand(node: Node, inputs: Sequence[Any]) -> Size:
    target = _host_ints(node, inputs[1], "the target shape")
    if any(n < 0 for n in target):
        raise OnnxError(f"node {node.name!r} (Expand): negative dims in the target shape {target}")
    return math.prod(_broadcast(node, [_shape(inputs[0]) or (), tuple(target)])), _itemsize(inputs[0])


def _tile(node: Node, inputs: Sequence[Any]) -> Size:
    repeats = _host_ints(node, inputs[1], "repeats")
    shape = _shape(inputs[0]) or ()
    if len(repeats) != len(shape) or any(r < 0 for r in repeats):
        raise OnnxError(f"node {node.name!r} (Tile): repeats {repeats} do not fit a {len(shape)}-D input")
    return math.prod(n * r for n, r in zip(shape, repeats, strict=True)), _itemsize(inputs[0])


def _constant_of_shape(node: Node, inputs: Sequence[Any]) -> Size:
    dims = _host_ints(node, inputs[0], "the shape")
    if any(n < 0 for n in dims):
        raise OnnxError(f"node {node.name!r} (ConstantOfShape): negative dims in the shape {dims}")
    value = node.attr("value")
    return math.prod(dims), int(np.asarray(value).dtype.itemsize) if value is not None else 4


def _range(node: Node, inputs: Sequence[Any]) -> Size:
    if len(inputs) < 3 or any(is_tensor(v) for v in inputs[:3]):
        return None
    start, limit, delta = (np.asarray(v).reshape(-1) for v in inputs[:3])
    if start.size != 1 or limit.size != 1 or delta.size != 1:
        raise OnnxError(f"node {node.name!r} (Range): start, limit and delta must be scalars")
    s, lim, d = float(start[0]), float(limit[0]), float(delta[0])
    if not (math.isfinite(s) and math.isfinite(lim) and math.isfinite(d)) or d == 0:
        raise OnnxError(f"node {node.name!r} (Range): start {s}, limit {lim}, delta {d} make no finite range")
    return max(math.ceil((lim - s) / d), 0), _itemsize(inputs[0])


def _concat(node: Node, inputs: Sequence[Any]) -> Size:
    shapes = [s for s in (_shape(v) for v in inputs) if s is not None]
    return sum(math.prod(s) for s in shapes), max((_itemsize(v) for v in inputs), default=4)


def _pad(node: Node, inputs: Sequence[Any]) -> Size:
    if inputs[1] is None:
        return None
    shape = _shape(inputs[0]) or ()
    pads = _host_ints(node, inputs[1], "pads")
    axes = _host_ints(node, inputs[3], "axes") if len(inputs) > 3 and inputs[3] is not None else None
    grown = list(shape)
    count = len(axes) if axes is not None else len(shape)
    if len(pads) != 2 * count:
        raise OnnxError(f"node {node.name!r} (Pad): {len(pads)} pads for {count} axes")
    for i, axis in enumerate(axes if axes is not None else range(len(shape))):
        if -len(shape) <= axis < len(shape):
            grown[axis] += max(pads[i], 0) + max(pads[i + count], 0)
    return math.prod(grown), _itemsize(inputs[0])


def _one_hot(node: Node, inputs: Sequence[Any]) -> Size:
    depth = np.asarray(inputs[1].to_numpy() if is_tensor(inputs[1]) else inputs[1]).reshape(-1)
    if depth.size != 1 or not np.isfinite(depth[0]) or depth[0] < 1:
        raise OnnxError(f"node {node.name!r} (OneHot): depth must be one positive number")
    return math.prod(_shape(inputs[0]) or ()) * int(depth[0]), 4


def _gather(node: Node, inputs: Sequence[Any]) -> Size:
    shape, indices = _shape(inputs[0]) or (), _shape(inputs[1]) or ()
    axis = node.attr("axis", 0)
    if not shape or not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
        return None
    return math.prod(shape) // max(shape[axis], 1) * math.prod(indices), _itemsize(inputs[0])


def _broadcasting(node: Node, inputs: Sequence[Any]) -> Size:
    shapes = [s for s in (_shape(v) for v in inputs) if s is not None]
    if not shapes:
        return None
    itemsize = max(_itemsize(v) for v in inputs)
    if all(s == shapes[0] for s in shapes):  # the common case: nothing broadcasts
        return math.prod(shapes[0]), itemsize
    return math.prod(_broadcast(node, shapes)), itemsize


def _matmul(node: Node, inputs: Sequence[Any]) -> Size:
    a, b = _shape(inputs[0]), _shape(inputs[1])
    if not a or not b:
        return None
    if node.op_type == "Gemm":
        rows = a[1] if node.attr("transA", 0) and len(a) > 1 else a[0]
        cols = b[0] if node.attr("transB", 0) else b[-1]
        return rows * cols, 4
    batch = math.prod(_broadcast(node, [a[:-2], b[:-2]])) if len(a) > 2 or len(b) > 2 else 1
    return batch * (a[-2] if len(a) > 1 else 1) * (b[-1] if len(b) > 1 else 1), 4


def _spatial(node: Node, inputs: Sequence[Any]) -> Size:
    elements = _spatial_elements(node, inputs)
    return None if elements is None else (elements, 4)


# op -> (its sizer, the inputs it needs)
_SIZERS: dict[str, tuple[Callable[[Node, Sequence[Any]], Size], int]] = {
    "Expand": (_expand, 2),
    "Tile": (_tile, 2),
    "ConstantOfShape": (_constant_of_shape, 1),
    "Range": (_range, 3),
    "Concat": (_concat, 0),
    "Pad": (_pad, 2),
    "OneHot": (_one_hot, 2),
    "Gather": (_gather, 2),
    "MatMul": (_matmul, 2),
    "Gemm": (_matmul, 2),
    **{op: (_broadcasting, 0) for op in _BROADCASTING},
    **{op: (_spatial, 1) for op in _SPATIAL},
}
# The ops `output_size` sizes: any other op's output is no larger than its inputs.
GROWING_OPS = frozenset(_SIZERS)
# The ops whose output size is set by the *values* of an input (a shape, a count, pads): a few
# bytes can ask for any size, so a run checks them before each call. The other growing ops give at
# most the product of their inputs' sizes; a run leaves those to the allocation (its failure is an
# OnnxError naming the node), as the check costs ~5 us a node.
SHAPED_BY_VALUES = frozenset({"Expand", "Tile", "ConstantOfShape", "Range", "Pad", "OneHot"})


def output_size(node: Node, inputs: Sequence[Any]) -> Size:
    """``(elements, itemsize)`` of the largest output of `node` on `inputs` (host arrays or
    tensors) for the ops that can grow their inputs (`GROWING_OPS`), None for the others.

    Raises:
        OnnxError: inputs these ops cannot take (negative sizes, shapes that do not broadcast, a
            zero step).
    """
    entry = _SIZERS.get(node.op_type)
    if entry is None:
        return None
    sizer, needed = entry
    if len(inputs) < needed or (needed and inputs[0] is None):
        return None  # the op reports the missing input
    return sizer(node, inputs)


def check_output(node: Node, inputs: Sequence[Any], limits: Limits, *, folding: bool) -> None:
    """Refuse `node` when its output (`output_size`) is over ``max_tensor_elements``, or, for a
    fold at load time or a host computation (`folding`), over ``max_folded_bytes``."""
    size = output_size(node, inputs)
    if size is None:
        return
    elements, itemsize = size
    if elements > limits.max_tensor_elements:
        what = f"node {node.name!r} ({node.op_type})'s output"
        raise OnnxError(limits.refusal("max_tensor_elements", elements, what))
    if folding and elements * itemsize > limits.max_folded_bytes:
        what = f"node {node.name!r} ({node.op_type}), folded to a constant"
        raise OnnxError(limits.refusal("max_folded_bytes", elements * itemsize, what))
