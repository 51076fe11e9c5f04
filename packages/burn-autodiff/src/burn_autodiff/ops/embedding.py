"""The embedding family of `Autodiff`: the lookup, followed by its backward rule.

The rule calls the inner backend's ``embedding_backward`` helper (itself differentiable on this
backend, `burn_autodiff.ops.composed.backward_helpers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import make, unary
from burn_autodiff.ops._grad import Grads, Need, P
from burn_autodiff.ops.composed import backward_helpers

if TYPE_CHECKING:
    from burn.backend import Backend


class EmbeddingSaved(NamedTuple):
    """embedding: the table and the (int) indices looked up."""

    weights: P
    indices: P


@backward_helpers("embedding")
class AutodiffEmbeddingOps:
    """The embedding family of `Autodiff` (mixed into it; see `burn.backend.ops.embedding`)."""

    _in: Backend

    def embedding(self, weights: AD, indices: Any) -> AD:
        out = self._in.embedding(weights.p, indices)
        return unary(out, weights, self._embedding_rule, make(EmbeddingSaved, (weights.p, indices)))

    @staticmethod
    def _embedding_rule(B: Any, s: EmbeddingSaved, need: Need, g: P) -> Grads:
        # rows looked up (maybe repeatedly): sum g into them
        return (B.embedding_backward(s.weights, g, s.indices),)
