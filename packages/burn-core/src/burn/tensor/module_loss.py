"""Functional cross-entropy against class indices (re-exported by `burn.tensor.module`): one
backend op each way (`burn.backend.loss_ops.LossOps.cross_entropy`), where the composition of
log-softmax, gather and mean takes seven forward and eight backward ops.

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
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import expect_same, kind_error

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["cross_entropy"]


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
    if not isinstance(logits, TensorBase):
        raise TypeError(f"{op}: logits must be a burn.Tensor, got {type(logits).__name__}")
    if logits._k is not Float:
        raise kind_error(op, logits, "Float logits", "convert with .float() first")
    shape = logits.shape
    if len(shape) != 2 or shape[1] < 1:
        raise ShapeError(f"{op}: logits must have shape [batch_size, num_classes >= 1], got {shape}")
    expect_same(op, logits, targets, Int, "targets")
    if targets.shape != (shape[0],):
        raise ShapeError(
            f"{op}: targets must have shape ({shape[0]},) for logits {shape}, got {targets.shape}"
        )
    check_reduction(op, reduction)
    return wrap(logits._b.cross_entropy(logits._p, targets._p, reduction), logits._b, Float)
