"""More math ops of the contract: trigonometric and hyperbolic functions, rounding, bitwise,
int matmul, multi-dim and statistical reductions, closeness tests (Burn's full op set).

Every op here is a `@default` written with the ops of `float_ops`/`int_ops`/`bool_ops`, unless
marked otherwise; conventions are those of `burn.backend.float_ops`.
"""

from __future__ import annotations

from typing import Any

from burn.backend.contract import default, required  # noqa: F401

P = Any  # an opaque primitive
Shape = tuple[int, ...]


class MathOps:
    """Math, bitwise, reduction and closeness ops (float_*, int_*, bool_*)."""
