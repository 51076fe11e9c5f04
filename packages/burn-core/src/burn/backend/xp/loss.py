"""Cross-entropy against class indices, written once on an array namespace (NumPy, CuPy).

The forward pass is the log-softmax's own arithmetic, so its losses are the bits of
``-gather(log_softmax(x), t)`` on the same namespace: ``lse - shifted[t]`` is the negation of
``shifted[t] - lse``, and the mean of negated values the negated mean. float16 and bfloat16
compute in float32 and round the result once.

The row functions take ``targets`` as ``[N]`` or ``[N, 1]`` (a backend may split rows between
threads and slice both operands the same way).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from burn.backend.ops.loss import LossReduction, check_reduction
from burn.backend.xp.activation import work
from burn.backend.xp.dtypes import work as work_dtype

Array = Any


def row_losses(xp: ModuleType, logits: Array, targets: Array) -> Array:
    """``logsumexp(logits[i]) - logits[i, targets[i]]`` for each row ``[N]``, in the computing
    type (float32 for float16/bfloat16)."""
    w = work(xp, logits)
    shifted = w - w.max(axis=1, keepdims=True)
    lse = xp.log(xp.exp(shifted).sum(axis=1))
    rows = xp.arange(w.shape[0])
    return lse - shifted[rows, targets.reshape(-1)]


def row_gradients(xp: ModuleType, logits: Array, targets: Array, scale: Array) -> Array:
    """``(softmax(logits[i]) - onehot(targets[i])) * scale_i`` for each row, `scale` ``[N, 1]``
    or ``[1, 1]`` in the computing type; returned in `logits`' dtype."""
    w = work(xp, logits)
    probs = w - w.max(axis=1, keepdims=True)  # a temporary of this function: updated in place
    xp.exp(probs, out=probs)
    probs /= probs.sum(axis=1, keepdims=True)
    probs[xp.arange(w.shape[0]), targets.reshape(-1)] -= 1
    probs *= scale
    return probs.astype(logits.dtype, copy=False)


def reduce_losses(xp: ModuleType, losses: Array, reduction: LossReduction, dtype: Any) -> Array:
    """The ``[N]`` losses as `reduction` asks, in `dtype`."""
    if reduction == "none":
        return losses.astype(dtype, copy=False)
    if reduction == "sum":
        total = losses.sum()
    elif losses.size == 0:  # NaN, without the namespace's "mean of empty slice" warning
        return xp.full((1,), np.nan, dtype)
    else:
        total = losses.mean()
    return xp.asarray(total).reshape(1).astype(dtype, copy=False)


def gradient_scale(
    xp: ModuleType, output_grad: Array, reduction: LossReduction, rows: int, dtype: Any
) -> Array:
    """Each row's factor of the backward pass: ``[N, 1]`` for ``"none"``, else ``[1, 1]`` (the
    mean's gradient divided by `rows`), in the computing type `dtype`."""
    g = output_grad.astype(dtype, copy=False)
    if reduction == "none":
        return g.reshape(rows, 1)
    g = g.reshape(1, 1)
    return g / dtype.type(rows) if reduction == "mean" and rows else g


class XpLossOps:
    """`burn.backend.ops.loss.LossOps` on the namespace ``self.xp``."""

    xp: ClassVar[ModuleType]

    def cross_entropy(self, logits: Array, targets: Array, reduction: LossReduction) -> Array:
        check_reduction("cross_entropy", reduction)
        return reduce_losses(self.xp, row_losses(self.xp, logits, targets), reduction, logits.dtype)

    def cross_entropy_backward(
        self, logits: Array, targets: Array, output_grad: Array, reduction: LossReduction
    ) -> Array:
        check_reduction("cross_entropy_backward", reduction)
        xp = self.xp
        scale = gradient_scale(xp, output_grad, reduction, logits.shape[0], work_dtype(logits.dtype))
        return row_gradients(xp, logits, targets, scale)
