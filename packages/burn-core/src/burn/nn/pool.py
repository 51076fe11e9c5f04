"""Pooling layers: max, average and adaptive average pooling in 1-D and 2-D (no params).

As in Burn, the configs' strides default to 1 (not to the kernel size, as PyTorch's do), and
``padding`` is ``"valid"``, ``"same"`` or explicit (at most half the kernel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.nn.padding import PaddingConfig1d, PaddingConfig2d, resolve_padding_1d, resolve_padding_2d
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool1dConfig",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig",
    "AvgPool1d",
    "AvgPool1dConfig",
    "AvgPool2d",
    "AvgPool2dConfig",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
]


@config
class MaxPool1dConfig:
    """Builds a `MaxPool1d` over ``[N, C, L]``.

    Example:
        >>> from burn import nn
        >>> pool = nn.MaxPool1dConfig(2, stride=2).init()
        >>> pool.kernel_size, pool.stride
        (2, 2)
    """

    kernel_size: int
    stride: int = 1
    padding: PaddingConfig1d = "valid"
    dilation: int = 1

    def init(self, device: Device | None = None) -> MaxPool1d:
        """The layer (`device` is accepted for symmetry; there are no params)."""
        padding = resolve_padding_1d("MaxPool1dConfig", self.padding, self.kernel_size, self.dilation)
        return MaxPool1d(self.kernel_size, self.stride, padding, self.dilation)


class MaxPool1d(Module):
    """1-D max pooling: ``[N, C, L] -> [N, C, L_out]`` (padding counts as -inf)."""

    kernel_size: int
    stride: int = 1
    padding: int = 0
    dilation: int = 1

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool1d(x, self.kernel_size, self.stride, self.padding, self.dilation)


@config
class MaxPool2dConfig:
    """Builds a `MaxPool2d` over ``[N, C, H, W]``.

    Example:
        >>> from burn import nn
        >>> nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init().stride
        (2, 2)
    """

    kernel_size: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    padding: PaddingConfig2d = "valid"
    dilation: tuple[int, int] = (1, 1)

    def init(self, device: Device | None = None) -> MaxPool2d:
        padding = resolve_padding_2d("MaxPool2dConfig", self.padding, self.kernel_size, self.dilation)
        return MaxPool2d(self.kernel_size, self.strides, padding, self.dilation)


class MaxPool2d(Module):
    """2-D max pooling: ``[N, C, H, W] -> [N, C, H_out, W_out]``."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)


@config
class AvgPool1dConfig:
    """Builds an `AvgPool1d` over ``[N, C, L]``; with `count_include_pad` zero padding counts in
    the divisor."""

    kernel_size: int
    stride: int = 1
    padding: PaddingConfig1d = "valid"
    count_include_pad: bool = True

    def init(self, device: Device | None = None) -> AvgPool1d:
        padding = resolve_padding_1d("AvgPool1dConfig", self.padding, self.kernel_size)
        return AvgPool1d(self.kernel_size, self.stride, padding, self.count_include_pad)


class AvgPool1d(Module):
    """1-D average pooling: ``[N, C, L] -> [N, C, L_out]``."""

    kernel_size: int
    stride: int = 1
    padding: int = 0
    count_include_pad: bool = True

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.count_include_pad)


@config
class AvgPool2dConfig:
    """Builds an `AvgPool2d` over ``[N, C, H, W]``."""

    kernel_size: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    padding: PaddingConfig2d = "valid"
    count_include_pad: bool = True

    def init(self, device: Device | None = None) -> AvgPool2d:
        padding = resolve_padding_2d("AvgPool2dConfig", self.padding, self.kernel_size)
        return AvgPool2d(self.kernel_size, self.strides, padding, self.count_include_pad)


class AvgPool2d(Module):
    """2-D average pooling: ``[N, C, H, W] -> [N, C, H_out, W_out]``."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    count_include_pad: bool = True

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.count_include_pad)


@config
class AdaptiveAvgPool1dConfig:
    """Builds an `AdaptiveAvgPool1d` (PyTorch's bins) with output length `output_size`."""

    output_size: int

    def init(self, device: Device | None = None) -> AdaptiveAvgPool1d:
        return AdaptiveAvgPool1d(self.output_size)


class AdaptiveAvgPool1d(Module):
    """``[N, C, L] -> [N, C, output_size]``."""

    output_size: int

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(x, self.output_size)


@config
class AdaptiveAvgPool2dConfig:
    """Builds an `AdaptiveAvgPool2d` with output ``(H_out, W_out)``."""

    output_size: tuple[int, int]

    def init(self, device: Device | None = None) -> AdaptiveAvgPool2d:
        return AdaptiveAvgPool2d(self.output_size)


class AdaptiveAvgPool2d(Module):
    """``[N, C, H, W] -> [N, C, *output_size]``."""

    output_size: tuple[int, int]

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)
