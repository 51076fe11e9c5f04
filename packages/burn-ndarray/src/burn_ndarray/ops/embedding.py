"""The embedding family (`burn.backend.ops.embedding`) on NumPy arrays: a row gather, and its
gradient as one bincount (float64 accumulation, repeated indices summed)."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.xp.tensor_common import check_bounds

Array = Any


class EmbeddingOps:
    """The embedding ops of `burn_ndarray.NdArray`."""

    def embedding(self, weights: Array, indices: Array) -> Array:
        return weights.take(indices, axis=0)

    def embedding_backward(self, weights: Array, output_grad: Array, indices: Array) -> Array:
        # Row sums by one bincount over (row * D + column): float64 accumulation, repeats summed.
        vocab, dim = weights.shape
        check_bounds("embedding_backward", indices, vocab)
        flat = (indices.reshape(-1, 1).astype(np.intp) * dim + np.arange(dim)).ravel()
        sums = np.bincount(flat, weights=output_grad.astype(np.float64).ravel(), minlength=vocab * dim)
        return sums.reshape(vocab, dim).astype(weights.dtype, copy=False)
