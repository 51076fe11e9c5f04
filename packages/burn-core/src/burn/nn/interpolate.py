"""Resizing layers: `Interpolate1d` (``[N, C, L]``) and `Interpolate2d` (``[N, C, H, W]``), Burn's
modules over `burn.tensor.module.interpolate`.

Give an output size or a scale factor (the output size is then ``floor(size * scale)``).
`align_corners` defaults to False, PyTorch's default (Burn's modules use True): see the
differences page of the docs.

Example:
    >>> from burn import nn
    >>> up = nn.Interpolate2dConfig(scale_factor=2.0, mode="bilinear").init()
    >>> up.scale_factor, up.mode
    ((2.0, 2.0), 'bilinear')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.tensor.module.sampling import INTERPOLATE_MODES, interpolate

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["Interpolate1d", "Interpolate1dConfig", "Interpolate2d", "Interpolate2dConfig"]


def _check(name: str, output_size: object, scale_factor: object, mode: str) -> None:
    if (output_size is None) == (scale_factor is None):
        raise ValueError(f"{name}: give exactly one of output_size and scale_factor")
    if mode not in INTERPOLATE_MODES:
        raise ValueError(f"{name}: mode must be one of {tuple(INTERPOLATE_MODES)}, got {mode!r}")


def _pair(value: float | Sequence[float], cast: type) -> tuple:
    if isinstance(value, Sequence):
        if len(value) != 2:
            raise ValueError(f"expected a number or a pair, got {value!r}")
        return (cast(value[0]), cast(value[1]))
    return (cast(value), cast(value))


@config
class Interpolate1dConfig:
    """Builds an `Interpolate1d`.

    Attributes:
        output_size: the output length (or give `scale_factor`).
        scale_factor: the output length is ``floor(length * scale_factor)``.
        mode: ``"nearest"``, ``"nearest-exact"``, ``"linear"`` or ``"cubic"``.
        align_corners: PyTorch's meaning; used by linear and cubic.
    """

    output_size: int | None = None
    scale_factor: float | None = None
    mode: str = "nearest"
    align_corners: bool = False

    def init(self, device: Device | None = None) -> Interpolate1d:
        _check("Interpolate1dConfig", self.output_size, self.scale_factor, self.mode)
        return Interpolate1d(
            output_size=None if self.output_size is None else int(self.output_size),
            scale_factor=None if self.scale_factor is None else float(self.scale_factor),
            mode=self.mode,
            align_corners=bool(self.align_corners),
        )


class Interpolate1d(Module):
    """Resizes ``[N, C, L]`` inputs along L (no params)."""

    output_size: int | None = None
    scale_factor: float | None = None
    mode: str = "nearest"
    align_corners: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return interpolate(x, self.output_size, self.mode, self.align_corners, self.scale_factor)


@config
class Interpolate2dConfig:
    """Builds an `Interpolate2d`.

    Attributes:
        output_size: ``(height, width)`` or one int for both (or give `scale_factor`).
        scale_factor: a number or a ``(height, width)`` pair of scales.
        mode: ``"nearest"``, ``"nearest-exact"``, ``"bilinear"`` or ``"bicubic"``.
        align_corners: PyTorch's meaning; used by bilinear and bicubic.
    """

    output_size: int | tuple[int, int] | None = None
    scale_factor: float | tuple[float, float] | None = None
    mode: str = "nearest"
    align_corners: bool = False

    def init(self, device: Device | None = None) -> Interpolate2d:
        _check("Interpolate2dConfig", self.output_size, self.scale_factor, self.mode)
        return Interpolate2d(
            output_size=None if self.output_size is None else _pair(self.output_size, int),
            scale_factor=None if self.scale_factor is None else _pair(self.scale_factor, float),
            mode=self.mode,
            align_corners=bool(self.align_corners),
        )


class Interpolate2d(Module):
    """Resizes ``[N, C, H, W]`` inputs along H and W (no params)."""

    output_size: tuple[int, int] | None = None
    scale_factor: tuple[float, float] | None = None
    mode: str = "nearest"
    align_corners: bool = False

    def forward(self, x: Tensor) -> Tensor:
        return interpolate(x, self.output_size, self.mode, self.align_corners, self.scale_factor)
