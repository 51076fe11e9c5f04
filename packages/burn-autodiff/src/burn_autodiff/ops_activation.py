"""Forward side of Burn's further activations (``elu``, ``hard_swish``, ``glu``, ``softmin``...).

Same pattern as `burn_autodiff.ops_module`: each op runs the inner backend's activation (its
native kernel where it has one, else burn-core's default on the inner primitives) and, when the
input is tracked, records one node whose rule lives in `burn_autodiff.rules`. Differentiating
burn-core's compositions instead would record five to ten nodes per activation and keep their
intermediate results alive until backward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.backend.ops.activation import SELU_ALPHA, SELU_SCALE
from burn_autodiff import rules as R
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import unary

if TYPE_CHECKING:
    from burn.backend import Backend


class AutodiffActivationOps:
    """Further activations of `Autodiff`, each with a backward rule (mixed into it)."""

    _in: Backend

    def gelu_approximate(self, x: AD) -> AD:
        out = self._in.gelu_approximate(x.p)
        return unary(out, x, R.gelu_approximate, (x.p,))

    def elu(self, x: AD, alpha: float) -> AD:
        out = self._in.elu(x.p, alpha)
        return unary(out, x, R.elu, (x.p, alpha))

    def celu(self, x: AD, alpha: float) -> AD:
        out = self._in.celu(x.p, alpha)
        return unary(out, x, R.celu, (x.p, alpha))

    def selu(self, x: AD) -> AD:
        out = self._in.selu(x.p)
        return unary(out, x, R.selu, (x.p, SELU_ALPHA, SELU_SCALE))

    def relu6(self, x: AD) -> AD:
        out = self._in.relu6(x.p)
        return unary(out, x, R.hardtanh, (x.p, 0.0, 6.0))

    def hardtanh(self, x: AD, min_val: float, max_val: float) -> AD:
        out = self._in.hardtanh(x.p, min_val, max_val)
        return unary(out, x, R.hardtanh, (x.p, min_val, max_val))

    def hard_swish(self, x: AD) -> AD:
        out = self._in.hard_swish(x.p)
        return unary(out, x, R.hard_swish, (x.p,))

    def softsign(self, x: AD) -> AD:
        out = self._in.softsign(x.p)
        return unary(out, x, R.softsign, (x.p,))

    def tanhshrink(self, x: AD) -> AD:
        out = self._in.tanhshrink(x.p)
        return unary(out, x, R.tanhshrink, (x.p,))

    def threshold(self, x: AD, threshold: float, value: float) -> AD:
        out = self._in.threshold(x.p, threshold, value)
        return unary(out, x, R.threshold, (x.p, threshold))

    def thresholded_relu(self, x: AD, alpha: float) -> AD:
        out = self._in.thresholded_relu(x.p, alpha)
        return unary(out, x, R.threshold, (x.p, alpha))

    def glu(self, x: AD, dim: int) -> AD:
        out = self._in.glu(x.p, dim)
        return unary(out, x, R.glu, (x.p, dim))

    def softmin(self, x: AD, dim: int) -> AD:
        out = self._in.softmin(x.p, dim)
        return unary(out, x, R.softmin, (out, dim))
