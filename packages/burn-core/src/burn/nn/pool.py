"""Pooling layers: max, average and adaptive average pooling in 1-D, 2-D and 3-D (no params).

As in Burn, the configs' strides default to 1 (not to the kernel size, as PyTorch's do), and
``padding`` is ``"valid"``, ``"same"`` or explicit (at most half the kernel). ``ceil_mode``
(Burn's and PyTorch's option, default False) keeps a last partial window when it starts inside
the input or the left padding; average pooling divides it by what it covers of the input (and of
the padding with ``count_include_pad``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.nn.padding import (
    PaddingConfig1d,
    PaddingConfig2d,
    PaddingConfig3d,
    resolve_padding_1d,
    resolve_padding_2d,
    resolve_padding_3d,
)
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool1dConfig",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig",
    "AdaptiveAvgPool3d",
    "AdaptiveAvgPool3dConfig",
    "AvgPool1d",
    "AvgPool1dConfig",
    "AvgPool2d",
    "AvgPool2dConfig",
    "AvgPool3d",
    "AvgPool3dConfig",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
    "MaxPool3d",
    "MaxPool3dConfig",
]


@config
class MaxPool1dConfig:
    """Builds a `MaxPool1d` over ``[N, C, L]``.

    The stride defaults to 1 (Burn's default), not to the kernel size as in PyTorch's
    ``nn.MaxPool1d(2)``: give ``stride=2`` for PyTorch's halving pool.

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
    ceil_mode: bool = False

    def init(self, device: Device | None = None) -> MaxPool1d:
        """The layer (`device` is accepted for symmetry; there are no params)."""
        padding = resolve_padding_1d("MaxPool1dConfig", self.padding, self.kernel_size, self.dilation)
        return MaxPool1d(self.kernel_size, self.stride, padding, self.dilation, self.ceil_mode)


class MaxPool1d(Module):
    """1-D max pooling: ``[N, C, L] -> [N, C, L_out]`` (padding counts as -inf)."""

    kernel_size: int
    stride: int = 1
    padding: int = 0
    dilation: int = 1
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool1d(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


@config
class MaxPool2dConfig:
    """Builds a `MaxPool2d` over ``[N, C, H, W]``.

    The strides default to ``(1, 1)`` (Burn's default), not to the kernel size as in PyTorch's
    ``nn.MaxPool2d(2)``: ``MaxPool2dConfig((2, 2))`` keeps H and W almost whole; give
    ``strides=(2, 2)`` for PyTorch's halving pool.

    Example:
        >>> from burn import nn
        >>> nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init().stride
        (2, 2)
    """

    kernel_size: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    padding: PaddingConfig2d = "valid"
    dilation: tuple[int, int] = (1, 1)
    ceil_mode: bool = False

    def init(self, device: Device | None = None) -> MaxPool2d:
        padding = resolve_padding_2d("MaxPool2dConfig", self.padding, self.kernel_size, self.dilation)
        return MaxPool2d(self.kernel_size, self.strides, padding, self.dilation, self.ceil_mode)


class MaxPool2d(Module):
    """2-D max pooling: ``[N, C, H, W] -> [N, C, H_out, W_out]``."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


@config
class MaxPool3dConfig:
    """Builds a `MaxPool3d` over ``[N, C, D, H, W]``.

    Example:
        >>> from burn import nn
        >>> nn.MaxPool3dConfig((2, 2, 2), strides=(2, 2, 2), ceil_mode=True).init().stride
        (2, 2, 2)
    """

    kernel_size: tuple[int, int, int]
    strides: tuple[int, int, int] = (1, 1, 1)
    padding: PaddingConfig3d = "valid"
    dilation: tuple[int, int, int] = (1, 1, 1)
    ceil_mode: bool = False

    def init(self, device: Device | None = None) -> MaxPool3d:
        padding = resolve_padding_3d("MaxPool3dConfig", self.padding, self.kernel_size, self.dilation)
        return MaxPool3d(self.kernel_size, self.strides, padding, self.dilation, self.ceil_mode)


class MaxPool3d(Module):
    """3-D max pooling: ``[N, C, D, H, W] -> [N, C, D_out, H_out, W_out]`` (padding counts as -inf)."""

    kernel_size: tuple[int, int, int]
    stride: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    dilation: tuple[int, int, int] = (1, 1, 1)
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool3d(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


@config
class AvgPool1dConfig:
    """Builds an `AvgPool1d` over ``[N, C, L]``; with `count_include_pad` zero padding counts in
    the divisor. The stride defaults to 1 (Burn's), not to the kernel size (PyTorch's)."""

    kernel_size: int
    stride: int = 1
    padding: PaddingConfig1d = "valid"
    count_include_pad: bool = True
    ceil_mode: bool = False

    def init(self, device: Device | None = None) -> AvgPool1d:
        padding = resolve_padding_1d("AvgPool1dConfig", self.padding, self.kernel_size)
        return AvgPool1d(self.kernel_size, self.stride, padding, self.count_include_pad, self.ceil_mode)


class AvgPool1d(Module):
    """1-D average pooling: ``[N, C, L] -> [N, C, L_out]``."""

    kernel_size: int
    stride: int = 1
    padding: int = 0
    count_include_pad: bool = True
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool1d(
            x, self.kernel_size, self.stride, self.padding, self.count_include_pad, self.ceil_mode
        )


@config
class AvgPool2dConfig:
    """Builds an `AvgPool2d` over ``[N, C, H, W]``. The strides default to ``(1, 1)`` (Burn's), not
    to the kernel size (PyTorch's): give ``strides=kernel_size`` for PyTorch's pool."""

    kernel_size: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    padding: PaddingConfig2d = "valid"
    count_include_pad: bool = True
    ceil_mode: bool = False

    def init(self, device: Device | None = None) -> AvgPool2d:
        padding = resolve_padding_2d("AvgPool2dConfig", self.padding, self.kernel_size)
        return AvgPool2d(self.kernel_size, self.strides, padding, self.count_include_pad, self.ceil_mode)


class AvgPool2d(Module):
    """2-D average pooling: ``[N, C, H, W] -> [N, C, H_out, W_out]``."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    count_include_pad: bool = True
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(
            x, self.kernel_size, self.stride, self.padding, self.count_include_pad, self.ceil_mode
        )


@config
class AvgPool3dConfig:
    """Builds an `AvgPool3d` over ``[N, C, D, H, W]``.

    Example:
        >>> from burn import nn
        >>> nn.AvgPool3dConfig((1, 2, 2), strides=(1, 2, 2)).init().kernel_size
        (1, 2, 2)
    """

    kernel_size: tuple[int, int, int]
    strides: tuple[int, int, int] = (1, 1, 1)
    padding: PaddingConfig3d = "valid"
    count_include_pad: bool = True
    ceil_mode: bool = False

    def init(self, device: Device | None = None) -> AvgPool3d:
        padding = resolve_padding_3d("AvgPool3dConfig", self.padding, self.kernel_size)
        return AvgPool3d(self.kernel_size, self.strides, padding, self.count_include_pad, self.ceil_mode)


class AvgPool3d(Module):
    """3-D average pooling: ``[N, C, D, H, W] -> [N, C, D_out, H_out, W_out]``."""

    kernel_size: tuple[int, int, int]
    stride: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    count_include_pad: bool = True
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool3d(
            x, self.kernel_size, self.stride, self.padding, self.count_include_pad, self.ceil_mode
        )


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


@config
class AdaptiveAvgPool3dConfig:
    """Builds an `AdaptiveAvgPool3d` with output ``(D_out, H_out, W_out)`` (PyTorch's bins).

    Example:
        >>> from burn import nn
        >>> nn.AdaptiveAvgPool3dConfig((1, 1, 1)).init().output_size
        (1, 1, 1)
    """

    output_size: tuple[int, int, int]

    def init(self, device: Device | None = None) -> AdaptiveAvgPool3d:
        return AdaptiveAvgPool3d(self.output_size)


class AdaptiveAvgPool3d(Module):
    """``[N, C, D, H, W] -> [N, C, *output_size]``."""

    output_size: tuple[int, int, int]

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(x, self.output_size)
