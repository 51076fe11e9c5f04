"""Normalization layers: `BatchNorm`, `LayerNorm`, `GroupNorm`, `InstanceNorm`, `RmsNorm`,
`LocalResponseNorm`.

`BatchNorm` follows Burn (and PyTorch): while training it normalizes with the batch statistics
(biased variance) and updates ``running = (1 - momentum) * running + momentum * batch`` (the
running variance takes the unbiased batch variance); at inference it uses the running statistics,
which then never change. The running statistics are `Param`s that never require a gradient:
they are saved, loaded and moved with the module but never enter the autodiff graph.

When it trains: in training mode (``module.train()``) always, in evaluation mode
(``module.eval()``) never — that is fine-tuning with frozen statistics, gradients still flow.
With no explicit mode (Burn's rule) it trains when its input lives on an autodiff backend and its
``gamma`` requires a gradient, so ``model.valid()`` switches it to inference and a module frozen
with ``no_grad()`` does not update its statistics behind the user's back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import Ones, Zeros
from burn.tensor import autocast as _amp
from burn.tensor.module import norm as _F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = [
    "BatchNorm",
    "BatchNormConfig",
    "GroupNorm",
    "GroupNormConfig",
    "InstanceNorm",
    "InstanceNormConfig",
    "LayerNorm",
    "LayerNormConfig",
    "LocalResponseNorm",
    "LocalResponseNormConfig",
    "RmsNorm",
    "RmsNormConfig",
]


def _ones(n: int, device: Device, require_grad: bool = True) -> Param:
    return Ones().init_param((n,), device, require_grad=require_grad)


def _zeros(n: int, device: Device, require_grad: bool = True) -> Param:
    return Zeros().init_param((n,), device, require_grad=require_grad)


# -- BatchNorm ------------------------------------------------------------------------------------
@config
class BatchNormConfig:
    """Builds a `BatchNorm` over inputs ``[N, num_features, ...]`` (1-D, 2-D, 3-D alike).

    Example:
        >>> from burn import nn
        >>> bn = nn.BatchNormConfig(16).init(device)  # doctest: +SKIP
    """

    num_features: int
    epsilon: float = 1e-5
    momentum: float = 0.1

    def init(self, device: Device | None = None) -> BatchNorm:
        device = resolve_device(device)
        n = self.num_features
        return BatchNorm(
            gamma=_ones(n, device),
            beta=_zeros(n, device),
            running_mean=_zeros(n, device, require_grad=False),
            running_var=_ones(n, device, require_grad=False),
            momentum=float(self.momentum),
            epsilon=float(self.epsilon),
        )


class BatchNorm(Module):
    """Batch normalization over dim 1 of ``[N, C, ...]``.

    Attributes:
        gamma, beta: learnable scale and shift ``[C]``.
        running_mean, running_var: ``[C]`` statistics (no gradient), replaced on the module
            itself by each training forward, as Burn's running state is.

    Example:
        >>> from burn import nn
        >>> bn = nn.BatchNormConfig(8).init(device)  # doctest: +SKIP
        >>> frozen = bn.eval()  # running statistics, never updated; gradients still flow  # doctest: +SKIP
    """

    gamma: Param
    beta: Param
    running_mean: Param
    running_var: Param
    momentum: float = 0.1
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        if _amp.active:
            x = _amp.full_precision("batch_norm", x)
        shape = x.shape
        channels = self.gamma.shape[0]
        if len(shape) < 2 or shape[1] != channels:
            raise ShapeError(f"BatchNorm: expected an input [N, {channels}, ...], got shape {shape}")
        stat = (1, channels) + (1,) * (len(shape) - 2)
        if self._trains(x):
            return self._forward_train(x, shape, stat)
        # Inference: fold the statistics into one scale and one shift per channel.
        scale = self.gamma.val() / (self.running_var.val() + self.epsilon).sqrt()
        shift = self.beta.val() - self.running_mean.val() * scale
        return x * scale.reshape(stat) + shift.reshape(stat)

    def _trains(self, x: Tensor) -> bool:
        mode = self.training_mode
        if mode is not None:
            return mode
        return bool(x._b.ad_enabled) and self.gamma.require_grad

    def _forward_train(self, x: Tensor, shape: tuple[int, ...], stat: tuple[int, ...]) -> Tensor:
        channels = stat[1]
        count = x.num_elements() // channels
        if count < 2:
            raise ShapeError(
                f"BatchNorm: training needs more than one value per channel, got input shape {shape}"
            )
        flat = x.swap_dims(0, 1).reshape((channels, count))
        mean = flat.mean_dim(1)  # [C, 1]
        centered = flat - mean
        var = (centered * centered).mean_dim(1)  # biased, used to normalize
        out = (x - mean.reshape(stat)) / (var.reshape(stat) + self.epsilon).sqrt()
        out = out * self.gamma.val().reshape(stat) + self.beta.val().reshape(stat)

        m = self.momentum
        batch_mean = mean.detach().reshape((channels,))
        batch_var = var.detach().reshape((channels,)) * (count / (count - 1))
        running_mean = self.running_mean.val().detach() * (1.0 - m) + batch_mean * m
        running_var = self.running_var.val().detach() * (1.0 - m) + batch_var * m
        self.running_mean = Param(self.running_mean.id, running_mean, False)
        self.running_var = Param(self.running_var.id, running_var, False)
        return out


# -- LayerNorm ------------------------------------------------------------------------------------
@config
class LayerNormConfig:
    """Builds a `LayerNorm` over the last dim (size `d_model`).

    Example:
        >>> from burn import nn
        >>> ln = nn.LayerNormConfig(32).init(device)  # doctest: +SKIP
    """

    d_model: int
    epsilon: float = 1e-5
    bias: bool = True

    def init(self, device: Device | None = None) -> LayerNorm:
        device = resolve_device(device)
        beta = _zeros(self.d_model, device) if self.bias else None
        return LayerNorm(gamma=_ones(self.d_model, device), beta=beta, epsilon=float(self.epsilon))


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over the last dim (biased variance).

    Attributes:
        gamma: ``[d_model]``.
        beta: ``[d_model]``, or None when built with ``bias=False`` (PyTorch's ``bias=False``).
    """

    gamma: Param
    beta: Param | None
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        if _amp.active:
            x = _amp.full_precision("layer_norm", x)
        gamma = self.gamma.val()
        beta = None if self.beta is None else self.beta.val()
        if x.dtype is gamma.dtype and (beta is None or beta.dtype is x.dtype):
            return _F.layer_norm(x, gamma, beta, epsilon=self.epsilon)  # one op (backend kernel)
        # params of another dtype widen x (the contract's promotion): composed of float ops
        centered = x - x.mean_dim(-1)
        var = (centered * centered).mean_dim(-1)
        out = centered / (var + self.epsilon).sqrt() * self.gamma.val()
        return out if self.beta is None else out + self.beta.val()


# -- GroupNorm ------------------------------------------------------------------------------------
@config
class GroupNormConfig:
    """Builds a `GroupNorm`: `num_channels` split into `num_groups` groups, each normalized on
    its own; `affine` adds a per-channel gamma and beta."""

    num_groups: int
    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def init(self, device: Device | None = None) -> GroupNorm:
        if self.num_groups < 1 or self.num_channels % self.num_groups:
            raise ValueError(
                f"GroupNormConfig: num_channels {self.num_channels} must be divisible by "
                f"num_groups {self.num_groups}"
            )
        device = resolve_device(device)
        gamma = _ones(self.num_channels, device) if self.affine else None
        beta = _zeros(self.num_channels, device) if self.affine else None
        return GroupNorm(
            gamma=gamma,
            beta=beta,
            num_groups=self.num_groups,
            num_channels=self.num_channels,
            epsilon=float(self.epsilon),
        )


class GroupNorm(Module):
    """Group normalization of ``[N, C, ...]``: statistics per sample and group of channels.

    Attributes:
        gamma, beta: ``[C]``, or None when not affine.
    """

    gamma: Param | None
    beta: Param | None
    num_groups: int
    num_channels: int
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        if _amp.active:
            x = _amp.full_precision("group_norm", x)
        shape = x.shape
        if len(shape) < 2 or shape[1] != self.num_channels:
            raise ShapeError(f"GroupNorm: expected an input [N, {self.num_channels}, ...], got shape {shape}")
        grouped = x.reshape((shape[0], self.num_groups, -1))
        centered = grouped - grouped.mean_dim(2)
        var = (centered * centered).mean_dim(2)
        out = (centered / (var + self.epsilon).sqrt()).reshape(shape)
        if self.gamma is None or self.beta is None:
            return out
        stat = (1, self.num_channels) + (1,) * (len(shape) - 2)
        return out * self.gamma.val().reshape(stat) + self.beta.val().reshape(stat)


# -- InstanceNorm ---------------------------------------------------------------------------------
@config
class InstanceNormConfig:
    """Builds an `InstanceNorm` over inputs ``[N, num_channels, ...]`` (1-D, 2-D, 3-D alike).

    `affine` defaults to True as in Burn (PyTorch's ``InstanceNorm*d`` defaults to False and
    keeps no running statistics, as here).

    Example:
        >>> from burn import nn
        >>> norm = nn.InstanceNormConfig(16, affine=False).init(device)  # doctest: +SKIP
        >>> norm(x).shape  # x: [2, 16, 8, 8]  # doctest: +SKIP
        (2, 16, 8, 8)
    """

    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def init(self, device: Device | None = None) -> InstanceNorm:
        if self.num_channels < 1:
            raise ValueError(f"InstanceNormConfig: num_channels must be >= 1, got {self.num_channels}")
        device = resolve_device(device)
        gamma = _ones(self.num_channels, device) if self.affine else None
        beta = _zeros(self.num_channels, device) if self.affine else None
        return InstanceNorm(
            gamma=gamma, beta=beta, num_channels=self.num_channels, epsilon=float(self.epsilon)
        )


class InstanceNorm(Module):
    """Instance normalization of ``[N, C, ...]``: statistics per sample and channel over the
    spatial dims (biased variance), then an optional per-channel ``gamma`` and ``beta``.

    Attributes:
        gamma, beta: ``[C]``, or None when not affine (PyTorch's ``weight`` / ``bias``).
    """

    gamma: Param | None
    beta: Param | None
    num_channels: int
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        if len(shape) < 3 or shape[1] != self.num_channels:
            raise ShapeError(
                f"InstanceNorm: expected an input [N, {self.num_channels}, ...] with spatial dims, "
                f"got shape {shape}"
            )
        flat = x.reshape((shape[0], shape[1], -1))
        centered = flat - flat.mean_dim(2)
        var = (centered * centered).mean_dim(2)
        out = (centered / (var + self.epsilon).sqrt()).reshape(shape)
        if self.gamma is None or self.beta is None:
            return out
        stat = (1, self.num_channels) + (1,) * (len(shape) - 2)
        return out * self.gamma.val().reshape(stat) + self.beta.val().reshape(stat)


# -- LocalResponseNorm ----------------------------------------------------------------------------
@config
class LocalResponseNormConfig:
    """Builds a `LocalResponseNorm` over `size` neighbouring channels (PyTorch's defaults).

    Example:
        >>> from burn import nn
        >>> lrn = nn.LocalResponseNormConfig(5).init()
        >>> lrn.size, lrn.alpha, lrn.beta, lrn.k
        (5, 0.0001, 0.75, 1.0)
    """

    size: int
    alpha: float = 1e-4
    beta: float = 0.75
    k: float = 1.0

    def init(self, device: Device | None = None) -> LocalResponseNorm:
        if self.size < 1:
            raise ValueError(f"LocalResponseNormConfig: size must be >= 1, got {self.size}")
        return LocalResponseNorm(
            size=self.size, alpha=float(self.alpha), beta=float(self.beta), k=float(self.k)
        )


class LocalResponseNorm(Module):
    """``x / (k + alpha / size * sum of x^2 over the channel window) ** beta`` for ``[N, C, ...]``
    (Krizhevsky et al., 2012; PyTorch's ``nn.LocalResponseNorm``).

    The window of channel ``c`` is ``[c - size // 2, c + (size - 1) // 2]``; channels beyond
    the edges count as zeros (the sum is still divided by `size`). No params.
    """

    size: int
    alpha: float = 1e-4
    beta: float = 0.75
    k: float = 1.0

    def forward(self, x: Tensor) -> Tensor:
        from burn.tensor.tensor import Tensor

        shape = x.shape
        if len(shape) < 3:
            raise ShapeError(
                f"LocalResponseNorm: expected an input [N, C, ...] of rank >= 3, got shape {shape}"
            )
        n, c = shape[0], shape[1]
        sq = (x * x).reshape((n, c, -1))
        before, after = self.size // 2, (self.size - 1) // 2
        parts = [sq]
        if before or after:
            rest = sq.shape[2]

            def zeros(count: int) -> list[Tensor]:
                if not count:
                    return []
                return [Tensor.zeros((n, count, rest), x.device, dtype=x.dtype, backend=x.backend)]

            parts = zeros(before) + parts + zeros(after)
        padded = Tensor.cat(parts, 1) if len(parts) > 1 else sq
        window = padded.slice([None, (0, c)])
        for j in range(1, self.size):
            window = window + padded.slice([None, (j, j + c)])
        div = (window * (self.alpha / self.size) + self.k).powf_scalar(self.beta)
        return x / div.reshape(shape)


# -- RmsNorm --------------------------------------------------------------------------------------
@config
class RmsNormConfig:
    """Builds an `RmsNorm` over the last dim (size `d_model`).

    `epsilon` defaults to 1e-5 (Burn's); PyTorch's ``nn.RMSNorm(eps=None)`` uses the machine
    epsilon of the input's dtype (about 1.2e-7 in float32, 2.2e-16 in float64): pass it to match.

    Example:
        >>> from burn import nn
        >>> nn.RmsNormConfig(8).epsilon
        1e-05
    """

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device | None = None) -> RmsNorm:
        if self.epsilon <= 0:
            raise ValueError(f"RmsNormConfig: epsilon must be positive, got {self.epsilon}")
        device = resolve_device(device)
        return RmsNorm(gamma=_ones(self.d_model, device), epsilon=float(self.epsilon))


class RmsNorm(Module):
    """``x / sqrt(mean(x^2) + epsilon) * gamma`` over the last dim (Zhang & Sennrich, 2019).

    Attributes:
        gamma: ``[d_model]``.
    """

    gamma: Param
    epsilon: float = 1e-5

    def forward(self, x: Tensor) -> Tensor:
        if _amp.active:
            x = _amp.full_precision("rms_norm", x)
        rms = ((x * x).mean_dim(-1) + self.epsilon).sqrt()
        return x / rms * self.gamma.val()
