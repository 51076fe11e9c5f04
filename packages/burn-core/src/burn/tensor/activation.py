"""Activation functions on Float tensors (also importable as `burn.activation`).

Each calls the backend's activation op of the same name (backends may override the defaults in
`burn.backend.activation_ops` to be faster; the autodiff decorator gives them gradients); `mish`
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
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import expect_same, kind_error
from burn.tensor.kind import Float

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = [
    "gelu",
    "hard_sigmoid",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "prelu",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "tanh",
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


def gelu(x: Tensor) -> Tensor:
    """Exact GELU: ``x * (1 + erf(x / sqrt(2))) / 2``."""
    t = _float("gelu", x)
    return wrap(t._b.gelu(t._p), t._b, Float)


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
    return wrap(t._b.softmax(t._p, t._dim(dim, "softmax")), t._b, Float)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    """``log(softmax(x, dim))``, computed stably."""
    t = _float("log_softmax", x)
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
