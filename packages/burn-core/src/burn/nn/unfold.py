"""`Unfold4d` and `Fold4d`: im2col and col2im as layers (Burn's ``Unfold4d``; PyTorch's
``nn.Unfold`` and ``nn.Fold``). No params; see `burn.tensor.module.unfold4d` / ``fold4d``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["Fold4d", "Fold4dConfig", "Unfold4d", "Unfold4dConfig"]


def _check(layer: str, sizes: tuple[int, ...], padding: tuple[int, int]) -> None:
    if any(v < 1 for v in sizes) or any(p < 0 for p in padding):
        raise ValueError(
            f"{layer}: kernel_size, stride and dilation must be >= 1 and padding >= 0, "
            f"got {sizes} and {padding}"
        )


@config
class Unfold4dConfig:
    """Builds an `Unfold4d` (Burn's field names; PyTorch's ``nn.Unfold`` semantics).

    Example:
        >>> from burn import nn
        >>> unfold = nn.Unfold4dConfig((3, 3), padding=(1, 1)).init()
        >>> unfold(x).shape  # x: [2, 4, 8, 8]  # doctest: +SKIP
        (2, 36, 64)
    """

    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)

    def init(self, device: Device | None = None) -> Unfold4d:
        _check("Unfold4dConfig", (*self.kernel_size, *self.stride, *self.dilation), self.padding)
        return Unfold4d(self.kernel_size, self.stride, self.dilation, self.padding)


class Unfold4d(Module):
    """``[N, C, H, W]`` -> ``[N, C * KH * KW, L]``: every zero-padded sliding window as a column
    (channel slowest, then kernel row, kernel column), ``L`` windows in row-major order."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)

    def forward(self, x: Tensor) -> Tensor:
        return F.unfold4d(x, self.kernel_size, self.stride, self.padding, self.dilation)


@config
class Fold4dConfig:
    """Builds a `Fold4d`, the adjoint of `Unfold4d` (PyTorch's ``nn.Fold``).

    Example:
        >>> from burn import nn
        >>> fold = nn.Fold4dConfig((8, 8), (3, 3), padding=(1, 1)).init()
        >>> fold(cols).shape  # cols: [2, 36, 64]  # doctest: +SKIP
        (2, 4, 8, 8)
    """

    output_size: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)

    def init(self, device: Device | None = None) -> Fold4d:
        sizes = (*self.output_size, *self.kernel_size, *self.stride, *self.dilation)
        _check("Fold4dConfig", sizes, self.padding)
        return Fold4d(self.output_size, self.kernel_size, self.stride, self.dilation, self.padding)


class Fold4d(Module):
    """``[N, C * KH * KW, L]`` -> ``[N, C, H, W]``: each column summed back into its window of
    the output (overlapping windows add up), the padding cropped."""

    output_size: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)

    def forward(self, cols: Tensor) -> Tensor:
        return F.fold4d(cols, self.output_size, self.kernel_size, self.stride, self.padding, self.dilation)
