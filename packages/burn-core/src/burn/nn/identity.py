"""`Identity`: returns its input unchanged (a placeholder layer, as Burn's and PyTorch's)."""

from __future__ import annotations

from typing import Any

from burn.module.base import Module

__all__ = ["Identity"]


class Identity(Module):
    """``forward(x) -> x``; no params. Handy to switch a block off without changing the model's
    structure (or its record keys).

    Example:
        >>> from burn import nn
        >>> nn.Identity()(42)
        42
    """

    def forward(self, x: Any) -> Any:
        return x
