"""Functional scaled dot-product attention (the attention family): ``softmax(q k^T * scale) v`` as
one backend op (`burn.backend.ops.attention.AttentionOps.attention`), so a backend need not keep
the ``L_q x L_k`` scores and autodiff keeps only q, k and v for backward.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> q = k = v = Tensor.ones((2, 4, 5, 8))  # batch, heads, length, width  # doctest: +SKIP
    >>> F.attention(q, k, v, causal=True).shape  # doctest: +SKIP
    (2, 4, 5, 8)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from burn.errors import DTypeError, ShapeError
from burn.foundations.kind import Bool, Float
from burn.tensor import autocast as _amp
from burn.tensor._base import wrap
from burn.tensor._errors import broadcasts_to, expect_same
from burn.tensor.module._args import float_operand

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["attention"]


def attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    scale: float | None = None,
    causal: bool = False,
) -> Tensor:
    """Scaled dot-product attention over the last two dims.

    Args:
        query: Float ``[..., L_q, E]`` (e.g. ``[batch, heads, L_q, E]``).
        key: Float ``[..., L_k, E]``, of the query's backend, dtype and leading dims.
        value: Float ``[..., L_k, E_v]``.
        mask: optional Bool tensor that broadcasts to ``[..., L_q, L_k]``; **True means "do not
            attend"** (Burn's convention, as `burn.nn.MultiHeadAttention`'s masks).
        scale: the factor of the scores; ``1 / sqrt(E)`` by default.
        causal: also mask every key after the query's position (``j > i``).

    Returns:
        ``[..., L_q, E_v]``: ``softmax(query key^T * scale)`` over the unmasked keys, times
        `value`. A query with every key masked gives a row of zeros (not NaN). Differentiable in
        query, key and value; the weights are recomputed in backward, not kept.

    Raises:
        KindError: an input of the wrong kind (the mask must be Bool).
        ShapeError: ranks, leading dims, widths or lengths that do not match, or a mask that
            does not broadcast to the scores.

    Example:
        >>> q = Tensor.from_data([[[1.0, 0.0], [0.0, 1.0]]])  # doctest: +SKIP
        >>> attention(q, q, q, causal=True).tolist()[0][0]  # sees itself only  # doctest: +SKIP
        [1.0, 0.0]
    """
    op = "attention"
    float_operand(op, query, "query")
    if _amp.active:  # before the checks: they ask for one dtype, which the casts give
        query, key, value = _amp.low_precision(op, query, key, value)
    for name, t in (("key", key), ("value", value)):
        expect_same(op, query, t, Float, name)
        if t.dtype is not query.dtype:
            raise DTypeError(
                f"{op}: {name} ({t.dtype.value}) must have the dtype of query ({query.dtype.value})"
            )
    qs, ks, vs = query.shape, key.shape, value.shape
    if len(qs) < 2 or len(ks) != len(qs) or len(vs) != len(qs):
        raise ShapeError(
            f"{op}: query, key and value must have one rank >= 2 ([..., L, E]), got {qs}, {ks} and {vs}"
        )
    if ks[:-2] != qs[:-2] or vs[:-2] != qs[:-2]:
        raise ShapeError(f"{op}: query {qs}, key {ks} and value {vs} must have the same leading dims")
    if ks[-1] != qs[-1]:
        raise ShapeError(f"{op}: query {qs} and key {ks} must have the same width (last dim)")
    if vs[-2] != ks[-2]:
        raise ShapeError(f"{op}: key {ks} and value {vs} must have the same length (dim -2)")
    scores = (*qs[:-1], ks[-2])
    if mask is not None:
        expect_same(op, query, mask, Bool, "mask")
        if not broadcasts_to(mask.shape, scores):
            raise ShapeError(f"{op}: mask {mask.shape} does not broadcast to the scores {scores}")
    factor = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    if not math.isfinite(factor):
        raise ValueError(f"{op}: scale must be finite, got {scale!r}")
    b = query._b
    out = b.attention(query._p, key._p, value._p, None if mask is None else mask._p, factor, bool(causal))
    return wrap(out, b, Float)
