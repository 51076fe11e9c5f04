"""Activation layers: thin modules over `burn.activation`, plus the learnable `PRelu` and `SwiGlu`.

Example:
    >>> from burn import nn
    >>> act = nn.LeakyReluConfig(negative_slope=0.2).init()
    >>> act.negative_slope
    0.2
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import DEFAULT_LAYER_INIT, Constant, Initializer
from burn.nn.linear import Linear, LinearConfig
from burn.tensor import activation as A

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = [
    "Celu",
    "CeluConfig",
    "Elu",
    "EluConfig",
    "Gelu",
    "GeluConfig",
    "Glu",
    "GluConfig",
    "HardSwish",
    "Hardtanh",
    "HardtanhConfig",
    "HardSigmoid",
    "HardSigmoidConfig",
    "LeakyRelu",
    "LeakyReluConfig",
    "Mish",
    "PRelu",
    "PReluConfig",
    "Relu",
    "Relu6",
    "Selu",
    "Sigmoid",
    "Silu",
    "Softmin",
    "SoftminConfig",
    "Softplus",
    "SoftplusConfig",
    "Softsign",
    "SwiGlu",
    "SwiGluConfig",
    "Tanh",
    "Tanhshrink",
    "Threshold",
    "ThresholdConfig",
    "ThresholdedRelu",
    "ThresholdedReluConfig",
]


class Relu(Module):
    """``max(x, 0)``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.relu(x)


@config
class GeluConfig:
    """Builds a `Gelu`; with `approximate` it uses the tanh approximation (Burn's
    ``Gelu::new_approximate()``, PyTorch's ``GELU(approximate="tanh")``)."""

    approximate: bool = False

    def init(self, device: Device | None = None) -> Gelu:
        return Gelu(bool(self.approximate))


class Gelu(Module):
    """Exact GELU, ``x * Phi(x)``; with ``approximate=True`` the tanh approximation."""

    approximate: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return A.gelu_approximate(x) if self.approximate else A.gelu(x)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.sigmoid(x)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, x: Tensor) -> Tensor:
        return A.tanh(x)


class Silu(Module):
    """``x * sigmoid(x)``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.silu(x)


class Mish(Module):
    """``x * tanh(softplus(x))``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.mish(x)


@config
class LeakyReluConfig:
    """Builds a `LeakyRelu`."""

    negative_slope: float = 0.01

    def init(self, device: Device | None = None) -> LeakyRelu:
        return LeakyRelu(float(self.negative_slope))


class LeakyRelu(Module):
    """``x`` where positive, else ``negative_slope * x``."""

    negative_slope: float = 0.01

    def forward(self, x: Tensor) -> Tensor:
        return A.leaky_relu(x, self.negative_slope)


@config
class SoftplusConfig:
    """Builds a `Softplus`."""

    beta: float = 1.0

    def init(self, device: Device | None = None) -> Softplus:
        if self.beta <= 0:
            raise ValueError(f"SoftplusConfig: beta must be positive, got {self.beta}")
        return Softplus(float(self.beta))


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``."""

    beta: float = 1.0

    def forward(self, x: Tensor) -> Tensor:
        return A.softplus(x, self.beta)


@config
class HardSigmoidConfig:
    """Builds a `HardSigmoid` (Burn's defaults: alpha 0.2, beta 0.5)."""

    alpha: float = 0.2
    beta: float = 0.5

    def init(self, device: Device | None = None) -> HardSigmoid:
        return HardSigmoid(float(self.alpha), float(self.beta))


class HardSigmoid(Module):
    """``clamp(alpha * x + beta, 0, 1)``."""

    alpha: float = 0.2
    beta: float = 0.5

    def forward(self, x: Tensor) -> Tensor:
        return A.hard_sigmoid(x, self.alpha, self.beta)


@config
class PReluConfig:
    """Builds a `PRelu`: one learnable slope, or `num_parameters` (one per channel, dim 1)."""

    num_parameters: int = 1
    alpha: float = 0.25

    def init(self, device: Device | None = None) -> PRelu:
        if self.num_parameters < 1:
            raise ValueError(f"PReluConfig: num_parameters must be >= 1, got {self.num_parameters}")
        device = resolve_device(device)
        return PRelu(alpha=Constant(float(self.alpha)).init_param((self.num_parameters,), device))


class PRelu(Module):
    """``x`` where positive, else ``alpha * x`` with a learnable `alpha` (``[num_parameters]``)."""

    alpha: Param

    def forward(self, x: Tensor) -> Tensor:
        return A.prelu(x, self.alpha.val())


@config
class SwiGluConfig:
    """Builds a `SwiGlu`: two `d_input -> d_output` projections (no bias by default, as Burn)."""

    d_input: int
    d_output: int
    bias: bool = False
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> SwiGlu:
        device = resolve_device(device)
        linear = LinearConfig(self.d_input, self.d_output, bias=self.bias, initializer=self.initializer)
        return SwiGlu(linear_inner=linear.init(device), linear_outer=linear.init(device))


class SwiGlu(Module):
    """``silu(linear_inner(x)) * linear_outer(x)`` (Shazeer, 2020)."""

    linear_inner: Linear
    linear_outer: Linear

    def forward(self, x: Tensor) -> Tensor:
        return A.silu(self.linear_inner(x)) * self.linear_outer(x)


# -- the further activations of Burn and PyTorch -------------------------------------------------
@config
class EluConfig:
    """Builds an `Elu`."""

    alpha: float = 1.0

    def init(self, device: Device | None = None) -> Elu:
        return Elu(float(self.alpha))


class Elu(Module):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Example:
        >>> from burn import nn
        >>> nn.EluConfig(alpha=0.5).init().alpha
        0.5
    """

    alpha: float = 1.0

    def forward(self, x: Tensor) -> Tensor:
        return A.elu(x, self.alpha)


@config
class CeluConfig:
    """Builds a `Celu` (`alpha` must not be 0)."""

    alpha: float = 1.0

    def init(self, device: Device | None = None) -> Celu:
        if self.alpha == 0:
            raise ValueError("CeluConfig: alpha must not be 0")
        return Celu(float(self.alpha))


class Celu(Module):
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``."""

    alpha: float = 1.0

    def forward(self, x: Tensor) -> Tensor:
        return A.celu(x, self.alpha)


class Selu(Module):
    """``scale * elu(x, alpha)`` with SELU's fixed constants."""

    def forward(self, x: Tensor) -> Tensor:
        return A.selu(x)


class Relu6(Module):
    """``min(max(x, 0), 6)``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.relu6(x)


@config
class HardtanhConfig:
    """Builds a `Hardtanh` (PyTorch's defaults: -1 and 1)."""

    min_val: float = -1.0
    max_val: float = 1.0

    def init(self, device: Device | None = None) -> Hardtanh:
        if self.min_val > self.max_val:
            raise ValueError(f"HardtanhConfig: min_val {self.min_val} exceeds max_val {self.max_val}")
        return Hardtanh(float(self.min_val), float(self.max_val))


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``."""

    min_val: float = -1.0
    max_val: float = 1.0

    def forward(self, x: Tensor) -> Tensor:
        return A.hardtanh(x, self.min_val, self.max_val)


class HardSwish(Module):
    """``x * relu6(x + 3) / 6``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.hard_swish(x)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.softsign(x)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.tanhshrink(x)


@config
class ThresholdConfig:
    """Builds a `Threshold`: values not above `threshold` become `value`."""

    threshold: float
    value: float

    def init(self, device: Device | None = None) -> Threshold:
        return Threshold(float(self.threshold), float(self.value))


class Threshold(Module):
    """``x`` where ``x > threshold``, else `value`."""

    threshold: float
    value: float

    def forward(self, x: Tensor) -> Tensor:
        return A.threshold(x, self.threshold, self.value)


@config
class ThresholdedReluConfig:
    """Builds a `ThresholdedRelu` (ONNX's default alpha 1.0)."""

    alpha: float = 1.0

    def init(self, device: Device | None = None) -> ThresholdedRelu:
        return ThresholdedRelu(float(self.alpha))


class ThresholdedRelu(Module):
    """``x`` where ``x > alpha``, else 0."""

    alpha: float = 1.0

    def forward(self, x: Tensor) -> Tensor:
        return A.thresholded_relu(x, self.alpha)


@config
class GluConfig:
    """Builds a `Glu` splitting along `dim` (PyTorch's default: the last)."""

    dim: int = -1

    def init(self, device: Device | None = None) -> Glu:
        return Glu(int(self.dim))


class Glu(Module):
    """``a * sigmoid(b)`` for the halves ``a, b`` of the input along `dim`."""

    dim: int = -1

    def forward(self, x: Tensor) -> Tensor:
        return A.glu(x, self.dim)


@config
class SoftminConfig:
    """Builds a `Softmin` along `dim`."""

    dim: int = -1

    def init(self, device: Device | None = None) -> Softmin:
        return Softmin(int(self.dim))


class Softmin(Module):
    """``softmax(-x, dim)``."""

    dim: int = -1

    def forward(self, x: Tensor) -> Tensor:
        return A.softmin(x, self.dim)
