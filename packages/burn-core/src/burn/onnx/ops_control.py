"""Control flow: ``If``, ``Loop`` and ``Scan``. Their subgraphs (`burn.onnx.graph.Body`) run
through the same node runner as the main graph (`Ctx.run_body`): each sees every value of the
graphs around it, loop-carried values pass from one iteration to the next, and per-iteration
outputs are stacked along their axis. Conditions and trip counts are read on the host (one
device read per iteration for a ``Loop`` whose body computes its condition).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.onnx.errors import OnnxError
from burn.onnx.graph import Body
from burn.onnx.ops import register
from burn.onnx.runtime import Ctx, is_tensor, norm_axis

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Value


def _body(node: Node, name: str) -> Body:
    body = node.attr(name)
    if not isinstance(body, Body):
        raise OnnxError(f"node {node.name!r} ({node.op_type}): the subgraph attribute {name!r} is missing")
    return body


def _run(ctx: Ctx, node: Node, body: Body, feeds: dict[str, Any]) -> list[Any]:
    if ctx.run_body is None:  # pragma: no cover - OnnxModel always sets it
        raise OnnxError(f"node {node.name!r} ({node.op_type}): no graph runner for its subgraph")
    return ctx.run_body(body, feeds)


def _stack(ctx: Ctx, values: Sequence[Value], axis: int) -> Value:
    """Per-iteration values joined along a new dim `axis` (on the host when all are)."""
    from burn.tensor.tensor import Tensor

    if not any(map(is_tensor, values)):
        return np.stack([np.asarray(v) for v in values], axis)
    return Tensor.stack([ctx.tensor(v) for v in values], axis)


def _truth(value: Value) -> bool:
    return bool(Ctx.host(value).reshape(-1)[0])


@register("If", "logic", sequences=True)
def _if(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    branch = _body(node, "then_branch" if _truth(inputs[0]) else "else_branch")
    outs = _run(ctx, node, branch, {})
    if len(outs) != len(node.outputs):
        raise OnnxError(
            f"node {node.name!r} (If): the branch {branch.name!r} gives {len(outs)} outputs, the node has "
            f"{len(node.outputs)}"
        )
    return outs


@register("Loop", "logic", "a loop with scan outputs must run at least once (their shape is unknown)",
          sequences=True)
def _loop(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    body = _body(node, "body")
    trips = None if len(inputs) < 1 or inputs[0] is None else int(Ctx.host(inputs[0]).reshape(-1)[0])
    cond = True if len(inputs) < 2 or inputs[1] is None else _truth(inputs[1])
    carried = list(inputs[2:])
    n_carried = len(carried)
    if len(body.inputs) != n_carried + 2 or len(body.outputs) < n_carried + 1:
        raise OnnxError(
            f"node {node.name!r} (Loop): the body takes {len(body.inputs)} inputs and gives "
            f"{len(body.outputs)} outputs for {n_carried} loop-carried values"
        )
    n_scan = len(body.outputs) - 1 - n_carried
    scans: list[list[Value]] = [[] for _ in range(n_scan)]
    i = 0
    while cond and (trips is None or i < trips):
        feeds = dict(zip(body.inputs, [np.asarray(i, np.int64), np.asarray(cond), *carried], strict=True))
        outs = _run(ctx, node, body, feeds)
        cond = _truth(outs[0])
        carried = outs[1 : 1 + n_carried]
        for k in range(n_scan):
            scans[k].append(outs[1 + n_carried + k])
        i += 1
    if n_scan and i == 0:
        raise OnnxError(f"node {node.name!r} (Loop): ran no iteration, so its scan outputs have no shape")
    return [*carried, *(_stack(ctx, s, 0) for s in scans)]


def _slice(value: Value, axis: int, index: int) -> Value:
    if is_tensor(value):
        return value.narrow(axis, index, 1).squeeze(axis)
    return np.take(np.asarray(value), index, axis=axis)


@register("Scan", "logic", "opset 9 and later (no batch axis, no sequence_lens)")
def _scan(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    body = _body(node, "body")
    m = int(node.attr("num_scan_inputs", 0))
    n = len(inputs) - m
    if m < 1 or n < 0 or len(body.inputs) != n + m or len(body.outputs) < n:
        raise OnnxError(
            f"node {node.name!r} (Scan): {len(inputs)} inputs with num_scan_inputs={m} do not fit a body of "
            f"{len(body.inputs)} inputs and {len(body.outputs)} outputs"
        )
    k = len(body.outputs) - n
    scan_in = list(inputs[n:])
    ranks = [len(v.shape) if is_tensor(v) else np.ndim(v) for v in scan_in]
    in_axes = [norm_axis(a, r, node, "scan_input_axes") for a, r in
               zip(node.attr("scan_input_axes", [0] * m), ranks, strict=True)]
    in_dirs = node.attr("scan_input_directions", [0] * m)
    lengths = {(v.shape if is_tensor(v) else np.shape(v))[a] for v, a in zip(scan_in, in_axes, strict=True)}
    if len(lengths) != 1:
        raise OnnxError(
            f"node {node.name!r} (Scan): the scan inputs have different lengths {sorted(lengths)}"
        )
    steps = lengths.pop()
    states = list(inputs[:n])
    outputs: list[list[Value]] = [[] for _ in range(k)]
    for t in range(steps):
        slices = [_slice(v, a, steps - 1 - t if d else t)
                  for v, a, d in zip(scan_in, in_axes, in_dirs, strict=True)]
        outs = _run(ctx, node, body, dict(zip(body.inputs, [*states, *slices], strict=True)))
        states = outs[:n]
        for j in range(k):
            outputs[j].append(outs[n + j])
    if k and steps == 0:
        raise OnnxError(
            f"node {node.name!r} (Scan): the scan inputs are empty, so its outputs have no shape"
        )
    out_axes = node.attr("scan_output_axes", [0] * k)
    out_dirs = node.attr("scan_output_directions", [0] * k)
    stacked = []
    for j in range(k):
        per_step = outputs[j][::-1] if out_dirs[j] else outputs[j]
        rank = (len(per_step[0].shape) if is_tensor(per_step[0]) else np.ndim(per_step[0])) + 1
        stacked.append(_stack(ctx, per_step, norm_axis(out_axes[j], rank, node, "scan_output_axes")))
    return [*states, *stacked]
