"""Shape, indexing and creation ops. Most have a NumPy twin: shape computations run on the host
(and fold to constants at load time when the shapes are static)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.foundations.kind import Bool, Float, Int
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register, register_host
from burn.onnx.runtime import attr_or_input, ints, is_tensor, norm_axis, scalar

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Ctx, Value


def _shape(value: Value) -> tuple[int, ...]:
    return tuple(value.shape) if is_tensor(value) else tuple(np.shape(value))


def _opt(inputs: Sequence[Any], i: int) -> Any:
    return inputs[i] if len(inputs) > i and inputs[i] is not None else None


# -- shape queries: a tensor's shape is known on the host, no device read ---------------------------
def _shape_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    shape = _shape(inputs[0])
    rank = len(shape)
    start = node.attr("start", 0)
    end = node.attr("end", rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return [np.asarray(shape[start:end], dtype=np.int64)]


@register("Shape", "shape", host=_shape_host)
def _shape_op(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return _shape_host(node, inputs)


def _size_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    return [np.asarray(math.prod(_shape(inputs[0])), dtype=np.int64)]


@register("Size", "shape", host=_size_host)
def _size_op(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return _size_host(node, inputs)


# -- creation (always on the host) ------------------------------------------------------------------
@register_host("Constant", "creation", "sparse_value is not supported")
def _constant(node: Node, inputs: Sequence[Any]) -> list[Any]:
    attrs = node.attrs
    if "value" in attrs:
        return [np.asarray(attrs["value"])]
    for name, dtype in (("value_float", np.float32), ("value_int", np.int64)):
        if name in attrs:
            return [np.asarray(attrs[name], dtype=dtype)]
    for name, dtype in (("value_floats", np.float32), ("value_ints", np.int64)):
        if name in attrs:
            return [np.asarray(attrs[name], dtype=dtype)]
    raise OnnxError(f"node {node.name!r} (Constant): only dense values are supported, got {sorted(attrs)}")


@register_host("ConstantOfShape", "creation")
def _constant_of_shape(node: Node, inputs: Sequence[Any]) -> list[Any]:
    value = node.attr("value")
    fill = np.asarray(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    return [np.full(tuple(ints(inputs[0])), fill[0], dtype=fill.dtype)]


@register_host("Range", "creation")
def _range(node: Node, inputs: Sequence[Any]) -> list[Any]:
    start, limit, delta = (np.asarray(v).reshape(()) for v in inputs[:3])
    return [np.arange(start.item(), limit.item(), delta.item()).astype(start.dtype)]


@register("EyeLike", "creation")
def _eye_like(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    rows, cols = _shape(inputs[0])
    k = node.attr("k", 0)
    dtype = node.attr("dtype")
    from burn.onnx.graph import onnx_dtype

    dt = (
        onnx_dtype(dtype)
        if dtype is not None
        else (np.dtype(np.float32) if is_tensor(inputs[0]) else np.asarray(inputs[0]).dtype)
    )
    return [np.eye(rows, cols, k, dtype=dt)]


# -- reshaping --------------------------------------------------------------------------------------
def _reshape_target(node: Node, shape: tuple[int, ...], target: list[int]) -> tuple[int, ...]:
    allowzero = node.attr("allowzero", 0)
    out = [shape[i] if t == 0 and not allowzero and i < len(shape) else t for i, t in enumerate(target)]
    if out.count(-1) == 1:
        known = math.prod(t for t in out if t != -1)
        total = math.prod(shape)
        if known == 0 or total % known:
            raise OnnxError(f"node {node.name!r} (Reshape): cannot reshape {shape} to {target}")
        out[out.index(-1)] = total // known
    return tuple(out)


def _reshape_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    x = np.asarray(inputs[0])
    return [x.reshape(_reshape_target(node, x.shape, ints(inputs[1])))]


@register("Reshape", "shape", host=_reshape_host)
def _reshape(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [x.reshape(_reshape_target(node, tuple(x.shape), ints(inputs[1])))]


def _flatten_shape(node: Node, shape: tuple[int, ...]) -> tuple[int, int]:
    axis = node.attr("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis
    return math.prod(shape[:axis]), math.prod(shape[axis:])


@register(
    "Flatten",
    "shape",
    host=lambda node, inputs: [np.reshape(inputs[0], _flatten_shape(node, np.shape(inputs[0])))],
)
def _flatten(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [x.reshape(_flatten_shape(node, tuple(x.shape)))]


def _perm(node: Node, rank: int) -> list[int]:
    perm = node.attr("perm")
    return list(range(rank))[::-1] if perm is None else [int(p) for p in perm]


@register(
    "Transpose", "shape", host=lambda node, inputs: [np.transpose(inputs[0], _perm(node, np.ndim(inputs[0])))]
)
def _transpose(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [x.permute(_perm(node, len(x.shape)))]


def _squeeze_axes(node: Node, inputs: Sequence[Any], shape: tuple[int, ...]) -> list[int]:
    axes = attr_or_input(node, inputs, 1, "axes")
    if not axes:
        return [i for i, n in enumerate(shape) if n == 1]
    return sorted({norm_axis(a, len(shape), node) for a in axes})


def _squeeze_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    x = np.asarray(inputs[0])
    return [np.squeeze(x, tuple(_squeeze_axes(node, inputs, x.shape)))]


@register("Squeeze", "shape", host=_squeeze_host)
def _squeeze(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    dims = _squeeze_axes(node, inputs, tuple(x.shape))
    keep = tuple(n for i, n in enumerate(x.shape) if i not in dims)
    return [x.reshape(keep)]


def _unsqueeze_shape(node: Node, inputs: Sequence[Any], shape: tuple[int, ...]) -> tuple[int, ...]:
    axes = attr_or_input(node, inputs, 1, "axes") or []
    rank = len(shape) + len(axes)
    norm = sorted({norm_axis(a, rank, node) for a in axes})
    rest = iter(shape)
    return tuple(1 if i in norm else next(rest) for i in range(rank))


@register(
    "Unsqueeze",
    "shape",
    host=lambda node, inputs: [np.reshape(inputs[0], _unsqueeze_shape(node, inputs, np.shape(inputs[0])))],
)
def _unsqueeze(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [x.reshape(_unsqueeze_shape(node, inputs, tuple(x.shape)))]


def _expand_shape(shape: tuple[int, ...], target: list[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(shape, tuple(target)))


@register(
    "Expand",
    "shape",
    host=lambda node, inputs: [
        np.broadcast_to(inputs[0], _expand_shape(np.shape(inputs[0]), ints(inputs[1]))).copy()
    ],
)
def _expand(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [x.expand(_expand_shape(tuple(x.shape), ints(inputs[1])))]


@register("Tile", "shape", host=lambda node, inputs: [np.tile(inputs[0], ints(inputs[1]))])
def _tile(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [x.repeat(ints(inputs[1]))]


# -- joining and splitting --------------------------------------------------------------------------
def _concat_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    arrays = [np.asarray(v) for v in inputs if v is not None]
    return [np.concatenate(arrays, axis=node.attr("axis"))]


@register("Concat", "shape", host=_concat_host)
def _concat(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.tensor.tensor import Tensor

    values = [v for v in inputs if v is not None]
    kind = next(v.kind for v in values if is_tensor(v))
    tensors = [ctx.tensor(v, kind) for v in values if math.prod(_shape(v)) or len(values) == 1]
    axis = norm_axis(node.attr("axis"), len(tensors[0].shape), node)
    return [Tensor.cat(tensors, axis) if len(tensors) > 1 else tensors[0]]


def _split_sizes(node: Node, inputs: Sequence[Any], size: int) -> list[int]:
    split = attr_or_input(node, inputs, 1, "split")
    if split:
        return split
    parts = node.attr("num_outputs") or len(node.outputs)
    chunk = -(-size // parts)
    return [min(chunk, size - i * chunk) for i in range(parts)]


@register("Split", "shape")
def _split(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    d = norm_axis(node.attr("axis", 0), len(x.shape), node)
    return list(x.split_with_sizes(_split_sizes(node, inputs, x.shape[d]), d))


# -- slicing and gathering --------------------------------------------------------------------------
def _slices(node: Node, inputs: Sequence[Any], shape: tuple[int, ...]) -> list[Any]:
    starts, ends = ints(inputs[1]), ints(inputs[2])
    axes = ints(inputs[3]) if _opt(inputs, 3) is not None else list(range(len(starts)))
    steps = ints(inputs[4]) if _opt(inputs, 4) is not None else [1] * len(starts)
    ranges: list[Any] = [slice(None)] * len(shape)
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        ranges[norm_axis(axis, len(shape), node)] = slice(start, end, step)
    return ranges


@register(
    "Slice",
    "index",
    host=lambda node, inputs: [np.asarray(inputs[0])[tuple(_slices(node, inputs, np.shape(inputs[0])))]],
)
def _slice(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [x.slice(_slices(node, inputs, tuple(x.shape)))]


def _gather_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    return [np.take(inputs[0], np.asarray(inputs[1]), axis=node.attr("axis", 0))]


@register("Gather", "index", host=_gather_host)
def _gather(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    data, indices = inputs[0], inputs[1]
    shape = _shape(data)
    d = norm_axis(node.attr("axis", 0), len(shape), node)
    n = shape[d]
    x = ctx.tensor(data)
    if not is_tensor(indices):
        idx = np.asarray(indices).astype(np.int64)
        idx = np.where(idx < 0, idx + n, idx)
        if idx.ndim == 0:
            return [x.narrow(d, int(idx), 1).squeeze(d)]
        return [x.take(d, ctx.tensor(idx, Int))]
    idx_t = indices.int()
    idx_t = idx_t.mask_where(idx_t.lower(0), idx_t + n)
    if len(idx_t.shape) == 0:
        return [x.take(d, idx_t.reshape((1,))).squeeze(d)]
    return [x.take(d, idx_t)]


@register("GatherElements", "index")
def _gather_elements(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    d = norm_axis(node.attr("axis", 0), len(x.shape), node)
    idx = ctx.tensor(inputs[1], Int)
    idx = idx.mask_where(idx.lower(0), idx + x.shape[d])
    return [x.gather(d, idx)]


@register("GatherND", "index")
def _gather_nd(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.tensor.tensor import Tensor

    data, index = ctx.tensor(inputs[0]), ctx.tensor(inputs[1], Int)
    b = int(node.attr("batch_dims", 0))
    if b == 0:
        return [data.gather_nd(index)]
    batch = tuple(data.shape[:b])
    if b >= min(len(data.shape), len(index.shape)) or tuple(index.shape[:b]) != batch:
        raise OnnxError(
            f"node {node.name!r} (GatherND): batch_dims={b} needs data and indices sharing their first {b} "
            f"dims, got {list(data.shape)} and {list(index.shape)}"
        )
    # The batch dims flattened into one, whose position becomes each index tuple's first coordinate.
    n = math.prod(batch)
    middle = tuple(index.shape[b:-1])
    flat_data = data.reshape((n, *data.shape[b:]))
    flat_index = index.reshape((n, *middle, index.shape[-1]))
    rows = np.broadcast_to(np.arange(n).reshape((n,) + (1,) * (len(middle) + 1)), (n, *middle, 1))
    coords = Tensor.cat([ctx.tensor(np.ascontiguousarray(rows), Int), flat_index], -1)
    out = flat_data.gather_nd(coords)
    return [out.reshape((*batch, *tuple(out.shape[1:])))]


_SCATTER_REDUCTIONS = {"none": "assign", "add": "add", "mul": "mul", "max": "max", "min": "min"}


def _scatter_mode(node: Node, allowed: Sequence[str]) -> str:
    reduction = node.attr("reduction", "none")
    mode = _SCATTER_REDUCTIONS.get(reduction)
    if mode is None or mode not in allowed:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): reduction {reduction!r} is not supported "
            f"(supported: {', '.join(r for r, m in _SCATTER_REDUCTIONS.items() if m in allowed)})"
        )
    return mode


@register("ScatterElements", "index")
def _scatter_elements(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    mode = _scatter_mode(node, tuple(_SCATTER_REDUCTIONS.values()))
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    d = norm_axis(node.attr("axis", 0), rank, node)
    idx = ctx.tensor(inputs[1], Int)
    idx = idx.mask_where(idx.lower(0), idx + x.shape[d])
    values = ctx.tensor(inputs[2], x.kind)
    if mode in ("assign", "add"):
        return [x.scatter(d, idx, values, mode=mode)]
    # mul, max, min: each element's full coordinates (its own position, `idx` along d) for
    # scatter_nd, which combines with those modes.
    coords = [idx if i == d else idx.ones_like().cumsum(i) - 1 for i in range(rank)]
    from burn.tensor.tensor import Tensor

    return [x.scatter_nd(Tensor.cat([c.unsqueeze_dim(rank) for c in coords], rank), values, mode=mode)]


@register("ScatterND", "index")
def _scatter_nd(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    mode = _scatter_mode(node, tuple(_SCATTER_REDUCTIONS.values()))
    x = ctx.tensor(inputs[0])
    idx = ctx.tensor(inputs[1], Int)
    k = idx.shape[-1] if idx.shape else 0
    if not 1 <= k <= len(x.shape):
        raise OnnxError(
            f"node {node.name!r} (ScatterND): indices {list(idx.shape)} do not fit data {list(x.shape)}"
        )
    # Negative indices count from the end of their dim.
    sizes = ctx.tensor(np.asarray(x.shape[:k], np.int64)).reshape((1,) * (len(idx.shape) - 1) + (k,))
    idx = idx.mask_where(idx.lower(0), idx + sizes.expand(tuple(idx.shape)))
    return [x.scatter_nd(idx, ctx.tensor(inputs[2], x.kind), mode=mode)]


@register("TensorScatter", "index")
def _tensor_scatter(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    # A KV-cache write: row b of `update` goes to positions write_indices[b] + 0..S-1 of the
    # cache's sequence axis (modulo its length when circular), the rest of the cache kept.
    past = ctx.tensor(inputs[0])
    update = ctx.tensor(inputs[1], past.kind)
    shape, rank = list(past.shape), len(past.shape)
    axis = norm_axis(int(node.attr("axis", -2)), rank, node)
    mode = node.attr("mode", "linear")
    fits = (
        len(update.shape) == rank and axis > 0 and update.shape[axis] <= shape[axis]
        and all(u == p for i, (u, p) in enumerate(zip(update.shape, shape, strict=True)) if i != axis)
    )
    if mode not in ("linear", "circular") or not fits:
        raise OnnxError(
            f"node {node.name!r} (TensorScatter): an update {list(update.shape)} into a cache {shape} along "
            f"axis {axis} (past the batch axis; the same sizes elsewhere, no longer along it) in mode "
            f"{mode!r} (linear or circular)"
        )
    length, steps = shape[axis], update.shape[axis]
    starts = ints(inputs[2]) if _opt(inputs, 2) is not None else [0] * shape[0]
    if len(starts) != shape[0]:
        raise OnnxError(
            f"node {node.name!r} (TensorScatter): {len(starts)} write indices for a batch of {shape[0]}"
        )
    positions = np.asarray(starts, np.int64)[:, None] + np.arange(steps, dtype=np.int64)[None, :]
    if mode == "circular":
        positions %= length
    elif positions.size and (positions.min() < 0 or positions.max() >= length):
        raise OnnxError(
            f"node {node.name!r} (TensorScatter): write indices {starts} and {steps} steps run past the "
            f"cache's {length} positions (mode 'linear')"
        )
    view = [shape[0]] + [1] * (rank - 1)
    view[axis] = steps
    index = np.broadcast_to(positions.reshape(view), tuple(update.shape)).copy()
    return [past.scatter(axis, ctx.tensor(index, Int), update, mode="assign")]


def _trilu_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    k = ints(inputs[1])[0] if _opt(inputs, 1) is not None else 0
    x = np.asarray(inputs[0])
    return [np.triu(x, k) if node.attr("upper", 1) else np.tril(x, k)]


@register("Trilu", "index", host=_trilu_host)
def _trilu(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    k = ints(inputs[1])[0] if _opt(inputs, 1) is not None else 0
    return [x.triu(k) if node.attr("upper", 1) else x.tril(k)]


@register("Pad", "shape", "modes constant, reflect, edge, wrap; negative pads are not supported")
def _pad(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    pads = ints(inputs[1]) if _opt(inputs, 1) is not None else [int(p) for p in node.attr("pads", [])]
    value = scalar(ctx.host(inputs[2])) if _opt(inputs, 2) is not None and np.size(ctx.host(inputs[2])) else 0
    axes = ints(inputs[3]) if _opt(inputs, 3) is not None else list(range(rank))
    axes = [norm_axis(a, rank, node) for a in axes]
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap") or any(p < 0 for p in pads):
        raise OnnxError(f"node {node.name!r} (Pad): mode {mode!r} with pads {pads} is not supported")
    before, after = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        before[a], after[a] = pads[i], pads[i + len(axes)]
    if mode == "wrap":  # periodic: position p reads p mod n (pads may exceed the dim)
        for d in range(rank):
            n = x.shape[d]
            if before[d] or after[d]:
                if n == 0:
                    raise OnnxError(f"node {node.name!r} (Pad): mode 'wrap' on an empty axis {d}")
                x = x.select(d, [int(i) % n for i in range(-before[d], n + after[d])])
        return [x]
    pairs: list[int] = []
    for d in range(rank - 1, -1, -1):
        pairs += [before[d], after[d]]
    return [x.pad(pairs, value if x.kind is not Bool else bool(value), mode)]


@register("OneHot", "index")
def _one_hot(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    indices = ctx.tensor(inputs[0], Int)
    depth = int(scalar(ctx.host(inputs[1])))
    off, on = (scalar(v) for v in ctx.host(inputs[2]).reshape(-1)[:2])
    kind = Float if np.issubdtype(ctx.host(inputs[2]).dtype, np.floating) else Int
    # ONNX: an index outside [-depth, depth) gives a row of `off` values (not an error).
    outside = indices.lower(-depth).bool_or(indices.greater_equal(depth))
    indices = indices.mask_fill(outside, 0)
    src = ctx.convert(indices, Float) if kind is Float else indices
    out = src.one_hot_fill(depth, on, off, node.attr("axis", -1))
    axis = node.attr("axis", -1)
    axis = axis + len(out.shape) if axis < 0 else axis
    return [out.mask_fill(outside.unsqueeze_dim(axis).expand(tuple(out.shape)), off)]
