"""Sequences and optionals: ``SequenceConstruct``, ``SequenceEmpty``, ``SequenceAt``,
``SequenceInsert``, ``SequenceErase``, ``SequenceLength``, ``SplitToSequence``,
``ConcatFromSequence``, ``SequenceMap``, ``Optional``, ``OptionalHasElement`` and
``OptionalGetElement``.

A sequence value is a Python list of the graph's values (tensors or host arrays), never
changed in place: each op that edits one returns a new list, so a sequence read by two nodes
stays what it was for both. An empty optional is None (what an omitted input is too); a full one
is its value itself. Positions and lengths are host int64 scalars, as ONNX's shape ops give.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from burn.onnx.errors import OnnxError
from burn.onnx.graph import Body
from burn.onnx.ops import register
from burn.onnx.runtime import Ctx, ints, is_tensor, norm_axis

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Value


def _sequence(node: Node, value: Value, index: int = 0) -> list[Value]:
    if not isinstance(value, list):
        got = "nothing (an empty optional)" if value is None else "a tensor"
        raise OnnxError(f"node {node.name!r} ({node.op_type}): input {index} must be a sequence, got {got}")
    return value


def _tensor_input(node: Node, value: Value, index: int) -> Value:
    if value is None or isinstance(value, list):
        got = "nothing" if value is None else "a sequence"
        raise OnnxError(f"node {node.name!r} ({node.op_type}): input {index} must be a tensor, got {got}")
    return value


def _position(node: Node, value: Value, length: int, inclusive: bool) -> int:
    """The position input as an index into a sequence of `length` (negative counts from the end;
    `inclusive`: ``length`` itself is allowed, for insertion at the end)."""
    values = ints(value)
    if len(values) != 1:
        raise OnnxError(f"node {node.name!r} ({node.op_type}): position must be one integer, got {values}")
    pos = values[0]
    top = length if inclusive else length - 1
    if not -length <= pos <= top:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): position {pos} is out of range for a sequence of "
            f"{length} (allowed: {-length} to {top})"
        )
    return pos + length if pos < 0 else pos


def _shape(value: Value) -> tuple[int, ...]:
    return tuple(value.shape) if is_tensor(value) else np.shape(value)


@register("SequenceEmpty", "sequence", sequences=True)
def _sequence_empty(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [[]]


@register("SequenceConstruct", "sequence", sequences=True)
def _sequence_construct(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [[_tensor_input(node, v, i) for i, v in enumerate(inputs)]]


@register("SequenceAt", "sequence", sequences=True)
def _sequence_at(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    seq = _sequence(node, inputs[0])
    return [seq[_position(node, inputs[1], len(seq), inclusive=False)]]


@register("SequenceInsert", "sequence", sequences=True)
def _sequence_insert(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    seq = _sequence(node, inputs[0])
    value = _tensor_input(node, inputs[1], 1)
    pos = len(seq) if len(inputs) < 3 or inputs[2] is None else _position(node, inputs[2], len(seq), True)
    return [[*seq[:pos], value, *seq[pos:]]]


@register("SequenceErase", "sequence", sequences=True)
def _sequence_erase(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    seq = _sequence(node, inputs[0])
    if not seq:
        raise OnnxError(f"node {node.name!r} (SequenceErase): the sequence is empty")
    given = len(inputs) > 1 and inputs[1] is not None
    pos = _position(node, inputs[1], len(seq), False) if given else len(seq) - 1
    return [[*seq[:pos], *seq[pos + 1 :]]]


@register("SequenceLength", "sequence", sequences=True)
def _sequence_length(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [np.asarray(len(_sequence(node, inputs[0])), np.int64)]


@register("SplitToSequence", "sequence", sequences=True)
def _split_to_sequence(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = _tensor_input(node, inputs[0], 0)
    shape = _shape(x)
    axis = norm_axis(int(node.attr("axis", 0)), len(shape), node)
    size = shape[axis]
    split = inputs[1] if len(inputs) > 1 else None
    if split is None:
        sizes = [1] * size
    else:
        values = ints(split)
        if np.ndim(Ctx.host(split)) == 0:  # one chunk length: the last chunk takes what is left
            if values[0] < 1:
                raise OnnxError(f"node {node.name!r} (SplitToSequence): split {values[0]} must be positive")
            sizes = [min(values[0], size - start) for start in range(0, size, values[0])]
        else:
            sizes = values
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise OnnxError(
                f"node {node.name!r} (SplitToSequence): split sizes {sizes} must be non-negative and sum "
                f"to the size {size} of axis {axis} (input shape {list(shape)})"
            )
    squeeze = split is None and not node.attr("keepdims", 1)
    out: list[Value] = []
    start = 0
    for length in sizes:
        if is_tensor(x):
            part = x.narrow(axis, start, length)
            out.append(part.squeeze(axis) if squeeze else part)
        else:
            part = np.take(np.asarray(x), np.arange(start, start + length), axis=axis)
            out.append(np.squeeze(part, axis) if squeeze else part)
        start += length
    return [out]


@register("ConcatFromSequence", "sequence", sequences=True)
def _concat_from_sequence(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.tensor.tensor import Tensor

    seq = _sequence(node, inputs[0])
    if not seq:
        raise OnnxError(f"node {node.name!r} (ConcatFromSequence): the sequence is empty (no shape to give)")
    new_axis = bool(node.attr("new_axis", 0))
    rank = len(_shape(seq[0])) + (1 if new_axis else 0)
    if "axis" not in node.attrs:
        raise OnnxError(f"node {node.name!r} (ConcatFromSequence): the attribute 'axis' is required")
    axis = norm_axis(int(node.attr("axis")), rank, node)
    if not any(map(is_tensor, seq)):
        arrays = [np.asarray(v) for v in seq]
        return [np.stack(arrays, axis) if new_axis else np.concatenate(arrays, axis)]
    tensors = [ctx.tensor(v) for v in seq]
    return [Tensor.stack(tensors, axis) if new_axis else Tensor.cat(tensors, axis)]


@register("SequenceMap", "sequence", sequences=True)
def _sequence_map(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    body = node.attr("body")
    if not isinstance(body, Body):
        raise OnnxError(f"node {node.name!r} (SequenceMap): the subgraph attribute 'body' is missing")
    seq = _sequence(node, inputs[0])
    lengths = {len(v) for v in inputs if isinstance(v, list)}
    if len(lengths) != 1:
        raise OnnxError(
            f"node {node.name!r} (SequenceMap): the input sequences have different lengths {sorted(lengths)}"
        )
    if len(body.inputs) != len(inputs) or len(body.outputs) != len(node.outputs):
        raise OnnxError(
            f"node {node.name!r} (SequenceMap): the body takes {len(body.inputs)} inputs and gives "
            f"{len(body.outputs)} outputs for a node of {len(inputs)} inputs and {len(node.outputs)} outputs"
        )
    assert ctx.run_body is not None  # OnnxModel always sets it
    outs: list[list[Value]] = [[] for _ in body.outputs]
    for i in range(len(seq)):
        # each sequence gives its i-th element; a tensor input is given whole every time
        feeds = {
            name: v[i] if isinstance(v, list) else v for name, v in zip(body.inputs, inputs, strict=True)
        }
        for out, value in zip(outs, ctx.run_body(body, feeds), strict=True):
            out.append(value)
    return list(outs)


@register("Optional", "sequence", sequences=True)
def _optional(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    if inputs and inputs[0] is not None:
        return [inputs[0]]
    if "type" not in node.attrs:
        raise OnnxError(f"node {node.name!r} (Optional): an empty optional needs the attribute 'type'")
    return [None]


@register("OptionalHasElement", "sequence", sequences=True)
def _optional_has_element(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [np.asarray(bool(inputs) and inputs[0] is not None)]


@register("OptionalGetElement", "sequence", sequences=True)
def _optional_get_element(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    if not inputs or inputs[0] is None:
        raise OnnxError(f"node {node.name!r} (OptionalGetElement): the optional is empty")
    return [inputs[0]]
