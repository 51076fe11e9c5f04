"""The attention family of the backend contract: scaled dot-product attention as one op, and its
backward helper.

``attention(q, k, v) = softmax(q k^T * scale + mask) v`` over the last two dims; the leading dims
(batch, heads) are equal in all three. As one op a backend can run it without keeping the score
matrix: burn-ndarray works through blocks of query rows, so it holds ``block x L_k`` scores instead
of ``L_q x L_k``, and the autodiff rule keeps only q, k and v, recomputing the weights in backward
(as flash attention does) instead of saving an ``L_q x L_k`` softmax per head.

Layouts: ``query [..., L_q, E]``, ``key [..., L_k, E]``, ``value [..., L_k, E_v]`` -> ``[..., L_q, E_v]``.
`mask` is a bool primitive that broadcasts to ``[..., L_q, L_k]`` where **true means "do not
attend"** (Burn's convention, as `burn.nn.MultiHeadAttention`'s masks); `causal` also masks every
key after the query's position (``j > i``). A query whose keys are all masked attends to nothing:
its output row is 0 (and so are its gradients), where a softmax over ``-inf`` alone gives NaN.

Preconditions (checked by `burn.tensor.module.attention`): float q, k, v of one rank >= 2 with
equal leading dims, q and k of one width, k and v of one length; `scale` finite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.contract import default, family
from burn.foundations.data import TensorData

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any


def causal_mask(b: Backend, rows: int, cols: int, device: Any) -> P:
    """``[rows, cols]`` bool primitive, true above the diagonal (key after the query)."""
    return b.bool_from_data(TensorData(np.triu(np.ones((rows, cols), bool), 1), "bool"), device)


def attention_weights(b: Backend, query: P, key: P, mask: P | None, scale: float, causal: bool) -> P:
    """The attention weights ``softmax(q k^T * scale)`` over unmasked keys, ``[..., L_q, L_k]``
    (rows with no unmasked key are 0): written once, for the default op and its backward."""
    rank = len(b.float_shape(query))
    rows, cols = b.float_shape(query)[-2], b.float_shape(key)[-2]
    scores = b.float_mul_scalar(b.float_matmul(query, b.float_swap_dims(key, rank - 2, rank - 1)), scale)
    if causal:
        upper = causal_mask(b, rows, cols, b.float_device(query))
        mask = upper if mask is None else b.bool_or(mask, upper)
    if mask is not None:
        scores = b.float_mask_fill(scores, mask, float("-inf"))
    top = b.float_max_dim(scores, rank - 1)
    # every key masked: the row's max is -inf; shift by 0 instead so that exp gives 0, not NaN
    top = b.float_mask_fill(top, b.float_is_inf(top), 0.0)
    e = b.float_exp(b.float_sub(scores, top))
    total = b.float_sum_dim(e, rank - 1)
    return b.float_div(e, b.float_mask_fill(total, b.float_equal_elem(total, 0.0), 1.0))


@family("attention")
class AttentionOps:
    """Scaled dot-product attention; both ops have defaults (see the module docstring)."""

    @default
    def attention(self, query: P, key: P, value: P, mask: P | None, scale: float, causal: bool) -> P:
        """``softmax(query key^T * scale, masked) value``: ``[..., L_q, E_v]``."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_matmul(attention_weights(b, query, key, mask, scale, causal), value)

    @default(backward_of="attention")
    def attention_backward(
        self, query: P, key: P, value: P, mask: P | None, output_grad: P, scale: float, causal: bool
    ) -> tuple[P, P, P]:
        """Gradients of `attention` with respect to query, key and value, from the output's.

        With ``W`` the weights and ``dO`` the output gradient: ``dV = W^T dO``,
        ``dW = dO V^T``, ``dS = W * (dW - rowsum(dW * W))`` (the softmax's backward),
        ``dQ = dS K * scale`` and ``dK = dS^T Q * scale``. The weights are recomputed, not saved.
        """
        b: Backend = self  # type: ignore[assignment]
        rank = len(b.float_shape(query))
        last, prev = rank - 1, rank - 2
        w = attention_weights(b, query, key, mask, scale, causal)
        grad_value = b.float_matmul(b.float_swap_dims(w, prev, last), output_grad)
        grad_w = b.float_matmul(output_grad, b.float_swap_dims(value, prev, last))
        inner = b.float_sum_dim(b.float_mul(grad_w, w), last)
        grad_s = b.float_mul_scalar(b.float_mul(w, b.float_sub(grad_w, inner)), scale)
        grad_query = b.float_matmul(grad_s, key)
        grad_key = b.float_matmul(b.float_swap_dims(grad_s, prev, last), query)
        return grad_query, grad_key, grad_value
