"""Errors raised by the fusion backend."""

from __future__ import annotations

from burn.errors import BurnError


class FusionError(BurnError, TypeError):
    """``fusion(x)`` over a backend without the fusion contract, or a value whose fused kernel failed."""
