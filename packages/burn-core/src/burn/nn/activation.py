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
    "Gelu",
    "HardSigmoid",
    "HardSigmoidConfig",
    "LeakyRelu",
    "LeakyReluConfig",
    "Mish",
    "PRelu",
    "PReluConfig",
    "Relu",
    "Sigmoid",
    "Silu",
    "Softplus",
    "SoftplusConfig",
    "SwiGlu",
    "SwiGluConfig",
    "Tanh",
]


class Relu(Module):
    """``max(x, 0)``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.relu(x)


class Gelu(Module):
    """Exact GELU, ``x * Phi(x)``."""

    def forward(self, x: Tensor) -> Tensor:
        return A.gelu(x)


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
