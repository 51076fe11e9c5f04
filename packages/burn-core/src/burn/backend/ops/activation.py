"""Activation ops of the backend contract (Burn's ``ActivationOps``), with defaults built from
float ops, plus the backward helpers the autodiff decorator uses."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from burn.backend.contract import binary, default, family, unary

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
# SELU's constants (Klambauer et al., 2017), to the digits PyTorch and Burn use.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@family("activation", bound="memory")
class ActivationOps:
    """Activation ops; every one has a default.

    Each body starts with ``b: Backend = self``: it costs nothing at run time and lets type
    checkers see the float ops that the defaults are written with.
    """

    @default(ew=unary("a < (T)0 ? (T)0 : a"))
    def relu(self, x: P) -> P:
        b: Backend = self  # type: ignore[assignment]
        return b.float_clamp_min(x, 0.0)  # NaN stays NaN (it is not lower than 0)

    @default(backward_of="relu", ew=binary("a > (T)0 ? b : (T)0"))
    def relu_backward(self, output: P, grad: P) -> P:
        """`grad` where the relu `output` is positive, else 0."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_mask_fill(grad, b.float_lower_equal_elem(output, 0.0), 0.0)

    @default(ew=unary("a < (T)0 ? a * s0 : a", 1))
    def leaky_relu(self, x: P, negative_slope: float) -> P:
        b: Backend = self  # type: ignore[assignment]
        return b.float_mask_where(x, b.float_lower_elem(x, 0.0), b.float_mul_scalar(x, negative_slope))

    @default(ew=unary("(T)0.5 * a * ((T)1 + erf(a * (T)0.70710678118654752440))"))
    def gelu(self, x: P) -> P:
        """Exact GELU: ``x * (1 + erf(x / sqrt(2))) / 2``."""
        b: Backend = self  # type: ignore[assignment]
        cdf = b.float_add_scalar(b.float_erf(b.float_mul_scalar(x, _INV_SQRT2)), 1.0)
        return b.float_mul_scalar(b.float_mul(x, cdf), 0.5)

    @default(backward_of="gelu", ew=binary("b * b_gelu_grad(a)"))
    def gelu_backward(self, x: P, grad: P) -> P:
        b: Backend = self  # type: ignore[assignment]
        # d/dx [x * Phi(x)] = Phi(x) + x * phi(x), Phi the normal CDF and phi its density.
        erf = b.float_erf(b.float_mul_scalar(x, _INV_SQRT2))
        cdf = b.float_mul_scalar(b.float_add_scalar(erf, 1.0), 0.5)
        density = b.float_exp(b.float_mul_scalar(b.float_mul(x, x), -0.5))
        pdf = b.float_mul_scalar(density, _INV_SQRT_2PI)
        return b.float_mul(grad, b.float_add(cdf, b.float_mul(x, pdf)))

    @default(ew=unary("b_sigmoid(a)"))
    def sigmoid(self, x: P) -> P:
        """Numerically stable for large ``|x|``."""
        b: Backend = self  # type: ignore[assignment]
        # With e = exp(-|x|) <= 1 nothing overflows: sigmoid is 1/(1+e) for x >= 0 and e/(1+e) below,
        # which also keeps full relative precision for very negative x.
        e = b.float_exp(b.float_neg(b.float_abs(x)))
        positive = b.float_recip(b.float_add_scalar(e, 1.0))
        return b.float_mask_where(positive, b.float_lower_elem(x, 0.0), b.float_mul(e, positive))

    @default(backward_of="sigmoid", ew=binary("b * a * ((T)1 - a)"))
    def sigmoid_backward(self, output: P, grad: P) -> P:
        """``grad * output * (1 - output)``."""
        b: Backend = self  # type: ignore[assignment]
        one_minus = b.float_add_scalar(b.float_neg(output), 1.0)
        return b.float_mul(grad, b.float_mul(output, one_minus))

    @default(ew=unary("b_fmin(a, (T)0) - log1p(exp(-b_fabs(a)))"))
    def log_sigmoid(self, x: P) -> P:
        b: Backend = self  # type: ignore[assignment]
        # log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)): no overflow for either sign.
        softplus_neg = b.float_log1p(b.float_exp(b.float_neg(b.float_abs(x))))
        return b.float_sub(b.float_clamp_max(x, 0.0), softplus_neg)

    @default(ew=unary("a * b_sigmoid(a)"))
    def silu(self, x: P) -> P:
        b: Backend = self  # type: ignore[assignment]
        return b.float_mul(x, b.sigmoid(x))

    @default(ew=unary("b_softplus(a, s0)", 1))
    def softplus(self, x: P, beta: float) -> P:
        """``log(1 + exp(beta * x)) / beta``, stable for large inputs."""
        b: Backend = self  # type: ignore[assignment]
        # log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)) with z = beta * x: exp never overflows.
        z = b.float_mul_scalar(x, beta)
        tail = b.float_log1p(b.float_exp(b.float_neg(b.float_abs(z))))
        return b.float_div_scalar(b.float_add(b.float_clamp_min(z, 0.0), tail), beta)

    @default(ew=unary("b_fmin(b_fmax(s0 * a + s1, (T)0), (T)1)", 2))
    def hard_sigmoid(self, x: P, alpha: float, beta: float) -> P:
        """``clamp(alpha * x + beta, 0, 1)``."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_clamp(b.float_add_scalar(b.float_mul_scalar(x, alpha), beta), 0.0, 1.0)

    @default(bound="compute")
    def softmax(self, x: P, dim: int) -> P:
        """Stable (max subtracted)."""
        b: Backend = self  # type: ignore[assignment]
        shifted = b.float_sub(x, b.float_max_dim(x, dim))
        e = b.float_exp(shifted)
        return b.float_div(e, b.float_sum_dim(e, dim))

    @default(bound="compute")
    def log_softmax(self, x: P, dim: int) -> P:
        b: Backend = self  # type: ignore[assignment]
        shifted = b.float_sub(x, b.float_max_dim(x, dim))
        return b.float_sub(shifted, b.float_log(b.float_sum_dim(b.float_exp(shifted), dim)))

    # -- Burn's further activations; each is a composition, so autodiff differentiates it ------
    @default
    def gelu_approximate(self, x: P) -> P:
        """Tanh GELU: ``x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2``."""
        b: Backend = self  # type: ignore[assignment]
        # (1 + tanh(u)) / 2 = sigmoid(2u): the stable sigmoid keeps the tail exact for very
        # negative x, where 1 + tanh(u) would cancel to a few ulps of 1 times a large x.
        cube = b.float_mul(b.float_mul(x, x), x)
        inner = b.float_mul_scalar(b.float_add(x, b.float_mul_scalar(cube, 0.044715)), 2.0 * _SQRT_2_OVER_PI)
        return b.float_mul(x, b.sigmoid(inner))

    @default(backward_of="gelu_approximate")
    def gelu_approximate_backward(self, x: P, grad: P) -> P:
        """``grad * d/dx gelu_approximate(x)``: with ``s = sigmoid(2u)``, ``u = c (x + k x^3)``,
        the slope is ``s + x s (1 - s) 2c (1 + 3k x^2)`` (``c = sqrt(2/pi)``, ``k = 0.044715``).
        One op, so that a backend computes it in one pass instead of twelve."""
        b: Backend = self  # type: ignore[assignment]
        x2 = b.float_mul(x, x)
        c2 = 2.0 * _SQRT_2_OVER_PI
        u2 = b.float_mul_scalar(b.float_add(x, b.float_mul_scalar(b.float_mul(x2, x), 0.044715)), c2)
        s = b.sigmoid(u2)
        du2 = b.float_mul_scalar(b.float_add_scalar(b.float_mul_scalar(x2, 3.0 * 0.044715), 1.0), c2)
        one_minus_s = b.float_add_scalar(b.float_neg(s), 1.0)
        slope = b.float_add(s, b.float_mul(b.float_mul(x, b.float_mul(s, one_minus_s)), du2))
        return b.float_mul(grad, slope)

    @default
    def elu(self, x: P, alpha: float) -> P:
        """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_mask_where(x, b.float_lower_equal_elem(x, 0.0), _exp_minus_one(b, x, alpha, 1.0))

    @default
    def celu(self, x: P, alpha: float) -> P:
        """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``."""
        b: Backend = self  # type: ignore[assignment]
        negative = _exp_minus_one(b, x, alpha, 1.0 / alpha)
        return b.float_mask_where(x, b.float_lower_equal_elem(x, 0.0), negative)

    @default
    def selu(self, x: P) -> P:
        """``scale * elu(x, alpha)`` with SELU's fixed ``alpha`` and ``scale``."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_mul_scalar(b.elu(x, SELU_ALPHA), SELU_SCALE)

    @default
    def relu6(self, x: P) -> P:
        """``min(max(x, 0), 6)``."""
        b: Backend = self  # type: ignore[assignment]
        return b.hardtanh(x, 0.0, 6.0)

    @default
    def hardtanh(self, x: P, min_val: float, max_val: float) -> P:
        """``clamp(x, min_val, max_val)``; the gradient is 1 strictly inside, as PyTorch's."""
        b: Backend = self  # type: ignore[assignment]
        # clamp passes the gradient at its bounds too; hardtanh does not. Writing it as x where
        # strictly inside, else a constant, gives that without a rule of its own.
        low = b.float_mask_fill(x, b.float_lower_equal_elem(x, min_val), min_val)
        return b.float_mask_fill(low, b.float_greater_equal_elem(x, max_val), max_val)

    @default
    def hard_swish(self, x: P) -> P:
        """``x * relu6(x + 3) / 6``."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_mul(x, b.float_div_scalar(b.relu6(b.float_add_scalar(x, 3.0)), 6.0))

    @default
    def softsign(self, x: P) -> P:
        """``x / (1 + |x|)``."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_div(x, b.float_add_scalar(b.float_abs(x), 1.0))

    @default
    def tanhshrink(self, x: P) -> P:
        """``x - tanh(x)``."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_sub(x, b.float_tanh(x))

    @default
    def threshold(self, x: P, threshold: float, value: float) -> P:
        """``x`` where ``x > threshold``, else `value`."""
        b: Backend = self  # type: ignore[assignment]
        return b.float_mask_fill(x, b.float_lower_equal_elem(x, threshold), value)

    @default
    def thresholded_relu(self, x: P, alpha: float) -> P:
        """``x`` where ``x > alpha``, else 0."""
        b: Backend = self  # type: ignore[assignment]
        return b.threshold(x, alpha, 0.0)

    @default(bound="compute")
    def glu(self, x: P, dim: int) -> P:
        """``a * sigmoid(b)`` with ``a, b`` the two halves of `x` along `dim` (even length)."""
        b: Backend = self  # type: ignore[assignment]
        shape = b.float_shape(x)
        half = shape[dim] // 2
        whole = [slice(0, n) for n in shape]
        first = b.float_slice(x, tuple(whole[:dim] + [slice(0, half)] + whole[dim + 1:]))
        second = b.float_slice(x, tuple(whole[:dim] + [slice(half, 2 * half)] + whole[dim + 1:]))
        return b.float_mul(first, b.sigmoid(second))

    @default(bound="compute")
    def softmin(self, x: P, dim: int) -> P:
        """``softmax(-x, dim)``."""
        b: Backend = self  # type: ignore[assignment]
        return b.softmax(b.float_neg(x), dim)


def _exp_minus_one(b: Backend, x: P, alpha: float, rate: float) -> P:
    """``alpha * (exp(rate * min(x, 0)) - 1)``: the exponential never overflows, so neither the
    value nor the gradient of the unused branch is ever inf or NaN."""
    e = b.float_exp(b.float_mul_scalar(b.float_clamp_max(x, 0.0), rate))
    return b.float_mul_scalar(b.float_sub_scalar(e, 1.0), alpha)
