"""Loss ops: ``NegativeLogLikelihoodLoss`` and ``SoftmaxCrossEntropyLoss`` (ONNX semantics on
burn tensors, so they run on every backend and under autodiff)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from burn import activation as act
from burn.foundations.kind import Int
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Ctx, Value
    from burn.tensor.tensor import Tensor

_REDUCTIONS = ("none", "sum", "mean")


def _nll(ctx: Ctx, node: Node, log_prob: Tensor, target_value: Value, weight_value: Value) -> Tensor:
    """ONNX's NLL of `log_prob` ``[N, C, d...]`` at the classes `target` ``[N, d...]``: each
    element weighted by its class weight (0 where the target is ``ignore_index``); ``mean``
    divides by the sum of those weights, as the ONNX reference does."""
    reduction = node.attr("reduction", "mean")
    if reduction not in _REDUCTIONS:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): reduction {reduction!r} is not one of {_REDUCTIONS}"
        )
    if len(log_prob.shape) < 2:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): the input must be [N, C, ...], "
            f"got shape {list(log_prob.shape)}"
        )
    target = ctx.tensor(target_value, Int)
    expected = (log_prob.shape[0], *log_prob.shape[2:])
    if tuple(target.shape) != tuple(expected):
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): the target's shape {list(target.shape)} does not fit the "
            f"input's {list(log_prob.shape)} (want {list(expected)})"
        )
    ignore = node.attr("ignore_index")
    ignored = target.equal(int(ignore)) if ignore is not None else None
    # Ignored elements may hold any value (-1, C...): gather at class 0, then zero them.
    safe = target.mask_fill(ignored, 0) if ignored is not None else target
    loss = log_prob.gather(1, safe.unsqueeze_dim(1)).squeeze(1).neg()
    weight = None
    if weight_value is not None:
        w = ctx.tensor(weight_value)
        weight = w.select(0, safe.reshape((-1,))).reshape(tuple(target.shape))
    if ignored is not None:
        keep = ignored.bool_not().float().cast(ctx.float_dtype)
        weight = keep if weight is None else weight * keep
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    total = loss.sum().reshape(())
    if reduction == "sum":
        return total
    if weight is not None:
        return total / weight.sum().reshape(())
    return total / math.prod(int(d) for d in loss.shape)


def _opt(inputs: Sequence[Value], i: int) -> Value:
    return inputs[i] if len(inputs) > i else None


@register("NegativeLogLikelihoodLoss", "nn")
def _nll_loss(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [_nll(ctx, node, ctx.tensor(inputs[0]), inputs[1], _opt(inputs, 2))]


@register("SoftmaxCrossEntropyLoss", "nn")
def _softmax_cross_entropy(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    if len(x.shape) < 2:
        raise OnnxError(f"node {node.name!r} (SoftmaxCrossEntropyLoss): the scores must be [N, C, ...]")
    log_prob = act.log_softmax(x, 1)
    loss = _nll(ctx, node, log_prob, inputs[1], _opt(inputs, 2))
    return [loss, log_prob][: max(1, len(node.outputs))]
