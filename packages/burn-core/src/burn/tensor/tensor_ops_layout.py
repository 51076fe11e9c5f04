"""Shape and indexing methods of `burn.Tensor` beyond the basics: movedim, roll, take, mask_select,
gather_nd/scatter_nd, unfold, pad, one_hot, tril/triu, eye, cross...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.tensor.tensor_ops_math import MathOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor  # noqa: F401


class LayoutOps(MathOps):
    """More shape and indexing methods (mixin of `burn.Tensor`)."""

    __slots__ = ()
