"""Activation functions on Float tensors (also importable as `burn.activation`).

Each calls the backend's activation op of the same name (backends may override the defaults in
`burn.backend.ops.activation` to be faster; the autodiff decorator gives them gradients); `mish`
and `prelu` are composed of other ops.

Example:
    >>> from burn import Tensor, activation
    >>> x = Tensor.from_data([-1.0, 0.0, 2.0])  # doctest: +SKIP
    >>> activation.relu(x).tolist(), activation.softmax(x, -1).sum().item()  # doctest: +SKIP
    ([0.0, 0.0, 2.0], 1.0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.foundations.kind import Float
from burn.tensor import autocast as _amp
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import expect_same, kind_error

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = [
    "celu",
    "elu",
    "gelu",
    "gelu_approximate",
    "glu",
    "hard_sigmoid",
    "hard_swish",
    "hardtanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "thresholded_relu",
]


def _float(op: str, x: Any) -> TensorBase:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{op}: expects a burn.Tensor, got {type(x).__name__}")
    if x._k is not Float:
        raise kind_error(op, x, "a Float tensor", "convert with .float() first")
    return x


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)`` elementwise."""
    t = _float("relu", x)
    return wrap(t._b.relu(t._p), t._b, Float)


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, else ``negative_slope * x``."""
    t = _float("leaky_relu", x)
    return wrap(t._b.leaky_relu(t._p, float(negative_slope)), t._b, Float)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU: exact ``x * (1 + erf(x / sqrt(2))) / 2``, or with ``approximate="tanh"`` the tanh
    approximation (as `gelu_approximate`; PyTorch's argument, Burn's two functions).

    Example:
        >>> gelu(Tensor.from_data([1.0]), approximate="tanh").tolist()  # doctest: +SKIP
        [0.8411919906082768]
    """
    t = _float("gelu", x)
    if approximate == "tanh":
        return wrap(t._b.gelu_approximate(t._p), t._b, Float)
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return wrap(t._b.gelu(t._p), t._b, Float)


def gelu_approximate(x: Tensor) -> Tensor:
    """Tanh-approximated GELU: ``x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2`` (Burn's
    ``gelu_approximate``, PyTorch's ``gelu(x, approximate="tanh")``)."""
    t = _float("gelu_approximate", x)
    return wrap(t._b.gelu_approximate(t._p), t._b, Float)


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Example:
        >>> elu(Tensor.from_data([-1.0, 2.0])).tolist()  # doctest: +SKIP
        [-0.6321205588285577, 2.0]
    """
    t = _float("elu", x)
    return wrap(t._b.elu(t._p, float(alpha)), t._b, Float)


def celu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``; `alpha` must not be 0."""
    t = _float("celu", x)
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0")
    return wrap(t._b.celu(t._p, float(alpha)), t._b, Float)


def selu(x: Tensor) -> Tensor:
    """``scale * elu(x, alpha)`` with ``alpha = 1.6732632...`` and ``scale = 1.0507009...``."""
    t = _float("selu", x)
    return wrap(t._b.selu(t._p), t._b, Float)


def relu6(x: Tensor) -> Tensor:
    """``min(max(x, 0), 6)``; gradient 1 strictly between 0 and 6 (as PyTorch)."""
    t = _float("relu6", x)
    return wrap(t._b.relu6(t._p), t._b, Float)


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``clamp(x, min_val, max_val)``, with gradient 1 strictly inside the bounds (as PyTorch).

    Example:
        >>> hardtanh(Tensor.from_data([-3.0, 0.5, 3.0])).tolist()  # doctest: +SKIP
        [-1.0, 0.5, 1.0]
    """
    t = _float("hardtanh", x)
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} must not exceed max_val {max_val}")
    return wrap(t._b.hardtanh(t._p, float(min_val), float(max_val)), t._b, Float)


def hard_swish(x: Tensor) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    t = _float("hard_swish", x)
    return wrap(t._b.hard_swish(t._p), t._b, Float)


def softsign(x: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    t = _float("softsign", x)
    return wrap(t._b.softsign(t._p), t._b, Float)


def tanhshrink(x: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    t = _float("tanhshrink", x)
    return wrap(t._b.tanhshrink(t._p), t._b, Float)


def threshold(x: Tensor, threshold: float, value: float) -> Tensor:
    """``x`` where ``x > threshold``, else `value` (PyTorch's ``threshold``).

    Example:
        >>> threshold(Tensor.from_data([0.5, 2.0]), 1.0, -1.0).tolist()  # doctest: +SKIP
        [-1.0, 2.0]
    """
    t = _float("threshold", x)
    return wrap(t._b.threshold(t._p, float(threshold), float(value)), t._b, Float)


def thresholded_relu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where ``x > alpha``, else 0 (Burn's and ONNX's ``ThresholdedRelu``)."""
    t = _float("thresholded_relu", x)
    return wrap(t._b.thresholded_relu(t._p, float(alpha)), t._b, Float)


def glu(x: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)``, where ``a`` and ``b`` are the first and second
    halves of `x` along `dim`; the output has half the size along `dim`.

    Raises:
        ShapeError: the size of `dim` is odd.
    """
    t = _float("glu", x)
    d = t._dim(dim, "glu")
    size = t.shape[d]
    if size % 2:
        raise ShapeError(f"glu: dim {dim} of shape {t.shape} has odd size {size}; it must split in halves")
    return wrap(t._b.glu(t._p, d), t._b, Float)


def softmin(x: Tensor, dim: int) -> Tensor:
    """``softmax(-x, dim)``."""
    t = _float("softmin", x)
    return wrap(t._b.softmin(t._p, t._dim(dim, "softmin")), t._b, Float)


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))``, stable for large ``|x|``."""
    t = _float("sigmoid", x)
    return wrap(t._b.sigmoid(t._p), t._b, Float)


def log_sigmoid(x: Tensor) -> Tensor:
    """``log(sigmoid(x))``, stable for large ``|x|``."""
    t = _float("log_sigmoid", x)
    return wrap(t._b.log_sigmoid(t._p), t._b, Float)


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    t = _float("tanh", x)
    return wrap(t._b.float_tanh(t._p), t._b, Float)


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)`` (a.k.a. swish)."""
    t = _float("silu", x)
    return wrap(t._b.silu(t._p), t._b, Float)


def softplus(x: Tensor, beta: float = 1.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, stable for large inputs."""
    t = _float("softplus", x)
    if beta <= 0:
        raise ValueError(f"softplus: beta must be positive, got {beta}")
    return wrap(t._b.softplus(t._p, float(beta)), t._b, Float)


def hard_sigmoid(x: Tensor, alpha: float = 0.2, beta: float = 0.5) -> Tensor:
    """``clamp(alpha * x + beta, 0, 1)``."""
    t = _float("hard_sigmoid", x)
    return wrap(t._b.hard_sigmoid(t._p, float(alpha), float(beta)), t._b, Float)


def softmax(x: Tensor, dim: int) -> Tensor:
    """``exp(x) / sum(exp(x))`` along `dim` (max-subtracted, so stable).

    Example:
        >>> softmax(Tensor.from_data([[0.0, 0.0]]), -1).tolist()  # doctest: +SKIP
        [[0.5, 0.5]]
    """
    t = _float("softmax", x)
    if _amp.active:
        t = _amp.full_precision("softmax", t)
    return wrap(t._b.softmax(t._p, t._dim(dim, "softmax")), t._b, Float)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    """``log(softmax(x, dim))``, computed stably."""
    t = _float("log_softmax", x)
    if _amp.active:
        t = _amp.full_precision("log_softmax", t)
    return wrap(t._b.log_softmax(t._p, t._dim(dim, "log_softmax")), t._b, Float)


def mish(x: Tensor) -> Tensor:
    """``x * tanh(softplus(x))``."""
    _float("mish", x)
    return x * tanh(softplus(x))


def prelu(x: Tensor, alpha: Tensor | float) -> Tensor:
    """``x`` where positive, else ``alpha * x``; `alpha` is a number, a one-element tensor, or
    one value per channel (dim 1 of `x`), as PyTorch's PReLU.

    Raises:
        ShapeError: `alpha` has neither 1 element nor one per channel.
    """
    _float("prelu", x)
    if isinstance(alpha, TensorBase):
        expect_same("prelu", x, alpha, Float, "alpha")
        a: Any = alpha
        shape = x.shape
        n = a.num_elements()
        if n != 1:
            if len(shape) < 2 or len(a.shape) != 1 or shape[1] != n:
                raise ShapeError(
                    f"prelu: alpha of shape {a.shape} must have 1 element or one per channel "
                    f"(dim 1 of {shape})"
                )
            a = a.reshape((1, n) + (1,) * (len(shape) - 2))
        elif len(a.shape) > len(shape):
            a = a.reshape(())
        return x.clamp_min(0.0) + x.clamp_max(0.0) * a
    return x.clamp_min(0.0) + x.clamp_max(0.0) * float(alpha)
