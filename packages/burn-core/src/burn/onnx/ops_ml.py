"""``ai.onnx.ml`` ops met in exported scikit-learn pipelines: ``Scaler``, ``Normalizer``,
``Binarizer``, ``LinearRegressor``, ``ArrayFeatureExtractor``, ``LabelEncoder`` (numbers to
numbers) and ``OneHotEncoder`` (integer categories), each a few Tensor ops.

Their outputs are float32 as the ONNX-ML spec declares (inputs of any numeric type are converted
first), except `Binarizer` and `ArrayFeatureExtractor`, which keep the input's type, and
`LabelEncoder`, whose type is its values' (int64 or float32).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

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


def _numeric_mapping(node: Node, side: str) -> list[float] | list[int] | None:
    """The ``keys`` or ``values`` of a LabelEncoder as numbers (None when absent); strings are
    refused."""
    if node.attr(f"{side}_strings") is not None:
        raise OnnxError(
            f"node {node.name!r} (LabelEncoder): string {side} are not supported (burn tensors are numeric)"
        )
    tensor = node.attr(f"{side}_tensor")
    if tensor is not None:
        array = np.asarray(tensor).reshape(-1)
        return [float(v) for v in array] if array.dtype.kind == "f" else [int(v) for v in array]
    for suffix, conv in (("int64s", int), ("floats", float)):
        found = node.attr(f"{side}_{suffix}")
        if found is not None:
            return [conv(v) for v in found]
    return None


@register(ML + "LabelEncoder", "index", "numeric keys and values only (no strings)")
def _label_encoder(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    keys, values = _numeric_mapping(node, "keys"), _numeric_mapping(node, "values")
    if keys is None or values is None or len(keys) != len(values):
        raise OnnxError(
            f"node {node.name!r} (LabelEncoder): needs numeric keys and values of one length, got "
            f"{None if keys is None else len(keys)} keys and {None if values is None else len(values)} values"
        )
    float_values = node.attr("values_floats") is not None or (
        node.attr("values_tensor") is not None and np.asarray(node.attr("values_tensor")).dtype.kind == "f"
    )
    default_tensor = node.attr("default_tensor")
    if default_tensor is not None:
        default: float = np.asarray(default_tensor).reshape(-1)[0].item()
    elif float_values:
        default = float(node.attr("default_float", -0.0))
    else:
        default = int(node.attr("default_int64", -1))
    x = ctx.tensor(inputs[0])
    out = x.zeros_like()
    if (out.kind is Float) != float_values:
        out = ctx.tensor(out, Float if float_values else Int)
    out = out.full_like(default)
    for key, value in zip(keys, values, strict=True):
        out = out.mask_fill(x.equal(key), value)
    return [out]


@register(ML + "OneHotEncoder", "index", "integer categories only (cats_int64s)")
def _one_hot_encoder(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    cats = node.attr("cats_int64s")
    if cats is None:
        raise OnnxError(
            f"node {node.name!r} (OneHotEncoder): only integer categories (cats_int64s) are supported"
        )
    x = ctx.tensor(inputs[0])
    if not cats:
        raise OnnxError(f"node {node.name!r} (OneHotEncoder): no categories")
    hits = [x.equal(int(c)).float() for c in cats]
    if not node.attr("zeros", 1):
        found = hits[0]
        for h in hits[1:]:
            found = found + h
        if not bool(found.greater_equal(0.5).all().into_scalar()):
            raise OnnxError(
                f"node {node.name!r} (OneHotEncoder): a value is not one of the categories {list(cats)} "
                "and zeros=0"
            )
    return [type(x).stack(hits, len(x.shape))]
