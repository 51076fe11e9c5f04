"""The sampling family of `Autodiff`: interpolation, followed by its backward rule, and grid
sampling.

The interpolate rule calls the inner backend's ``interpolate_backward`` helper (itself
differentiable on this backend, `burn_autodiff.ops.composed.backward_helpers`). Grid sampling
has no rule: its gradients (bilinear weights differentiated with respect to the sampling
positions) are exactly what burn-core's composition records, so it runs the inner op when
nothing is tracked and records the composition otherwise (`burn_autodiff.ops.composed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, make
from burn_autodiff.ops._grad import Grads, Need, P
from burn_autodiff.ops.composed import backward_helpers, inner_or_default, records_no_node

if TYPE_CHECKING:
    from burn.backend import Backend

Pair = tuple[int, int]


class InterpolateSaved(NamedTuple):
    """interpolate: the input and the op's options."""

    x: P
    output_size: Pair
    mode: Any
    align_corners: bool


@backward_helpers("sampling")
class AutodiffSamplingOps:
    """The sampling family of `Autodiff` (mixed into it; see `burn.backend.ops.sampling`)."""

    _in: Backend

    def interpolate(self, x: AD, output_size: Pair, mode: Any, align_corners: bool) -> AD:
        out = self._in.interpolate(x.p, output_size, mode, align_corners)
        n = x.node
        if n is None:
            return AD(out, None)
        saved = make(InterpolateSaved, (x.p, output_size, mode, align_corners))
        return AD(out, Node((n,), self._interpolate_rule, saved))

    @staticmethod
    def _interpolate_rule(B: Any, s: InterpolateSaved, need: Need, g: P) -> Grads:
        # each output sample's gradient, spread back over the inputs it weighed
        return (B.interpolate_backward(s.x, g, s.output_size, s.mode, s.align_corners),)

    @records_no_node
    def grid_sample_2d(self, x: AD, grid: AD, mode: Any, padding_mode: Any, align_corners: bool) -> AD:
        out: AD = inner_or_default(self, "grid_sample_2d", x, grid, mode, padding_mode, align_corners)
        return out
