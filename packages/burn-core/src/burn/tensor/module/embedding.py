"""The functional `embedding` (the embedding family): rows of a ``[V, D]`` weight table picked by
Int indices, one backend op (`burn.backend.ops.embedding`).

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> weights = Tensor.from_data([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])  # doctest: +SKIP
    >>> F.embedding(weights, Tensor.from_data([[2, 0]])).tolist()  # doctest: +SKIP
    [[[4.0, 5.0], [0.0, 1.0]]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.foundations.kind import Float, Int
from burn.tensor._base import wrap
from burn.tensor._errors import expect_same
from burn.tensor.module._args import float_operand

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["embedding"]


def embedding(weights: Tensor, indices: Tensor) -> Tensor:
    """Rows of ``weights [V, D]`` picked by the Int tensor `indices` (any shape) -> ``[..., D]``."""
    op = "embedding"
    float_operand(op, weights, "weights", hint="")
    if len(weights.shape) != 2:
        raise ShapeError(f"{op}: weights must have shape [V, D], got {weights.shape}")
    expect_same(op, weights, indices, Int, "indices")
    return wrap(weights._b.embedding(weights._p, indices._p), weights._b, Float)
