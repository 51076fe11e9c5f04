"""Convolution layers: `Conv1d`, `Conv2d`, `Conv3d`, `ConvTranspose1d`, `ConvTranspose2d`,
`ConvTranspose3d`, with Burn's configs.

Weights use PyTorch's (and Burn's) layouts: ``[C_out, C_in / groups, *kernel]`` for convolutions,
``[C_in, C_out / groups, *kernel]`` for the transposed one, so PyTorch weights load unchanged.
Fans follow Burn: ``fan_in = C_in / groups * prod(kernel)``, ``fan_out = C_out / groups *
prod(kernel)`` (a transposed convolution counts its output channels as fan-in).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer, conv_fans
from burn.nn.padding import (
    PaddingConfig1d,
    PaddingConfig2d,
    PaddingConfig3d,
    resolve_conv_padding_1d,
    resolve_conv_padding_2d,
    resolve_padding_3d,
)
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = [
    "Conv1d",
    "Conv1dConfig",
    "Conv2d",
    "Conv2dConfig",
    "Conv3d",
    "Conv3dConfig",
    "ConvTranspose1d",
    "ConvTranspose1dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "ConvTranspose3d",
    "ConvTranspose3dConfig",
]


def _check_groups(layer: str, c_in: int, c_out: int, groups: int) -> None:
    if groups < 1 or c_in % groups or c_out % groups:
        raise ValueError(f"{layer}: channels ({c_in}, {c_out}) must both be divisible by groups={groups}")


def _positive(layer: str, name: str, values: tuple[int, ...]) -> None:
    if any(v < 1 for v in values):
        raise ValueError(f"{layer}: {name} must be >= 1, got {values}")


@config
class Conv1dConfig:
    """Builds a `Conv1d`: input ``[N, channels_in, L]``; `padding` is ``"valid"``, ``"same"``, an
    int, or Burn's asymmetric ``(left, right)``.

    Example:
        >>> from burn import nn
        >>> layer = nn.Conv1dConfig(2, 4, 3, padding="same").init(device)  # doctest: +SKIP
    """

    channels_in: int
    channels_out: int
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: PaddingConfig1d = "valid"
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Conv1d:
        layer = "Conv1dConfig"
        _check_groups(layer, self.channels_in, self.channels_out, self.groups)
        _positive(layer, "kernel_size, stride and dilation", (self.kernel_size, self.stride, self.dilation))
        padding = resolve_conv_padding_1d(layer, self.padding, self.kernel_size, self.dilation)
        device = resolve_device(device)
        fan_in, fan_out = conv_fans(self.channels_in, self.channels_out, (self.kernel_size,), self.groups)
        shape = (self.channels_out, self.channels_in // self.groups, self.kernel_size)
        weight = self.initializer.init_param(shape, device, fan_in, fan_out)
        bias = (
            self.initializer.init_param((self.channels_out,), device, fan_in, fan_out) if self.bias else None
        )
        return Conv1d(
            weight=weight,
            bias=bias,
            stride=self.stride,
            padding=padding,
            dilation=self.dilation,
            groups=self.groups,
        )


class Conv1d(Module):
    """1-D convolution: ``[N, C_in, L] -> [N, C_out, L_out]``.

    Attributes:
        weight: ``[C_out, C_in / groups, K]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: int = 1
    padding: int | tuple[int, int] = 0  # (left, right) when asymmetric
    dilation: int = 1
    groups: int = 1

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        return F.conv1d(
            x,
            self.weight.val(),
            None if bias is None else bias.val(),
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )


@config
class Conv2dConfig:
    """Builds a `Conv2d`: input ``[N, C_in, H, W]``.

    Attributes:
        channels: ``(C_in, C_out)``.
        kernel_size: ``(KH, KW)``.
        padding: ``"valid"``, ``"same"``, ``(PH, PW)`` or Burn's asymmetric
            ``(top, left, bottom, right)``.

    Example:
        >>> from burn import nn
        >>> layer = nn.Conv2dConfig((3, 8), (3, 3), padding="same").init(device)  # doctest: +SKIP
        >>> layer(x).shape  # x: [2, 3, 32, 32]  # doctest: +SKIP
        (2, 8, 32, 32)
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    padding: PaddingConfig2d = "valid"
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Conv2d:
        layer = "Conv2dConfig"
        c_in, c_out = self.channels
        _check_groups(layer, c_in, c_out, self.groups)
        _positive(
            layer, "kernel_size, stride and dilation", (*self.kernel_size, *self.stride, *self.dilation)
        )
        padding = resolve_conv_padding_2d(layer, self.padding, self.kernel_size, self.dilation)
        device = resolve_device(device)
        fan_in, fan_out = conv_fans(c_in, c_out, self.kernel_size, self.groups)
        shape = (c_out, c_in // self.groups, *self.kernel_size)
        weight = self.initializer.init_param(shape, device, fan_in, fan_out)
        bias = self.initializer.init_param((c_out,), device, fan_in, fan_out) if self.bias else None
        return Conv2d(
            weight=weight,
            bias=bias,
            stride=self.stride,
            padding=padding,
            dilation=self.dilation,
            groups=self.groups,
        )


class Conv2d(Module):
    """2-D convolution: ``[N, C_in, H, W] -> [N, C_out, H_out, W_out]``.

    Attributes:
        weight: ``[C_out, C_in / groups, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int] = (1, 1)
    # ((top, bottom), (left, right)) when asymmetric
    padding: tuple[int, int] | tuple[tuple[int, int], tuple[int, int]] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        return F.conv2d(
            x,
            self.weight.val(),
            None if bias is None else bias.val(),
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )


@config
class ConvTranspose2dConfig:
    """Builds a `ConvTranspose2d`: input ``[N, C_in, H, W]``, output size per axis
    ``(H - 1) * stride - 2 * padding + dilation * (K - 1) + padding_out + 1``.

    Attributes:
        channels: ``(C_in, C_out)``.
        padding_out: extra size added on one side of the output (smaller than stride or dilation).
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    padding_out: tuple[int, int] = (0, 0)
    groups: int = 1
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> ConvTranspose2d:
        layer = "ConvTranspose2dConfig"
        c_in, c_out = self.channels
        _check_groups(layer, c_in, c_out, self.groups)
        _positive(
            layer, "kernel_size, stride and dilation", (*self.kernel_size, *self.stride, *self.dilation)
        )
        device = resolve_device(device)
        fan_in, fan_out = conv_fans(c_out, c_in, self.kernel_size, self.groups)
        shape = (c_in, c_out // self.groups, *self.kernel_size)
        weight = self.initializer.init_param(shape, device, fan_in, fan_out)
        bias = self.initializer.init_param((c_out,), device, fan_in, fan_out) if self.bias else None
        return ConvTranspose2d(
            weight=weight,
            bias=bias,
            stride=self.stride,
            padding=self.padding,
            padding_out=self.padding_out,
            dilation=self.dilation,
            groups=self.groups,
        )


class ConvTranspose2d(Module):
    """2-D transposed convolution (the gradient of `Conv2d` w.r.t. its input).

    Attributes:
        weight: ``[C_in, C_out / groups, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    padding_out: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        return F.conv_transpose2d(
            x,
            self.weight.val(),
            None if bias is None else bias.val(),
            self.stride,
            self.padding,
            self.padding_out,
            self.dilation,
            self.groups,
        )


def _conv_params(
    initializer: Initializer, shape: tuple[int, ...], c_out: int, fans: tuple[int, int], bias: bool,
    device: Device | None,
) -> tuple[Param, Param | None]:
    device = resolve_device(device)
    weight = initializer.init_param(shape, device, *fans)
    return weight, initializer.init_param((c_out,), device, *fans) if bias else None


@config
class Conv3dConfig:
    """Builds a `Conv3d`: input ``[N, C_in, D, H, W]``.

    Attributes:
        channels: ``(C_in, C_out)``.
        kernel_size: ``(KD, KH, KW)``.
        padding: ``"valid"``, ``"same"`` or ``(PD, PH, PW)``.

    Example:
        >>> from burn import nn
        >>> layer = nn.Conv3dConfig((2, 4), (3, 3, 3), padding="same").init()
        >>> layer.weight.shape, layer.padding
        ((4, 2, 3, 3, 3), (1, 1, 1))
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int, int]
    stride: tuple[int, int, int] = (1, 1, 1)
    dilation: tuple[int, int, int] = (1, 1, 1)
    groups: int = 1
    padding: PaddingConfig3d = "valid"
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Conv3d:
        layer = "Conv3dConfig"
        c_in, c_out = self.channels
        _check_groups(layer, c_in, c_out, self.groups)
        _positive(
            layer, "kernel_size, stride and dilation", (*self.kernel_size, *self.stride, *self.dilation)
        )
        padding = resolve_padding_3d(layer, self.padding, self.kernel_size, self.dilation)
        fans = conv_fans(c_in, c_out, self.kernel_size, self.groups)
        shape = (c_out, c_in // self.groups, *self.kernel_size)
        weight, bias = _conv_params(self.initializer, shape, c_out, fans, self.bias, device)
        return Conv3d(
            weight=weight, bias=bias, stride=self.stride, padding=padding, dilation=self.dilation,
            groups=self.groups,
        )


class Conv3d(Module):
    """3-D convolution: ``[N, C_in, D, H, W] -> [N, C_out, D_out, H_out, W_out]``.

    Attributes:
        weight: ``[C_out, C_in / groups, KD, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    dilation: tuple[int, int, int] = (1, 1, 1)
    groups: int = 1

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        return F.conv3d(
            x,
            self.weight.val(),
            None if bias is None else bias.val(),
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )


@config
class ConvTranspose1dConfig:
    """Builds a `ConvTranspose1d`: input ``[N, C_in, L]``, output length
    ``(L - 1) * stride - 2 * padding + dilation * (K - 1) + padding_out + 1``.

    Attributes:
        channels: ``(C_in, C_out)``.
        padding_out: extra length added at the end of the output (smaller than stride or dilation).

    Example:
        >>> from burn import nn
        >>> nn.ConvTranspose1dConfig((4, 2), 3, stride=2).init().weight.shape
        (4, 2, 3)
    """

    channels: tuple[int, int]
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    padding: int = 0
    padding_out: int = 0
    groups: int = 1
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> ConvTranspose1d:
        layer = "ConvTranspose1dConfig"
        c_in, c_out = self.channels
        _check_groups(layer, c_in, c_out, self.groups)
        _positive(layer, "kernel_size, stride and dilation", (self.kernel_size, self.stride, self.dilation))
        fans = conv_fans(c_out, c_in, (self.kernel_size,), self.groups)
        shape = (c_in, c_out // self.groups, self.kernel_size)
        weight, bias = _conv_params(self.initializer, shape, c_out, fans, self.bias, device)
        return ConvTranspose1d(
            weight=weight, bias=bias, stride=self.stride, padding=self.padding, padding_out=self.padding_out,
            dilation=self.dilation, groups=self.groups,
        )


class ConvTranspose1d(Module):
    """1-D transposed convolution (the gradient of `Conv1d` w.r.t. its input).

    Attributes:
        weight: ``[C_in, C_out / groups, K]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: int = 1
    padding: int = 0
    padding_out: int = 0
    dilation: int = 1
    groups: int = 1

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        return F.conv_transpose1d(
            x,
            self.weight.val(),
            None if bias is None else bias.val(),
            self.stride,
            self.padding,
            self.padding_out,
            self.dilation,
            self.groups,
        )


@config
class ConvTranspose3dConfig:
    """Builds a `ConvTranspose3d`: input ``[N, C_in, D, H, W]``, output size per axis
    ``(D - 1) * stride - 2 * padding + dilation * (K - 1) + padding_out + 1``.

    Example:
        >>> from burn import nn
        >>> nn.ConvTranspose3dConfig((4, 2), (2, 2, 2), stride=(2, 2, 2)).init().weight.shape
        (4, 2, 2, 2, 2)
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int, int]
    stride: tuple[int, int, int] = (1, 1, 1)
    dilation: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    padding_out: tuple[int, int, int] = (0, 0, 0)
    groups: int = 1
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> ConvTranspose3d:
        layer = "ConvTranspose3dConfig"
        c_in, c_out = self.channels
        _check_groups(layer, c_in, c_out, self.groups)
        _positive(
            layer, "kernel_size, stride and dilation", (*self.kernel_size, *self.stride, *self.dilation)
        )
        fans = conv_fans(c_out, c_in, self.kernel_size, self.groups)
        shape = (c_in, c_out // self.groups, *self.kernel_size)
        weight, bias = _conv_params(self.initializer, shape, c_out, fans, self.bias, device)
        return ConvTranspose3d(
            weight=weight, bias=bias, stride=self.stride, padding=self.padding, padding_out=self.padding_out,
            dilation=self.dilation, groups=self.groups,
        )


class ConvTranspose3d(Module):
    """3-D transposed convolution (the gradient of `Conv3d` w.r.t. its input).

    Attributes:
        weight: ``[C_in, C_out / groups, KD, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    padding_out: tuple[int, int, int] = (0, 0, 0)
    dilation: tuple[int, int, int] = (1, 1, 1)
    groups: int = 1

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        return F.conv_transpose3d(
            x,
            self.weight.val(),
            None if bias is None else bias.val(),
            self.stride,
            self.padding,
            self.padding_out,
            self.dilation,
            self.groups,
        )
