"""Embedding ops of the contract (`burn.backend.ops.embedding`) on CuPy arrays: rows taken by
index, and the gradient summed into zeros by the select-add kernel (`burn_cuda._common`)."""

from __future__ import annotations

from typing import Any

import cupy as cp

Array = Any


class CudaEmbeddingOps:
    """The embedding ops of `burn_cuda.Cuda`."""

    float_select_add: Any  # the float family's (`burn_cuda.ops.float`)

    def embedding(self, weights: Array, indices: Array) -> Array:
        return weights.take(indices, axis=0)

    def embedding_backward(self, weights: Array, output_grad: Array, indices: Array) -> Array:
        vocab, dim = weights.shape
        zeros = cp.zeros((vocab, dim), dtype=output_grad.dtype)
        grad = self.float_select_add(zeros, 0, indices.reshape(-1), output_grad.reshape(-1, dim))
        return grad.astype(weights.dtype, copy=False)
