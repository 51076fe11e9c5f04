"""Ops that move elements without computing on them: block rearrangements (``DepthToSpace``,
``SpaceToDepth``), selections (``Compress``, ``NonZero``), ``ReverseSequence`` and
``CenterCropPad``, and ``Unique`` (computed on the host). The others compose the contract's
reshape / permute / select / gather / narrow / pad (sizes and indices that depend on values are
read on the host)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.foundations.kind import Int
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register, register_host
from burn.onnx.runtime import Ctx, ints, norm_axis

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Value
    from burn.tensor.tensor import Tensor


def _blocks(node: Node, x: Tensor) -> tuple[int, str]:
    size = int(node.attr("blocksize", 0))
    mode = node.attr("mode", "DCR")
    if len(x.shape) != 4 or size < 1 or mode not in ("DCR", "CRD"):
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): needs a 4-D input, blocksize >= 1 and mode DCR or CRD, "
            f"got shape {list(x.shape)}, blocksize {size}, mode {mode!r}"
        )
    return size, mode


@register("DepthToSpace", "shape")
def _depth_to_space(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    s, mode = _blocks(node, x)
    n, c, h, w = x.shape
    if c % (s * s):
        raise OnnxError(f"node {node.name!r} (DepthToSpace): {c} channels are not a multiple of {s}x{s}")
    if mode == "DCR":  # channels ordered (depth-row, depth-col, channel)
        y = x.reshape((n, s, s, c // (s * s), h, w)).permute((0, 3, 4, 1, 5, 2))
    else:  # CRD: (channel, row, col)
        y = x.reshape((n, c // (s * s), s, s, h, w)).permute((0, 1, 4, 2, 5, 3))
    return [y.reshape((n, c // (s * s), h * s, w * s))]


@register("SpaceToDepth", "shape")
def _space_to_depth(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    s, mode = _blocks(node, x)
    n, c, h, w = x.shape
    if h % s or w % s:
        raise OnnxError(f"node {node.name!r} (SpaceToDepth): spatial size {h}x{w} is not a multiple of {s}")
    y = x.reshape((n, c, h // s, s, w // s, s))
    y = y.permute((0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4))
    return [y.reshape((n, c * s * s, h // s, w // s))]


@register("Compress", "index")
def _compress(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    keep = np.flatnonzero(Ctx.host(inputs[1]).reshape(-1))  # the selected positions: host sizes
    axis = node.attr("axis")
    if axis is None:
        x, d = x.reshape((-1,)), 0
    else:
        d = norm_axis(int(axis), len(x.shape), node)
    if keep.size and keep[-1] >= x.shape[d]:
        raise OnnxError(
            f"node {node.name!r} (Compress): the condition selects position {int(keep[-1])} of an axis "
            f"of size {x.shape[d]}"
        )
    return [x.select(d, [int(i) for i in keep])]


@register("NonZero", "index")
def _non_zero(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    if len(x.shape) == 0:  # a scalar: one position (of no coordinates) when nonzero
        n = int(bool(Ctx.host(x).reshape(-1)[0]))
        return [ctx.tensor(np.zeros((0, n), np.int64))]
    return [x.argwhere().permute((1, 0))]


@register("ReverseSequence", "shape")
def _reverse_sequence(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    t_axis = norm_axis(node.attr("time_axis", 0), rank, node, "time_axis")
    b_axis = norm_axis(node.attr("batch_axis", 1), rank, node, "batch_axis")
    if rank < 2 or {t_axis, b_axis} != {0, 1}:
        raise OnnxError(
            f"node {node.name!r} (ReverseSequence): time_axis and batch_axis must be 0 and 1, got "
            f"{t_axis} and {b_axis}"
        )
    lens = ints(inputs[1])
    steps, batch = x.shape[t_axis], x.shape[b_axis]
    if len(lens) != batch or any(not 0 <= n <= steps for n in lens):
        raise OnnxError(
            f"node {node.name!r} (ReverseSequence): sequence_lens {lens} do not fit batch {batch} of "
            f"{steps} steps"
        )
    # The source step of each (step, sequence): the first lens[b] steps reversed, the rest kept.
    t = np.arange(steps)[:, None]
    n = np.asarray(lens, np.int64)[None, :]
    source = np.where(t < n, n - 1 - t, t)
    if t_axis == 1:
        source = source.T
    index = source.reshape(source.shape + (1,) * (rank - 2))
    idx = ctx.tensor(np.ascontiguousarray(np.broadcast_to(index, tuple(x.shape))), Int)
    return [x.gather(t_axis, idx)]


@register("CenterCropPad", "shape")
def _center_crop_pad(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    target = ints(inputs[1])
    axes = [norm_axis(a, rank, node) for a in node.attr("axes", list(range(rank)))]
    if len(axes) != len(target) or any(n < 0 for n in target):
        raise OnnxError(
            f"node {node.name!r} (CenterCropPad): shape {target} does not match axes {axes}"
        )
    for d, want in zip(axes, target, strict=True):
        size = x.shape[d]
        if want < size:  # crop: the extra element (odd difference) comes off the end
            x = x.narrow(d, (size - want) // 2, want)
        elif want > size:  # pad with zeros: the extra element goes at the end
            before = (want - size) // 2
            pads = [0, 0] * (rank - 1 - d) + [before, want - size - before]
            x = x.pad(pads, 0)
    return [x]


@register_host("Unique", "index", "runs on the host (its output sizes depend on the values)")
def _unique(node: Node, inputs: Sequence[Any]) -> list[Any]:
    x = np.asarray(inputs[0])
    axis = node.attr("axis")
    if axis is not None:
        axis = norm_axis(int(axis), x.ndim, node)
    elif x.ndim != 1:
        x = x.reshape(-1)
    values, first, inverse, counts = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True, axis=axis
    )
    inverse = inverse.reshape(-1)
    if not node.attr("sorted", 1):  # in order of first occurrence
        order = np.argsort(first, kind="stable")
        values = np.take(values, order, axis=axis if axis is not None else 0)
        first, counts = first[order], counts[order]
        inverse = np.argsort(order)[inverse]
    return [values, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)]
