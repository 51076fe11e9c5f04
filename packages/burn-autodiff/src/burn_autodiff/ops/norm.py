"""The norm family of `Autodiff`: layer normalization, followed by its backward rule.

The node keeps the inputs only (x and gamma), not the normalized rows nor their statistics: the
rule calls the inner backend's ``layer_norm_backward`` helper, which recomputes them and gives
the three gradients in one call (itself differentiable on this backend,
`burn_autodiff.ops.composed.backward_helpers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, make
from burn_autodiff.ops._grad import Grads, Need, P
from burn_autodiff.ops.composed import backward_helpers

if TYPE_CHECKING:
    from burn.backend import Backend


class LayerNormSaved(NamedTuple):
    """layer_norm: its input, its scale and epsilon (the statistics are recomputed in backward)."""

    tensor: P
    gamma: P
    epsilon: float


@backward_helpers("norm")
class AutodiffNormOps:
    """The norm family of `Autodiff` (mixed into it; see `burn.backend.ops.norm`)."""

    _in: Backend

    def layer_norm(self, tensor: AD, gamma: AD, beta: AD | None, epsilon: float) -> AD:
        out = self._in.layer_norm(tensor.p, gamma.p, None if beta is None else beta.p, epsilon)
        parents = (tensor.node, gamma.node, None if beta is None else beta.node)
        if parents == (None, None, None):
            return AD(out, None)
        saved = make(LayerNormSaved, (tensor.p, gamma.p, epsilon))
        return AD(out, Node(parents, self._layer_norm_rule, saved))

    @staticmethod
    def _layer_norm_rule(B: Any, s: LayerNormSaved, need: Need, g: P) -> Grads:
        # dx = rstd (dy gamma - mean(dy gamma) - xh mean(dy gamma xh)); dgamma, dbeta: row sums
        grads = B.layer_norm_backward(s.tensor, s.gamma, s.epsilon, g)
        return tuple(d if wanted else None for d, wanted in zip(grads, need, strict=True))
