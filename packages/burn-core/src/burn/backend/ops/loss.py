"""Loss ops of the backend contract: cross-entropy against class indices and its backward helper.

Both have defaults composed of other ops (log-softmax, gather, softmax, scatter), so every
backend runs them; a backend overrides them to do the work in one or two passes. The fused op
also saves memory under autodiff: the backward pass keeps the logits alone (which the graph
holds anyway), not a ``[N, C]`` log-softmax, and makes no ``[N, C]`` one-hot of zeros.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from burn.backend.contract import default, family

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
LossReduction = Literal["none", "sum", "mean"]
REDUCTIONS: tuple[LossReduction, ...] = ("none", "sum", "mean")


def check_reduction(op: str, reduction: str) -> None:
    """A ValueError naming `op` unless `reduction` is ``"none"``, ``"sum"`` or ``"mean"``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


@family("loss")
class LossOps:
    """Loss ops; every one has a default."""

    @default
    def cross_entropy(self, logits: P, targets: P, reduction: LossReduction) -> P:
        """Cross-entropy of float `logits` ``[N, C]`` against int class indices `targets` ``[N]``
        (each in ``[0, C)``): ``logsumexp(logits[i]) - logits[i, targets[i]]`` for each row.

        `reduction` ``"none"`` gives the ``[N]`` losses; ``"sum"`` and ``"mean"`` their sum or
        mean, shape ``(1,)`` (the mean of no rows is NaN).
        """
        b: Backend = self  # type: ignore[assignment]
        check_reduction("cross_entropy", reduction)
        n = b.float_shape(logits)[0]
        log_p = b.log_softmax(logits, 1)
        picked = b.float_gather(1, log_p, b.int_reshape(targets, (n, 1)))
        losses = b.float_neg(b.float_reshape(picked, (n,)))
        if reduction == "none":
            return losses
        return b.float_sum(losses) if reduction == "sum" else b.float_mean(losses)

    @default(backward_of="cross_entropy")
    def cross_entropy_backward(self, logits: P, targets: P, output_grad: P, reduction: LossReduction) -> P:
        """Gradient of `cross_entropy` with respect to `logits`, given the gradient of its
        result (``[N]`` for ``"none"``, ``(1,)`` otherwise): row ``i`` is
        ``(softmax(logits[i]) - onehot(targets[i])) * g_i``, with ``g_i`` the row's own gradient,
        the one gradient of the sum, or that divided by ``N`` for the mean."""
        b: Backend = self  # type: ignore[assignment]
        check_reduction("cross_entropy_backward", reduction)
        n, c = b.float_shape(logits)
        device, dtype = b.float_device(logits), b.float_get_dtype(logits)
        if n == 0:
            return b.float_zeros((0, c), device, dtype)
        index = b.int_reshape(targets, (n, 1))
        onehot = b.float_scatter_add(
            1, b.float_zeros((n, c), device, dtype), index, b.float_ones((n, 1), device, dtype)
        )
        if reduction == "none":
            scale = b.float_reshape(output_grad, (n, 1))
        else:
            scale = b.float_reshape(output_grad, (1, 1))
            if reduction == "mean":
                scale = b.float_div_scalar(scale, float(n))
        return b.float_mul(b.float_sub(b.softmax(logits, 1), onehot), scale)
