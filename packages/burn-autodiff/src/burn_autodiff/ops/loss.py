"""The loss family of `Autodiff`: cross-entropy, followed by its backward rule.

The rule calls the inner backend's ``cross_entropy_backward`` helper (itself differentiable on
this backend, `burn_autodiff.ops.composed.backward_helpers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import make, unary
from burn_autodiff.ops._grad import Grads, Need, P
from burn_autodiff.ops.composed import backward_helpers

if TYPE_CHECKING:
    from burn.backend import Backend


class CrossEntropySaved(NamedTuple):
    """cross_entropy: the logits, the (int) targets and the reduction."""

    logits: P
    targets: P
    reduction: Any


@backward_helpers("loss")
class AutodiffLossOps:
    """The loss family of `Autodiff` (mixed into it; see `burn.backend.ops.loss`)."""

    _in: Backend

    def cross_entropy(self, logits: AD, targets: Any, reduction: Any) -> AD:
        out = self._in.cross_entropy(logits.p, targets, reduction)
        saved = make(CrossEntropySaved, (logits.p, targets, reduction))
        return unary(out, logits, self._cross_entropy_rule, saved)

    @staticmethod
    def _cross_entropy_rule(B: Any, s: CrossEntropySaved, need: Need, g: P) -> Grads:
        # dx = (softmax(x) - onehot(t)) * g per row
        return (B.cross_entropy_backward(s.logits, s.targets, g, s.reduction),)
