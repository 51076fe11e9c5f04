"""Pooling ops of the contract (`burn.backend.ops.pool`) on CuPy arrays: the shared ones
(`burn.backend.xp.pool`), with one kernel for max pooling with indices
(`burn_cuda.kernels.pool`) and an atomic-add kernel for its gradient where the shared code would
sum through a float64 bincount."""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

from burn.backend.xp.pool import XpPoolOps
from burn.backend.xp.windows import Pair, out_size
from burn.errors import ShapeError
from burn_cuda._dtypes import BF16, F32, I64, work
from burn_cuda.kernels import index as k
from burn_cuda.kernels import pool as pool_kernels

Array = Any


class CudaPoolOps(XpPoolOps):
    """The pooling ops of `burn_cuda.Cuda`."""

    _int_np: np.dtype

    def _max_pool2d_with_indices(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[Array, Array]:
        # One kernel instead of a window copy, an argmax, a gather and the index arithmetic.
        if x.dtype == BF16:  # through float32 (exact: the maximum is one of the inputs)
            values, indices = self._max_pool2d_with_indices(
                x.astype(F32), kernel_size, stride, padding, dilation
            )
            return values.astype(BF16), indices
        out = tuple(
            out_size(size, k_, s, p, d)
            for size, k_, s, p, d in zip(x.shape[2:], kernel_size, stride, padding, dilation, strict=True)
        )
        if out[0] <= 0 or out[1] <= 0:
            raise ShapeError(
                f"pool2d: input {x.shape} with kernel {kernel_size}, padding {padding} gives an empty output"
            )
        return pool_kernels.max_pool2d_with_indices(
            x, kernel_size, stride, padding, dilation, (out[0], out[1]), self._int_np
        )

    def max_pool2d_with_indices_backward(
        self,
        x: Array,
        kernel_size: Pair,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        output_grad: Array,
        indices: Array,
    ) -> Array:
        # One atomic-add kernel in the work dtype (the shared bincount sums in float64).
        n, c, h, w = x.shape
        plane = h * w
        out = cp.zeros(n * c * plane, dtype=work(x.dtype))
        offsets = (cp.arange(n * c, dtype=I64) * plane).reshape(n, c, 1, 1)
        index = indices.astype(I64)
        k.scatter_add(index + offsets, output_grad.astype(out.dtype), index, plane, out)
        return out.reshape(x.shape).astype(x.dtype, copy=False)
