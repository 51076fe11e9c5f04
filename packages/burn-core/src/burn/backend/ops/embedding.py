"""The embedding family of the backend contract: the row lookup ``embedding`` and its backward
helper (a scatter-add of the output gradient into the table's rows), both defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.contract import default, family

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any


@family("embedding")
class EmbeddingOps:
    """Embedding lookup and its backward helper; both have defaults."""

    @default
    def embedding(self, weights: P, indices: P) -> P:
        """``weights [V, D]``, int ``indices [...]`` -> ``[..., D]``."""
        b: Backend = self  # type: ignore[assignment]
        index_shape = b.int_shape(indices)
        rows = b.float_select(weights, 0, b.int_reshape(indices, (-1,)))
        return b.float_reshape(rows, (*index_shape, b.float_shape(weights)[1]))

    @default(backward_of="embedding")
    def embedding_backward(self, weights: P, output_grad: P, indices: P) -> P:
        """Gradient with respect to `weights`: rows of `output_grad` summed at `indices`."""
        b: Backend = self  # type: ignore[assignment]
        vocab, dim = b.float_shape(weights)
        grad = b.float_zeros((vocab, dim), b.float_device(output_grad), b.float_get_dtype(output_grad))
        return b.float_select_add(
            grad, 0, b.int_reshape(indices, (-1,)), b.float_reshape(output_grad, (-1, dim))
        )
