"""Module ops (`burn.backend.ModuleOps`) of `burn_cuda.Cuda`: thin methods over `_conv`, `_pool` and
`_interpolate`. 1-D convolution and pooling run as 2-D with a height of 1 (views)."""

from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

from burn_cuda import _common as c
from burn_cuda import _conv, _interpolate, _pool
from burn_cuda._windows import Pair

Array = Any


class ModuleOps:
    """The module ops of `burn_cuda.Cuda`."""

    _int_np: np.dtype

    # -- convolution --------------------------------------------------------------------------
    def conv1d(
        self, x: Array, weight: Array, bias: Array | None, stride: int, padding: int, dilation: int,
        groups: int,
    ) -> Array:
        out = _conv.conv2d(
            x[:, :, None, :], weight[:, :, None, :], bias, (1, stride), (0, padding), (1, dilation), groups
        )
        return out[:, :, 0, :]

    def conv2d(
        self, x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair, dilation: Pair,
        groups: int,
    ) -> Array:
        return _conv.conv2d(x, weight, bias, stride, padding, dilation, groups)

    def conv2d_x_backward(
        self, x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair,
        groups: int,
    ) -> Array:
        return _conv.conv2d_x_backward(x, weight, output_grad, stride, padding, dilation, groups)

    def conv2d_weight_backward(
        self, x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair,
        groups: int,
    ) -> Array:
        return _conv.conv2d_weight_backward(x, weight, output_grad, stride, padding, dilation, groups)

    def conv_transpose2d(
        self, x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> Array:
        return _conv.conv_transpose2d(x, weight, bias, stride, padding, padding_out, dilation, groups)

    def conv_transpose2d_x_backward(
        self, x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> Array:
        return _conv.conv_transpose2d_x_backward(
            x, weight, output_grad, stride, padding, padding_out, dilation, groups
        )

    def conv_transpose2d_weight_backward(
        self, x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> Array:
        return _conv.conv_transpose2d_weight_backward(
            x, weight, output_grad, stride, padding, padding_out, dilation, groups
        )

    # -- pooling ------------------------------------------------------------------------------
    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
        return _pool.max_pool2d(x, kernel_size, stride, padding, dilation)

    def max_pool2d_with_indices(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[Array, Array]:
        return _pool.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, self._int_np)

    def max_pool2d_with_indices_backward(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair, output_grad: Array,
        indices: Array,
    ) -> Array:
        return _pool.max_pool2d_backward(x, output_grad, indices)

    def avg_pool2d(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> Array:
        return _pool.avg_pool2d(x, kernel_size, stride, padding, count_include_pad)

    def avg_pool2d_backward(
        self, x: Array, output_grad: Array, kernel_size: Pair, stride: Pair, padding: Pair,
        count_include_pad: bool,
    ) -> Array:
        return _pool.avg_pool2d_backward(x, output_grad, kernel_size, stride, padding, count_include_pad)

    def adaptive_avg_pool2d(self, x: Array, output_size: Pair) -> Array:
        return _pool.adaptive_avg_pool2d(x, output_size)

    def adaptive_avg_pool2d_backward(self, x: Array, output_grad: Array) -> Array:
        return _pool.adaptive_avg_pool2d_backward(x, output_grad)

    def max_pool1d(self, x: Array, kernel_size: int, stride: int, padding: int, dilation: int) -> Array:
        out = _pool.max_pool2d(x[:, :, None, :], (1, kernel_size), (1, stride), (0, padding), (1, dilation))
        return out[:, :, 0]

    def max_pool1d_with_indices(
        self, x: Array, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[Array, Array]:
        values, indices = _pool.max_pool2d_with_indices(
            x[:, :, None, :], (1, kernel_size), (1, stride), (0, padding), (1, dilation), self._int_np
        )
        return values[:, :, 0], indices[:, :, 0]  # with a height of 1, h * W + w is w

    def avg_pool1d(
        self, x: Array, kernel_size: int, stride: int, padding: int, count_include_pad: bool
    ) -> Array:
        x2 = x[:, :, None, :]
        out = _pool.avg_pool2d(x2, (1, kernel_size), (1, stride), (0, padding), count_include_pad)
        return out[:, :, 0]

    def adaptive_avg_pool1d(self, x: Array, output_size: int) -> Array:
        return _pool.adaptive_avg_pool2d(x[:, :, None, :], (1, output_size))[:, :, 0]

    # -- embedding ----------------------------------------------------------------------------
    def embedding(self, weights: Array, indices: Array) -> Array:
        return cp.take(weights, indices, axis=0)

    def embedding_backward(self, weights: Array, output_grad: Array, indices: Array) -> Array:
        vocab, dim = weights.shape
        zeros = cp.zeros((vocab, dim), dtype=output_grad.dtype)
        grad = c.select_add(self, zeros, 0, indices.reshape(-1), output_grad.reshape(-1, dim))
        return grad.astype(weights.dtype, copy=False)

    # -- interpolation ------------------------------------------------------------------------
    def interpolate(self, x: Array, output_size: Pair, mode: str, align_corners: bool) -> Array:
        return _interpolate.interpolate(x, output_size, mode, align_corners)  # type: ignore[arg-type]

    def interpolate_backward(
        self, x: Array, output_grad: Array, output_size: Pair, mode: str, align_corners: bool
    ) -> Array:
        return _interpolate.interpolate_backward(x, output_grad, output_size, mode, align_corners)
