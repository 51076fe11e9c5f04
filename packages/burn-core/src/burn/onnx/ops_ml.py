"""``ai.onnx.ml`` ops met in exported scikit-learn pipelines: ``Scaler``, ``Normalizer``,
``Binarizer``, ``LinearRegressor`` and ``ArrayFeatureExtractor``, each a few Tensor ops.

Their outputs are float32 as the ONNX-ML spec declares (inputs of any numeric type are converted
first), except `Binarizer` and `ArrayFeatureExtractor`, which keep the input's type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from burn.foundations.kind import Float, Int
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Ctx, Value
    from burn.tensor.tensor import Tensor

ML = "ai.onnx.ml."


def _features(ctx: Ctx, node: Node, value: Value) -> Tensor:
    x = ctx.tensor(value)
    x = x if x.kind is Float else ctx.tensor(x, Float)
    if len(x.shape) not in (1, 2):
        raise OnnxError(f"node {node.name!r} ({node.op_type}): expects [C] or [N, C] features, got {x.shape}")
    return x


def _per_feature(ctx: Ctx, node: Node, name: str, values: Sequence[float], x: Tensor) -> Tensor:
    c = x.shape[-1]
    if len(values) not in (1, c):
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): {name} has {len(values)} values for {c} features"
        )
    return ctx.tensor(list(values), Float).reshape((len(values),))


@register(ML + "Scaler", "math")
def _scaler(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = _features(ctx, node, inputs[0])
    offset = _per_feature(ctx, node, "offset", node.attr("offset", [0.0]), x)
    scale = _per_feature(ctx, node, "scale", node.attr("scale", [1.0]), x)
    return [(x - offset) * scale]


@register(ML + "Normalizer", "math", "norm MAX, L1 or L2 over the last dim")
def _normalizer(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = _features(ctx, node, inputs[0])
    norm = node.attr("norm", "MAX")
    d = len(x.shape) - 1
    if norm == "MAX":
        return [x / x.max_dim(d)]
    if norm == "L1":
        return [x / x.abs().sum_dim(d)]
    if norm == "L2":
        return [x / x.square().sum_dim(d).sqrt()]
    raise OnnxError(f"node {node.name!r} (Normalizer): unknown norm {norm!r}; expected MAX, L1 or L2")


@register(ML + "Binarizer", "math")
def _binarizer(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    if x.kind is not Float:
        raise OnnxError(f"node {node.name!r} (Binarizer): expects a float input, got {x.dtype}")
    return [(x > float(node.attr("threshold", 0.0))).float().cast(x.dtype)]


@register(ML + "LinearRegressor", "nn", "post_transform NONE only")
def _linear_regressor(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = _features(ctx, node, inputs[0])
    post = node.attr("post_transform", "NONE")
    if post != "NONE":
        raise OnnxError(f"node {node.name!r} (LinearRegressor): post_transform {post!r} is not supported")
    targets = int(node.attr("targets", 1))
    coefficients = list(node.attr("coefficients", []))
    c = x.shape[-1]
    if len(coefficients) != targets * c:
        raise OnnxError(
            f"node {node.name!r} (LinearRegressor): {len(coefficients)} coefficients for {targets} "
            f"targets of {c} features"
        )
    w = ctx.tensor(coefficients, Float).reshape((targets, c)).transpose()
    x2 = x.reshape((1, c)) if len(x.shape) == 1 else x
    out = x2 @ w
    intercepts = list(node.attr("intercepts", []))
    if intercepts:
        if len(intercepts) != targets:
            raise OnnxError(
                f"node {node.name!r} (LinearRegressor): {len(intercepts)} intercepts for {targets} targets"
            )
        out = out + ctx.tensor(intercepts, Float).reshape((targets,))
    return [out]


@register(ML + "ArrayFeatureExtractor", "index")
def _array_feature_extractor(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    idx = ctx.tensor(inputs[1], Int).reshape((-1,))
    n = x.shape[-1]
    picked = [int(i) for i in idx.tolist()]
    if any(not 0 <= i < n for i in picked):
        raise OnnxError(
            f"node {node.name!r} (ArrayFeatureExtractor): indices {picked} out of range for {n} features"
        )
    out = x.select(len(x.shape) - 1, idx)
    return [out.reshape((1, len(picked))) if len(x.shape) == 1 else out]
