"""The attention family of `Autodiff`: scaled dot-product attention, followed by its backward rule.

The node keeps the inputs only (q, k, v and the mask), not the ``L_q x L_k`` weights: the rule
calls the inner backend's ``attention_backward`` helper, which recomputes them (as flash attention
does) and gives the three gradients in one pass (itself differentiable on this backend,
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


class AttentionSaved(NamedTuple):
    """attention: its inputs and options (the weights are recomputed in backward)."""

    query: P
    key: P
    value: P
    mask: Any
    scale: float
    causal: bool


@backward_helpers("attention")
class AutodiffAttentionOps:
    """The attention family of `Autodiff` (mixed into it; see `burn.backend.ops.attention`)."""

    _in: Backend

    def attention(self, query: AD, key: AD, value: AD, mask: Any, scale: float, causal: bool) -> AD:
        out = self._in.attention(query.p, key.p, value.p, mask, scale, causal)
        parents = (query.node, key.node, value.node)
        if parents == (None, None, None):
            return AD(out, None)
        saved = make(AttentionSaved, (query.p, key.p, value.p, mask, scale, causal))
        return AD(out, Node(parents, self._attention_rule, saved))

    @staticmethod
    def _attention_rule(B: Any, s: AttentionSaved, need: Need, g: P) -> Grads:
        # dV = W^T dO, dQ = dS K scale, dK = dS^T Q scale (dS the softmax's backward): one pass
        grads = B.attention_backward(s.query, s.key, s.value, s.mask, g, s.scale, s.causal)
        return tuple(d if wanted else None for d, wanted in zip(grads, need, strict=True))
