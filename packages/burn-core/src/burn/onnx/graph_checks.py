"""What a parsed graph must satisfy before it is folded or run, checked once at load.

ONNX requires a graph in topological order with each value written once, each node given its
required inputs, and positive kernel sizes, strides and dilations, non-negative pads. A file
breaking these would otherwise load and fail later, on each call, deep inside an op:
`check_graph` refuses it at load with an `OnnxError` naming the node and the value or attribute.
"""

from __future__ import annotations

from typing import Any

from burn.onnx.errors import OnnxError
from burn.onnx.graph import Graph, Node, min_inputs

# Attributes ONNX requires to be positive (ints or lists of ints), and non-negative.
POSITIVE_ATTRS = ("kernel_shape", "strides", "dilations", "group", "hidden_size", "num_outputs")
NON_NEGATIVE_ATTRS = ("pads", "output_padding")
# Ops whose `pads` attribute ONNX lets be negative (cropping): Pad before opset 11.
_NEGATIVE_PADS_OK = {"Pad"}
# Ops whose leading inputs are optional but positional (counted as required by the schema, and
# given as empty names when omitted): Loop's trip count and condition.
_EMPTY_REQUIRED_OK = {"Loop"}


def _ints(value: Any) -> list[Any] | None:
    """`value` as a list when it is an int or a list of ints, else None (a mistyped attribute the
    op itself reports)."""
    items = value if isinstance(value, list) else [value]
    return items if all(isinstance(v, int) and not isinstance(v, bool) for v in items) else None


def check_attributes(node: Node) -> None:
    """Refuse the attributes of `node` that ONNX requires positive or non-negative and are not."""
    for name in POSITIVE_ATTRS:
        values = _ints(node.attrs[name]) if name in node.attrs else None
        if values is not None and any(v <= 0 for v in values):
            raise OnnxError(
                f"node {node.name!r} ({node.op_type}): attribute {name}={node.attrs[name]} must be positive"
            )
    if node.op_type in _NEGATIVE_PADS_OK:
        return
    for name in NON_NEGATIVE_ATTRS:
        values = _ints(node.attrs[name]) if name in node.attrs else None
        if values is not None and any(v < 0 for v in values):
            raise OnnxError(
                f"node {node.name!r} ({node.op_type}): attribute {name}={node.attrs[name]} "
                "must not be negative"
            )
    pads = node.attrs.get("pads")
    if isinstance(pads, list) and len(pads) % 2:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): pads={pads} must hold a begin and an end per axis"
        )


def check_graph(graph: Graph) -> None:
    """Refuse a graph whose nodes lack a required input, read a value that is not a graph input,
    an initializer or an earlier node's output, write a value twice, or have attributes out of
    ONNX's ranges, and whose outputs nothing produces. Raises `OnnxError` without a source (the
    caller adds it)."""
    written: dict[str, str] = {i.name: "a graph input" for i in graph.inputs}
    written.update((name, "an initializer") for name in graph.initializers)
    required: dict[str, int] = {}
    for node in graph.nodes:
        if node.op_type not in required:
            required[node.op_type] = min_inputs(node.op_type, graph.opset)
        count = required[node.op_type]
        empty_ok = node.op_type in _EMPTY_REQUIRED_OK
        if len(node.inputs) < count or not (empty_ok or all(node.inputs[:count])):
            raise OnnxError(
                f"node {node.name!r} ({node.op_type}) takes {count} required inputs at opset "
                f"{graph.opset}, got {list(node.inputs)}"
            )
        for name in node.inputs:
            if name and name not in written:
                raise OnnxError(
                    f"node {node.name!r} ({node.op_type}) reads {name!r}, which is not a graph input, "
                    f"an initializer or the output of an earlier node"
                )
        check_attributes(node)
        for name in node.outputs:
            if not name:
                continue
            if name in written:
                raise OnnxError(
                    f"node {node.name!r} ({node.op_type}) writes {name!r}, which is already {written[name]}"
                )
            written[name] = f"the output of node {node.name!r}"
    for output in graph.outputs:
        if output.name not in written:
            raise OnnxError(f"graph output {output.name!r} is not produced by any node, input or initializer")
