"""The activation family of `Autodiff`: each activation, followed by its backward rule.

Each op runs the inner backend's activation (its native kernel where it has one, else
burn-core's default on the inner primitives) and, when the input is tracked, records one node.
Differentiating burn-core's compositions instead would record five to ten nodes per activation
and keep their intermediate results alive until backward. The rules of relu, gelu and sigmoid
call the inner backend's ``*_backward`` helpers, so a backend that overrides them (a fused
kernel) speeds up training too; the helpers themselves, called on this backend, are
differentiable (`burn_autodiff.ops.composed.backward_helpers`).

Conventions where the math leaves a choice: hard_sigmoid passes the gradient strictly inside
its linear part, like PyTorch's hardsigmoid; hardtanh and relu6 pass it strictly inside their
bounds, threshold and thresholded_relu strictly above the threshold (PyTorch's); elu, celu and
selu take the exponential branch at 0 (slopes ``alpha``, 1, ``scale * alpha``); hard_swish has
slope 0 at -3 and 1 at 3 (the side outside ``(-3, 3)``, as burn-core's composition; PyTorch's
formula gives -0.5 and 1.5 there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from burn.backend.ops.activation import SELU_ALPHA, SELU_SCALE
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import make, unary
from burn_autodiff.ops._grad import Grads, Need, P, one_minus, where_not
from burn_autodiff.ops.composed import backward_helpers

if TYPE_CHECKING:
    from burn.backend import Backend


# -- saved state of the rules (one value alone is saved as itself) -----------------------------
class LeakyReluSaved(NamedTuple):
    """leaky_relu: the input and the slope below 0."""

    x: P
    negative_slope: float


class SoftplusSaved(NamedTuple):
    """softplus: the input and beta."""

    x: P
    beta: float


class HardSigmoidSaved(NamedTuple):
    """hard_sigmoid: the input and the linear part's ``alpha x + beta``."""

    x: P
    alpha: float
    beta: float


class SoftmaxSaved(NamedTuple):
    """softmax, log_softmax, softmin: the output and the dim normalized along."""

    out: P
    dim: int


class EluSaved(NamedTuple):
    """elu, celu: the input and alpha."""

    x: P
    alpha: float


class HardtanhSaved(NamedTuple):
    """hardtanh, relu6: the input and the bounds."""

    x: P
    min: float
    max: float


class ThresholdSaved(NamedTuple):
    """threshold, thresholded_relu: the input and the threshold it passes strictly above."""

    x: P
    threshold: float


class GluSaved(NamedTuple):
    """glu: the input and the dim split into halves."""

    x: P
    dim: int


@backward_helpers("activation")
class AutodiffActivationOps:
    """The activation family of `Autodiff` (mixed into it; see `burn.backend.ops.activation`)."""

    _in: Backend

    def relu(self, x: AD) -> AD:
        out = self._in.relu(x.p)
        return unary(out, x, self._relu_rule, out)

    @staticmethod
    def _relu_rule(B: Any, out: P, need: Need, g: P) -> Grads:
        return (B.relu_backward(out, g),)  # 1 where out > 0

    def leaky_relu(self, x: AD, negative_slope: float) -> AD:
        out = self._in.leaky_relu(x.p, negative_slope)
        return unary(out, x, self._leaky_relu_rule, make(LeakyReluSaved, (x.p, negative_slope)))

    @staticmethod
    def _leaky_relu_rule(B: Any, s: LeakyReluSaved, need: Need, g: P) -> Grads:
        # 1 for x > 0, slope otherwise (at 0 too, like PyTorch)
        sloped = B.float_mul_scalar(g, s.negative_slope)
        return (B.float_mask_where(sloped, B.float_greater_elem(s.x, 0.0), g),)

    def gelu(self, x: AD) -> AD:
        out = self._in.gelu(x.p)
        return unary(out, x, self._gelu_rule, x.p)

    @staticmethod
    def _gelu_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.gelu_backward(x, g),)

    def gelu_approximate(self, x: AD) -> AD:
        out = self._in.gelu_approximate(x.p)
        return unary(out, x, self._gelu_approximate_rule, x.p)

    @staticmethod
    def _gelu_approximate_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # x s(2u), u = c (x + k x^3): g (s + x s (1 - s) 2c (1 + 3k x^2)), one helper call
        return (B.gelu_approximate_backward(x, g),)

    def sigmoid(self, x: AD) -> AD:
        out = self._in.sigmoid(x.p)
        return unary(out, x, self._sigmoid_rule, out)

    @staticmethod
    def _sigmoid_rule(B: Any, out: P, need: Need, g: P) -> Grads:
        return (B.sigmoid_backward(out, g),)  # s (1 - s)

    def log_sigmoid(self, x: AD) -> AD:
        out = self._in.log_sigmoid(x.p)
        return unary(out, x, self._log_sigmoid_rule, x.p)

    @staticmethod
    def _log_sigmoid_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_mul(g, B.sigmoid(B.float_neg(x))),)  # d log(sigmoid x) = 1 - sigmoid(x) = sigmoid(-x)

    def silu(self, x: AD) -> AD:
        out = self._in.silu(x.p)
        return unary(out, x, self._silu_rule, x.p)

    @staticmethod
    def _silu_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        s = B.sigmoid(x)  # d(x s(x)) = s(x) (1 + x (1 - s(x)))
        dx = B.float_mul(s, B.float_add_scalar(B.float_mul(x, one_minus(B, s)), 1.0))
        return (B.float_mul(g, dx),)

    def softplus(self, x: AD, beta: float) -> AD:
        out = self._in.softplus(x.p, beta)
        return unary(out, x, self._softplus_rule, make(SoftplusSaved, (x.p, beta)))

    @staticmethod
    def _softplus_rule(B: Any, s: SoftplusSaved, need: Need, g: P) -> Grads:
        # d log(1 + e^(bx))/b = sigmoid(bx)
        return (B.float_mul(g, B.sigmoid(B.float_mul_scalar(s.x, s.beta))),)

    def hard_sigmoid(self, x: AD, alpha: float, beta: float) -> AD:
        out = self._in.hard_sigmoid(x.p, alpha, beta)
        return unary(out, x, self._hard_sigmoid_rule, make(HardSigmoidSaved, (x.p, alpha, beta)))

    @staticmethod
    def _hard_sigmoid_rule(B: Any, s: HardSigmoidSaved, need: Need, g: P) -> Grads:
        # alpha inside the linear part 0 < alpha x + beta < 1, else 0
        lin = B.float_add_scalar(B.float_mul_scalar(s.x, s.alpha), s.beta)
        outside = B.bool_or(B.float_lower_equal_elem(lin, 0.0), B.float_greater_equal_elem(lin, 1.0))
        return (where_not(B, B.float_mul_scalar(g, s.alpha), outside),)

    def softmax(self, x: AD, dim: int) -> AD:
        out = self._in.softmax(x.p, dim)
        return unary(out, x, self._softmax_rule, make(SoftmaxSaved, (out, dim)))

    @staticmethod
    def _softmax_rule(B: Any, s: SoftmaxSaved, need: Need, g: P) -> Grads:
        out = s.out  # dx = s * (g - sum(g * s))
        dot = B.float_sum_dim(B.float_mul(g, out), s.dim)
        return (B.float_mul(out, B.float_sub(g, dot)),)

    def log_softmax(self, x: AD, dim: int) -> AD:
        out = self._in.log_softmax(x.p, dim)
        return unary(out, x, self._log_softmax_rule, make(SoftmaxSaved, (out, dim)))

    @staticmethod
    def _log_softmax_rule(B: Any, s: SoftmaxSaved, need: Need, g: P) -> Grads:
        # dx = g - softmax(x) * sum(g)
        return (B.float_sub(g, B.float_mul(B.float_exp(s.out), B.float_sum_dim(g, s.dim))),)

    def softmin(self, x: AD, dim: int) -> AD:
        out = self._in.softmin(x.p, dim)
        return unary(out, x, self._softmin_rule, make(SoftmaxSaved, (out, dim)))

    @staticmethod
    def _softmin_rule(B: Any, s: SoftmaxSaved, need: Need, g: P) -> Grads:
        out = s.out  # softmax(-x): dx = -s * (g - sum(g * s))
        dot = B.float_sum_dim(B.float_mul(g, out), s.dim)
        return (B.float_mul(out, B.float_sub(dot, g)),)

    def elu(self, x: AD, alpha: float) -> AD:
        out = self._in.elu(x.p, alpha)
        return unary(out, x, self._elu_rule, make(EluSaved, (x.p, alpha)))

    @staticmethod
    def _elu_rule(B: Any, s: EluSaved, need: Need, g: P) -> Grads:
        return (B.float_mul(g, _exp_branch(B, s.x, s.alpha, 1.0)),)  # d alpha (e^x - 1) = alpha e^x

    def celu(self, x: AD, alpha: float) -> AD:
        out = self._in.celu(x.p, alpha)
        return unary(out, x, self._celu_rule, make(EluSaved, (x.p, alpha)))

    @staticmethod
    def _celu_rule(B: Any, s: EluSaved, need: Need, g: P) -> Grads:
        # d alpha (e^(x/alpha) - 1) = e^(x/alpha)
        return (B.float_mul(g, _exp_branch(B, s.x, 1.0, 1.0 / s.alpha)),)

    def selu(self, x: AD) -> AD:
        out = self._in.selu(x.p)
        return unary(out, x, self._selu_rule, x.p)

    @staticmethod
    def _selu_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # scale * elu(x, alpha), with SELU's fixed alpha and scale
        return (B.float_mul_scalar(B.float_mul(g, _exp_branch(B, x, SELU_ALPHA, 1.0)), SELU_SCALE),)

    def hardtanh(self, x: AD, min_val: float, max_val: float) -> AD:
        out = self._in.hardtanh(x.p, min_val, max_val)
        return unary(out, x, self._hardtanh_rule, make(HardtanhSaved, (x.p, min_val, max_val)))

    @staticmethod
    def _hardtanh_rule(B: Any, s: HardtanhSaved, need: Need, g: P) -> Grads:
        # 1 strictly inside, 0 at and beyond the bounds
        outside = B.bool_or(B.float_lower_equal_elem(s.x, s.min), B.float_greater_equal_elem(s.x, s.max))
        return (where_not(B, g, outside),)

    def relu6(self, x: AD) -> AD:
        out = self._in.relu6(x.p)
        return unary(out, x, self._hardtanh_rule, make(HardtanhSaved, (x.p, 0.0, 6.0)))  # hardtanh(x, 0, 6)

    def hard_swish(self, x: AD) -> AD:
        out = self._in.hard_swish(x.p)
        return unary(out, x, self._hard_swish_rule, x.p)

    @staticmethod
    def _hard_swish_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # d x (x + 3) / 6 = (2x + 3) / 6 on (-3, 3); 0 below, 1 above
        slope = B.float_add_scalar(B.float_div_scalar(x, 3.0), 0.5)
        slope = B.float_mask_fill(slope, B.float_lower_equal_elem(x, -3.0), 0.0)
        slope = B.float_mask_fill(slope, B.float_greater_equal_elem(x, 3.0), 1.0)
        return (B.float_mul(g, slope),)

    def softsign(self, x: AD) -> AD:
        out = self._in.softsign(x.p)
        return unary(out, x, self._softsign_rule, x.p)

    @staticmethod
    def _softsign_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # d x / (1 + |x|) = 1 / (1 + |x|)^2
        denominator = B.float_add_scalar(B.float_abs(x), 1.0)
        return (B.float_div(g, B.float_mul(denominator, denominator)),)

    def tanhshrink(self, x: AD) -> AD:
        out = self._in.tanhshrink(x.p)
        return unary(out, x, self._tanhshrink_rule, x.p)

    @staticmethod
    def _tanhshrink_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        t = B.float_tanh(x)  # d (x - tanh x) = tanh^2 x
        return (B.float_mul(g, B.float_mul(t, t)),)

    def threshold(self, x: AD, threshold: float, value: float) -> AD:
        out = self._in.threshold(x.p, threshold, value)
        return unary(out, x, self._threshold_rule, make(ThresholdSaved, (x.p, threshold)))

    @staticmethod
    def _threshold_rule(B: Any, s: ThresholdSaved, need: Need, g: P) -> Grads:
        return (where_not(B, g, B.float_lower_equal_elem(s.x, s.threshold)),)  # passes strictly above

    def thresholded_relu(self, x: AD, alpha: float) -> AD:
        out = self._in.thresholded_relu(x.p, alpha)
        return unary(out, x, self._threshold_rule, make(ThresholdSaved, (x.p, alpha)))

    def glu(self, x: AD, dim: int) -> AD:
        out = self._in.glu(x.p, dim)
        return unary(out, x, self._glu_rule, make(GluSaved, (x.p, dim)))

    @staticmethod
    def _glu_rule(B: Any, s: GluSaved, need: Need, g: P) -> Grads:
        # out = a s(b): da = g s(b), db = g a s(b) (1 - s(b))
        a, b = _halves(B, s.x, s.dim)
        sb = B.sigmoid(b)
        return (B.float_cat([B.float_mul(g, sb), B.sigmoid_backward(sb, B.float_mul(g, a))], s.dim),)


# -- helpers of the rules above ----------------------------------------------------------------
def _exp_branch(B: Any, x: P, coef: float, rate: float) -> P:
    """The slope of elu-like activations: 1 for ``x > 0``, else ``coef * exp(rate * x)``
    (computed at ``min(x, 0)``, so the branch not taken never overflows)."""
    slope = B.float_mul_scalar(B.float_exp(B.float_mul_scalar(B.float_clamp_max(x, 0.0), rate)), coef)
    return B.float_mask_fill(slope, B.float_greater_elem(x, 0.0), 1.0)


def _halves(B: Any, x: P, dim: int) -> tuple[P, P]:
    """The two halves of `x` along `dim` (glu's ``a`` and ``b``)."""
    shape = B.float_shape(x)
    half = shape[dim] // 2
    ranges = [slice(0, n, 1) for n in shape]
    first = B.float_slice(x, tuple(ranges[:dim] + [slice(0, half, 1)] + ranges[dim + 1 :]))
    second = B.float_slice(x, tuple(ranges[:dim] + [slice(half, 2 * half, 1)] + ranges[dim + 1 :]))
    return first, second
