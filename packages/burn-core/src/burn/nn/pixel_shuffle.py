"""`PixelShuffle` and `PixelUnshuffle` (PyTorch's layers; Shi et al., 2016): channels traded for
resolution by a reshape and a permute, no params."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["PixelShuffle", "PixelShuffleConfig", "PixelUnshuffle", "PixelUnshuffleConfig"]


def _factor(layer: str, factor: int) -> int:
    if factor < 1:
        raise ValueError(f"{layer}: the factor must be >= 1, got {factor}")
    return factor


@config
class PixelShuffleConfig:
    """Builds a `PixelShuffle` with `upscale_factor` ``r``.

    Example:
        >>> from burn import nn
        >>> shuffle = nn.PixelShuffleConfig(2).init()
        >>> shuffle(x).shape  # x: [1, 12, 4, 4]  # doctest: +SKIP
        (1, 3, 8, 8)
    """

    upscale_factor: int

    def init(self, device: Device | None = None) -> PixelShuffle:
        return PixelShuffle(_factor("PixelShuffleConfig", self.upscale_factor))


class PixelShuffle(Module):
    """``[*, C * r^2, H, W]`` -> ``[*, C, H * r, W * r]``: channel ``c * r^2 + i * r + j`` becomes
    the sub-pixel ``(i, j)`` of channel ``c``."""

    upscale_factor: int

    def forward(self, x: Tensor) -> Tensor:
        r = self.upscale_factor
        shape = x.shape
        if len(shape) < 3 or shape[-3] % (r * r):
            raise ShapeError(
                f"PixelShuffle: expected an input [*, C * {r * r}, H, W] (upscale_factor {r}), "
                f"got shape {shape}"
            )
        *lead, c, h, w = shape
        rank = len(lead)
        x = x.reshape((*lead, c // (r * r), r, r, h, w))
        # [*, C, r, r, H, W] -> [*, C, H, r, W, r]
        x = x.permute((*range(rank), rank, rank + 3, rank + 1, rank + 4, rank + 2))
        return x.reshape((*lead, c // (r * r), h * r, w * r))


@config
class PixelUnshuffleConfig:
    """Builds a `PixelUnshuffle` with `downscale_factor` ``r``, the inverse of `PixelShuffle`.

    Example:
        >>> from burn import nn
        >>> unshuffle = nn.PixelUnshuffleConfig(2).init()
        >>> unshuffle(x).shape  # x: [1, 3, 8, 8]  # doctest: +SKIP
        (1, 12, 4, 4)
    """

    downscale_factor: int

    def init(self, device: Device | None = None) -> PixelUnshuffle:
        return PixelUnshuffle(_factor("PixelUnshuffleConfig", self.downscale_factor))


class PixelUnshuffle(Module):
    """``[*, C, H * r, W * r]`` -> ``[*, C * r^2, H, W]`` (the inverse of `PixelShuffle`)."""

    downscale_factor: int

    def forward(self, x: Tensor) -> Tensor:
        r = self.downscale_factor
        shape = x.shape
        if len(shape) < 3 or shape[-2] % r or shape[-1] % r:
            raise ShapeError(
                f"PixelUnshuffle: expected an input [*, C, H * {r}, W * {r}] (downscale_factor {r}), "
                f"got shape {shape}"
            )
        *lead, c, h, w = shape
        rank = len(lead)
        x = x.reshape((*lead, c, h // r, r, w // r, r))
        # [*, C, H, r, W, r] -> [*, C, r, r, H, W]
        x = x.permute((*range(rank), rank, rank + 2, rank + 4, rank + 1, rank + 3))
        return x.reshape((*lead, c * r * r, h // r, w // r))
