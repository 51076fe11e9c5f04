"""Functional losses (the loss family): `cross_entropy` against class indices, one backend op each
way (`burn.backend.ops.loss.LossOps.cross_entropy`), where the composition of log-softmax, gather
and mean takes seven forward and eight backward ops; and `cross_entropy_with_logits` against
target probabilities, composed of other ops.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> logits = Tensor.zeros((2, 4))  # doctest: +SKIP
    >>> targets = Tensor.from_data([1, 3])  # doctest: +SKIP
    >>> round(F.cross_entropy(logits, targets).item(), 6)  # log(4)  # doctest: +SKIP
    1.386294
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.backend.ops.loss import LossReduction, check_reduction
from burn.errors import ShapeError
from burn.foundations.kind import Float, Int
from burn.tensor import autocast as _amp
from burn.tensor._base import wrap
from burn.tensor._errors import expect_same
from burn.tensor.activation import log_softmax
from burn.tensor.module._args import float_input, float_operand

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["cross_entropy", "cross_entropy_with_logits"]


def cross_entropy(logits: Tensor, targets: Tensor, reduction: LossReduction = "mean") -> Tensor:
    """Cross-entropy of ``logits [N, C]`` against the Int class indices ``targets [N]`` (each in
    ``[0, C)``): ``logsumexp(logits[i]) - logits[i, targets[i]]`` per row, computed stably.

    Args:
        logits: Float scores, one row per sample and one column per class (``C >= 1``).
        targets: Int class of each row, on the same backend.
        reduction: ``"mean"`` (shape ``(1,)``, NaN for no rows), ``"sum"`` (``(1,)``) or
            ``"none"`` (the ``[N]`` losses).

    Returns:
        A Float tensor of `logits`' dtype; its gradient with respect to `logits` is
        ``(softmax(logits) - onehot(targets)) * g``, one backend op (PyTorch's ``cross_entropy``
        with class-index targets; for probability targets see `cross_entropy_with_logits`).

    Example:
        >>> logits = Tensor.from_data([[2.0, 0.0], [0.0, 2.0]])  # doctest: +SKIP
        >>> losses = cross_entropy(logits, Tensor.from_data([0, 1]), "none")  # doctest: +SKIP
        >>> [round(v, 6) for v in losses.tolist()]  # log(1 + e^-2) each  # doctest: +SKIP
        [0.126928, 0.126928]
    """
    op = "cross_entropy"
    float_operand(op, logits, "logits")
    shape = logits.shape
    if len(shape) != 2 or shape[1] < 1:
        raise ShapeError(f"{op}: logits must have shape [batch_size, num_classes >= 1], got {shape}")
    expect_same(op, logits, targets, Int, "targets")
    if targets.shape != (shape[0],):
        raise ShapeError(
            f"{op}: targets must have shape ({shape[0]},) for logits {shape}, got {targets.shape}"
        )
    check_reduction(op, reduction)
    if _amp.active:
        logits = _amp.full_precision(op, logits)
    return wrap(logits._b.cross_entropy(logits._p, targets._p, reduction), logits._b, Float)


def cross_entropy_with_logits(logits: Tensor, target_probs: Tensor) -> Tensor:
    """Cross-entropy of `logits` against target probabilities of the same shape, over the last
    dim, averaged over the other positions -> shape ``(1,)`` (Burn's ``cross_entropy_with_logits``;
    PyTorch's ``cross_entropy`` with probability targets, classes moved to the last dim).

    Example:
        >>> logits, targets = Tensor.zeros((2, 4)), Tensor.full((2, 4), 0.25)  # doctest: +SKIP
        >>> cross_entropy_with_logits(logits, targets).item()  # log(4)  # doctest: +SKIP
        1.3862943611198906
    """
    op = "cross_entropy_with_logits"
    shape = float_input(op, logits, tuple(range(1, 33)), "a tensor of rank >= 1")
    expect_same(op, logits, target_probs, Float, "target_probs")
    if target_probs.shape != shape:
        raise ShapeError(
            f"{op}: logits {shape} and target_probs {target_probs.shape} must have the same shape"
        )
    if _amp.active:
        logits, target_probs = _amp.full_precision(op, logits), _amp.full_precision(op, target_probs)
    per = (log_softmax(logits, -1) * target_probs).sum_dim(-1)
    return -per.mean()
