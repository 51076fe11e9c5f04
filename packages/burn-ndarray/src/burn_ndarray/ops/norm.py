"""The norm family (`burn.backend.ops.norm`) on NumPy arrays: layer normalization and its backward
helper as compiled row kernels (`burn_ndarray.kernels.norm`) for float32 and float64 arrays, rows
split between threads for large inputs; other dtypes (and a machine without numba) by the
contract's composition.

Each row's result is computed by the same serial code whichever thread takes it, so outputs and
``dx`` are the same bits at any thread count; ``dgamma`` and ``dbeta`` add each chunk's float64
partial sums in row order, so they may differ across thread counts by float64 rounding before
the one rounding to the result's dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ops.norm import NormOps as DefaultNormOps
from burn_ndarray import kernels
from burn_ndarray.runtime import split, threads
from burn_ndarray.runtime.dtypes import F32, F64

Array = Any


def _compiled(*arrays: Array) -> Any:
    """`burn_ndarray.kernels.norm` when every array is a float32 (or every one a float64) NumPy
    array, else None (and None without numba)."""
    dtype = arrays[0].dtype
    if (dtype is F32 or dtype is F64) and all(a.__class__ is np.ndarray and a.dtype is dtype for a in arrays):
        return kernels.load("norm")
    return None


def _chunks(rows: Array) -> list[slice]:
    return split.chunks(rows.shape, rows.size, split.ROWWISE_PER_THREAD) or [slice(0, rows.shape[0])]


class NormOps:
    """The norm ops of `burn_ndarray.NdArray`."""

    def layer_norm(self, tensor: Array, gamma: Array, beta: Array | None, epsilon: float) -> Array:
        compiled = _compiled(tensor, gamma, *(() if beta is None else (beta,)))
        if compiled is None or tensor.size == 0:
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultNormOps.layer_norm(backend, tensor, gamma, beta, epsilon)
        width = tensor.shape[-1]
        x = np.ascontiguousarray(tensor).reshape(-1, width)
        shift = np.zeros(width, tensor.dtype) if beta is None else np.ascontiguousarray(beta)
        scale = np.ascontiguousarray(gamma)
        out = np.empty(x.shape, tensor.dtype)
        chunks = _chunks(x)

        def task(c: slice) -> None:
            compiled.layer_norm_rows(x[c], scale, shift, epsilon, out[c])

        threads.run(task, chunks)
        return out.reshape(tensor.shape)

    def layer_norm_backward(
        self, tensor: Array, gamma: Array, epsilon: float, output_grad: Array
    ) -> tuple[Array, Array, Array]:
        compiled = _compiled(tensor, gamma, output_grad)
        if compiled is None or tensor.size == 0:
            backend: Any = self
            return DefaultNormOps.layer_norm_backward(backend, tensor, gamma, epsilon, output_grad)
        width = tensor.shape[-1]
        x = np.ascontiguousarray(tensor).reshape(-1, width)
        dy = np.ascontiguousarray(output_grad).reshape(-1, width)
        scale = np.ascontiguousarray(gamma)
        dx = np.empty(x.shape, tensor.dtype)
        chunks = _chunks(x)
        partial = np.zeros((len(chunks), 2, width), np.float64)  # each chunk's dgamma and dbeta

        position = {c.start: k for k, c in enumerate(chunks)}

        def task(c: slice) -> None:
            k = position[c.start]
            compiled.layer_norm_grad_rows(x[c], scale, epsilon, dy[c], dx[c], partial[k, 0], partial[k, 1])

        threads.run(task, chunks)
        sums = partial.sum(0)  # the chunks' partial sums in row order
        return dx.reshape(tensor.shape), sums[0].astype(tensor.dtype), sums[1].astype(tensor.dtype)
