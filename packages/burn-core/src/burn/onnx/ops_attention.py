"""The ``Attention`` op (opset 23+): scaled dot-product attention with masks, causal and
sliding-window biases, a KV cache and grouped-query heads, as the ONNX reference computes it.

The biases that depend on positions only (causal, window, the padding of ``nonpad_kv_seqlen``)
are built on the host; the products, softmax and masks run on burn tensor ops (any backend,
autodiff)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from burn import activation as act
from burn.foundations.kind import Bool
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register
from burn.onnx.runtime import align

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Ctx, Value
    from burn.tensor.tensor import Tensor


def _opt(inputs: Sequence[Value], i: int) -> Value:
    return inputs[i] if len(inputs) > i else None


def _heads(x: Tensor, heads: int) -> Tensor:
    """``[B, S, H * D]`` -> ``[B, H, S, D]``."""
    b, s, hidden = x.shape
    return x.reshape((b, s, heads, hidden // heads)).swap_dims(1, 2)


def _position_bias(
    q_len: int, kv_len: int, offset: np.ndarray | int, left: int, right: int, causal: bool
) -> np.ndarray:
    """0 where a query may attend a key, -inf elsewhere: the causal frontier ``j <= i + offset``
    and the window ``i + offset - left <= j <= i + offset + right``; a per-batch offset makes
    the result ``[B, 1, q, kv]``."""
    i = np.arange(q_len).reshape(q_len, 1)
    j = np.arange(kv_len).reshape(1, kv_len)
    per_batch = np.ndim(offset) > 0
    pos = i + (np.reshape(offset, (-1, 1, 1)) if per_batch else int(offset))  # type: ignore[arg-type]
    allowed = np.ones(np.broadcast_shapes(pos.shape, j.shape), dtype=np.bool_)
    if causal:
        allowed &= j <= pos
    if left >= 0:
        allowed &= pos - j <= left
    if right >= 0:
        allowed &= j - pos <= right
    bias = np.where(allowed, 0.0, -np.inf)
    return bias.reshape(bias.shape[0], 1, q_len, kv_len) if per_batch else bias


@register("Attention", "nn", "softmax_precision is ignored (the model's float dtype)")
def _attention(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    q, k, v = (ctx.tensor(x) for x in inputs[:3])
    mask, past_k, past_v, nonpad = (_opt(inputs, i) for i in range(3, 7))
    rank = len(q.shape)
    if rank not in (3, 4) or len(k.shape) != rank or len(v.shape) != rank:
        raise OnnxError(f"node {node.name!r} (Attention): Q, K and V must all be 3-D or all 4-D")
    if (past_k is None) != (past_v is None) or (nonpad is not None and past_k is not None):
        raise OnnxError(
            f"node {node.name!r} (Attention): past_key and past_value go together, "
            "and not with nonpad_kv_seqlen"
        )
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    if rank == 3:
        if q_heads is None or kv_heads is None:
            raise OnnxError(f"node {node.name!r} (Attention): 3-D inputs need q_num_heads and kv_num_heads")
        q, k, v = _heads(q, q_heads), _heads(k, kv_heads), _heads(v, kv_heads)
    scale = node.attr("scale")
    root = math.sqrt(1 / math.sqrt(q.shape[3]) if scale is None else scale)
    from burn.tensor.tensor import Tensor

    if past_k is not None:
        k = Tensor.cat([ctx.tensor(past_k), k], 2)
        v = Tensor.cat([ctx.tensor(past_v), v], 2)
    present_k, present_v = k, v
    batch, q_len, kv_len = q.shape[0], q.shape[2], k.shape[2]

    # The additive bias: the mask (padded with "masked" up to kv_len) plus the position biases.
    bias = ctx.tensor(np.zeros((q_len, kv_len), np.float32))
    if mask is not None:
        m = ctx.tensor(mask)
        if m.kind is Bool:
            m = ctx.tensor(np.zeros((), np.float32)).reshape((1,) * len(m.shape)).expand(tuple(m.shape))
            m = m.mask_fill(ctx.tensor(mask, Bool).bool_not(), -math.inf)
        pad = kv_len - m.shape[-1]
        if pad > 0:
            m = m.pad([0, pad], -math.inf)
        bias, m = align(bias, m)
        bias = bias + m
    left, right = int(node.attr("left_window_size", -1)), int(node.attr("right_window_size", -1))
    causal = bool(node.attr("is_causal", 0))
    lengths = None if nonpad is None else ctx.host(nonpad).reshape(-1).astype(np.int64)
    if causal or left >= 0 or right >= 0:
        # Where the causal frontier starts: after the cached keys, or (a static cache) so that
        # each batch's last query sees its last real key.
        offset: np.ndarray | int = 0
        if past_k is not None:
            offset = ctx.tensor(past_k).shape[2]
        elif lengths is not None:
            offset = lengths - q_len
        bias, pos = align(bias, ctx.tensor(_position_bias(q_len, kv_len, offset, left, right, causal)))
        bias = bias + pos
    if lengths is not None:
        padding = np.where(np.arange(kv_len) < lengths[:, None], 0.0, -np.inf).reshape(batch, 1, 1, kv_len)
        bias, pad_bias = align(bias, ctx.tensor(padding))
        bias = bias + pad_bias

    # Grouped-query attention: each KV head serves q_heads / kv_heads query heads, in order.
    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:
        if hq % hk or v.shape[1] != hk:
            raise OnnxError(
                f"node {node.name!r} (Attention): {hq} query heads do not group over {hk} KV heads"
            )
        reps = hq // hk

        def repeat(t: Tensor) -> Tensor:
            b, h, s, d = t.shape
            return t.unsqueeze_dim(2).expand((b, h, reps, s, d)).reshape((b, h * reps, s, d))

        k, v = repeat(k), repeat(v)

    qk = (q * root).matmul((k * root).swap_dims(2, 3))
    softcap = float(node.attr("softcap", 0.0))
    if softcap > 0:
        qk = (qk / softcap).tanh() * softcap
    qk_out = qk
    qk, b4 = align(qk, bias)
    with_bias = qk + b4
    mode = int(node.attr("qk_matmul_output_mode", 0))
    if mode == 2:
        qk_out = with_bias
    # A row with every key masked attends nothing: its weights are 0 (not softmax's NaN).
    row_masked = bias.max_dim(len(bias.shape) - 1).equal(-math.inf)
    weights = act.softmax(with_bias, -1)
    row_masked = align(weights, row_masked)[1].expand(tuple(weights.shape))
    weights = weights.mask_fill(row_masked, 0.0)
    if mode == 3:
        qk_out = weights
    elif mode not in (0, 1, 2):
        raise OnnxError(f"node {node.name!r} (Attention): qk_matmul_output_mode {mode} is not one of 0..3")
    y = weights.matmul(v)
    if rank == 3:
        y = y.swap_dims(1, 2)
        y = y.reshape((y.shape[0], y.shape[1], -1))
    return [y, present_k, present_v, qk_out][: max(1, len(node.outputs))]


@register("RotaryEmbedding", "nn")
def _rotary_embedding(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.foundations.kind import Int
    from burn.tensor.tensor import Tensor

    x = ctx.tensor(inputs[0])
    shape = tuple(x.shape)
    heads = int(node.attr("num_heads", 0) or 0)
    if len(shape) == 4:  # [batch, heads, seq, head_size] -> [batch, seq, heads, head_size]
        x = x.permute((0, 2, 1, 3))
    elif len(shape) == 3 and heads > 0 and shape[2] % heads == 0:
        x = x.reshape((shape[0], shape[1], heads, shape[2] // heads))
    else:
        raise OnnxError(
            f"node {node.name!r} (RotaryEmbedding): needs a 4-D input, or a 3-D one with num_heads dividing "
            f"its last dim; got shape {list(shape)}, num_heads {heads}"
        )
    b, s, h, d = x.shape
    dim = int(node.attr("rotary_embedding_dim", 0) or 0) or d
    half = dim // 2
    cos, sin = ctx.tensor(inputs[1]), ctx.tensor(inputs[2])
    positions = inputs[3] if len(inputs) > 3 and inputs[3] is not None else None
    if positions is not None:  # rows of the caches, per (batch, position)
        index = ctx.tensor(positions, Int).reshape((-1,))
        cos, sin = (c.select(0, index).reshape((b, s, c.shape[-1])) for c in (cos, sin))
    if dim % 2 or dim > d or cos.shape[-1] != half or sin.shape[-1] != half:
        raise OnnxError(
            f"node {node.name!r} (RotaryEmbedding): caches of last dim {cos.shape[-1]} and {sin.shape[-1]} "
            f"for a rotary dim of {dim} (half: {half}) in heads of {d}"
        )
    cos, sin = cos.reshape((b, s, 1, half)), sin.reshape((b, s, 1, half))
    rot = x.narrow(3, 0, dim)
    interleaved = bool(node.attr("interleaved", 0))
    if interleaved:  # pairs (0, 1), (2, 3)...
        pairs = rot.reshape((b, s, h, half, 2))
        x1, x2 = pairs.narrow(4, 0, 1).squeeze(4), pairs.narrow(4, 1, 1).squeeze(4)
    else:  # halves
        x1, x2 = rot.narrow(3, 0, half), rot.narrow(3, half, half)
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if interleaved:
        rot = Tensor.stack([real, imag], 4).reshape((b, s, h, dim))
    else:
        rot = Tensor.cat([real, imag], 3)
    out = rot if dim == d else Tensor.cat([rot, x.narrow(3, dim, d - dim)], 3)
    return [out.permute((0, 2, 1, 3)) if len(shape) == 4 else out.reshape(shape)]
