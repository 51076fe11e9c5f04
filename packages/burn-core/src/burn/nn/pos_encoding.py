"""Position encodings: sinusoidal `PositionalEncoding` (added to the input) and rotary
`RotaryEncoding` (RoPE, rotating pairs of features). Neither has params: their tables are host
constants, materialized once per backend/device/dtype on first use."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import HostConstant
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = ["PositionalEncoding", "PositionalEncodingConfig", "RotaryEncoding", "RotaryEncodingConfig"]


def sinusoids(length: int, d_model: int, max_timescale: float = 10_000.0) -> np.ndarray:
    """The ``[length, d_model]`` table: ``sin(pos * w_k)`` at even features ``2k``, ``cos`` at odd
    ``2k + 1``, with ``w_k = max_timescale ** (-2k / d_model)`` (Vaswani et al., 2017)."""
    if d_model % 2:
        raise ValueError(f"sinusoidal encoding needs an even d_model, got {d_model}")
    pos = np.arange(length, dtype=np.float64)[:, None]
    freq = np.exp(np.arange(0, d_model, 2, dtype=np.float64) * (-math.log(max_timescale) / d_model))
    table = np.empty((length, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq)
    return table


@config
class PositionalEncodingConfig:
    """Builds a `PositionalEncoding` for sequences up to `max_sequence_size` (Burn's defaults).

    Example:
        >>> from burn import nn
        >>> pe = nn.PositionalEncodingConfig(16).init()
        >>> pe.max_sequence_size
        5000
    """

    d_model: int
    max_sequence_size: int = 5000
    max_timescale: int = 10_000

    def init(self, device: Device | None = None) -> PositionalEncoding:
        if self.d_model % 2:
            raise ValueError(f"PositionalEncodingConfig: d_model must be even, got {self.d_model}")
        size, d, scale = self.max_sequence_size, self.d_model, float(self.max_timescale)
        table = HostConstant(factory=lambda: sinusoids(size, d, scale)[None])
        return PositionalEncoding(table=table, d_model=d, max_sequence_size=size)


class PositionalEncoding(Module):
    """``x + sinusoids[:T]`` for ``x [B, T, d_model]``."""

    table: HostConstant
    d_model: int
    max_sequence_size: int

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        if len(shape) != 3 or shape[2] != self.d_model or shape[1] > self.max_sequence_size:
            raise ShapeError(
                f"PositionalEncoding: expected [B, T <= {self.max_sequence_size}, {self.d_model}], "
                f"got {shape}"
            )
        return x + self.table.like(x).narrow(1, 0, shape[1])


@config
class RotaryEncodingConfig:
    """Builds a `RotaryEncoding` (RoFormer, Su et al. 2021) with frequencies
    ``theta ** (-2k / d_model)``."""

    max_sequence_length: int
    d_model: int
    theta: float = 10_000.0

    def init(self, device: Device | None = None) -> RotaryEncoding:
        if self.d_model % 2:
            raise ValueError(f"RotaryEncodingConfig: d_model must be even, got {self.d_model}")
        if self.theta <= 0:
            raise ValueError(f"RotaryEncodingConfig: theta must be positive, got {self.theta}")
        length, d, theta = self.max_sequence_length, self.d_model, float(self.theta)

        def angles() -> np.ndarray:
            freq = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
            return np.arange(length, dtype=np.float64)[:, None] * freq  # [L, d/2]

        return RotaryEncoding(
            cos=HostConstant(factory=lambda: np.cos(angles())[:, :, None]),
            sin=HostConstant(factory=lambda: np.sin(angles())[:, :, None]),
            d_model=d,
            max_sequence_length=length,
        )


class RotaryEncoding(Module):
    """Rotates each feature pair ``(x[2k], x[2k+1])`` at position ``p`` by the angle
    ``p * theta ** (-2k / d_model)``; input ``[..., T, d_model]`` (e.g. ``[B, T, D]`` or
    ``[B, heads, T, D]``)."""

    cos: HostConstant
    sin: HostConstant
    d_model: int
    max_sequence_length: int

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """Encode positions ``start .. start + T - 1`` (`start` > 0 for cached decoding)."""
        shape = x.shape
        if len(shape) < 2 or shape[-1] != self.d_model:
            raise ShapeError(f"RotaryEncoding: expected [..., T, {self.d_model}], got {shape}")
        steps = shape[-2]
        if start < 0 or start + steps > self.max_sequence_length:
            raise ShapeError(
                f"RotaryEncoding: positions {start}..{start + steps - 1} exceed max_sequence_length "
                f"{self.max_sequence_length} (input {shape})"
            )
        cos = self.cos.like(x).narrow(0, start, steps)  # [T, D/2, 1]
        sin = self.sin.like(x).narrow(0, start, steps)
        pairs = x.reshape((*shape[:-1], self.d_model // 2, 2))
        x0 = pairs.narrow(-1, 0, 1)
        x1 = pairs.narrow(-1, 1, 1)
        rotated = Tensor.cat([x0 * cos - x1 * sin, x1 * cos + x0 * sin], -1)
        return rotated.reshape(shape)

    apply = forward
