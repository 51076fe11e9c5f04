"""`DeformConv2d`: deformable 2-D convolution (v1, and v2 with a modulation mask), Burn's layer.

The offsets (and mask) are inputs of `forward`, usually computed by an ordinary `Conv2d` from the
same input, as in the papers (Dai et al., 2017; Zhu et al., 2019). Semantics and layouts are
torchvision's ``deform_conv2d`` (see `burn.tensor.module.deform_conv2d`); the weight layout is
``[C_out, C_in / weight_groups, KH, KW]``, as `Conv2d`'s, so PyTorch weights load unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer, conv_fans
from burn.nn.padding import PaddingConfig2d, resolve_padding_2d
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["DeformConv2d", "DeformConv2dConfig"]


@config
class DeformConv2dConfig:
    """Builds a `DeformConv2d`: input ``[N, C_in, H, W]``.

    Attributes:
        channels: ``(C_in, C_out)``.
        kernel_size: ``(KH, KW)``.
        weight_groups: groups of the convolution (`Conv2d`'s ``groups``).
        offset_groups: input channels split into this many groups, each with its own offsets.
        padding: ``"valid"``, ``"same"`` or ``(PH, PW)``.

    Example:
        >>> from burn import nn
        >>> layer = nn.DeformConv2dConfig((4, 8), (3, 3), padding="same").init(device)  # doctest: +SKIP
        >>> offsets = nn.Conv2dConfig((4, 18), (3, 3), padding="same").init(device)  # doctest: +SKIP
        >>> layer(x, offsets(x)).shape  # x: [2, 4, 16, 16]  # doctest: +SKIP
        (2, 8, 16, 16)
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    weight_groups: int = 1
    offset_groups: int = 1
    padding: PaddingConfig2d = "valid"
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> DeformConv2d:
        layer = "DeformConv2dConfig"
        c_in, c_out = self.channels
        if self.weight_groups < 1 or c_in % self.weight_groups or c_out % self.weight_groups:
            raise ValueError(
                f"{layer}: channels ({c_in}, {c_out}) must both be divisible by "
                f"weight_groups={self.weight_groups}"
            )
        if self.offset_groups < 1 or c_in % self.offset_groups:
            raise ValueError(
                f"{layer}: {c_in} input channels must be divisible by offset_groups={self.offset_groups}"
            )
        sizes = (*self.kernel_size, *self.stride, *self.dilation)
        if any(v < 1 for v in sizes):
            raise ValueError(f"{layer}: kernel_size, stride and dilation must be >= 1, got {sizes}")
        padding = resolve_padding_2d(layer, self.padding, self.kernel_size, self.dilation)
        device = resolve_device(device)
        fan_in, fan_out = conv_fans(c_in, c_out, self.kernel_size, self.weight_groups)
        shape = (c_out, c_in // self.weight_groups, *self.kernel_size)
        weight = self.initializer.init_param(shape, device, fan_in, fan_out)
        bias = self.initializer.init_param((c_out,), device, fan_in, fan_out) if self.bias else None
        return DeformConv2d(
            weight=weight,
            bias=bias,
            stride=self.stride,
            padding=padding,
            dilation=self.dilation,
            weight_groups=self.weight_groups,
            offset_groups=self.offset_groups,
        )


class DeformConv2d(Module):
    """Deformable 2-D convolution: ``[N, C_in, H, W]`` with offsets ``[N, 2 * G * KH * KW, OH, OW]``
    (and a mask ``[N, G * KH * KW, OH, OW]``) -> ``[N, C_out, OH, OW]``, ``G = offset_groups``.

    Attributes:
        weight: ``[C_out, C_in / weight_groups, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    weight_groups: int = 1
    offset_groups: int = 1

    def forward(self, x: Tensor, offset: Tensor, mask: Tensor | None = None) -> Tensor:
        bias = self.bias
        return F.deform_conv2d(
            x,
            offset,
            self.weight.val(),
            mask,
            None if bias is None else bias.val(),
            self.stride,
            self.padding,
            self.dilation,
            self.weight_groups,
            self.offset_groups,
        )
