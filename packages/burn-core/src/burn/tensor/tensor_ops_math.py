"""Math methods of `burn.Tensor` beyond the basics: trigonometric and hyperbolic functions,
rounding, bitwise ops, multi-dim and statistical reductions, closeness tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.tensor.tensor_autodiff import AutodiffOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor  # noqa: F401


class MathOps(AutodiffOps):
    """More math methods (mixin of `burn.Tensor`)."""

    __slots__ = ()
