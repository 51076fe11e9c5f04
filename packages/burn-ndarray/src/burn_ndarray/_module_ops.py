"""Module ops (`burn.backend.ModuleOps`) of `burn_ndarray.NdArray`: thin methods over `_conv`,
`_pool` and `_interpolate`. 1-D convolution and pooling run as 2-D with a height of 1 (views)."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray import _conv, _conv3d, _interpolate, _pool
from burn_ndarray._common import check_bounds
from burn_ndarray._windows import Pair

Array = Any


class ModuleOps:
    """The module ops of `burn_ndarray.NdArray`."""

    _int_np: np.dtype

    # -- convolution --------------------------------------------------------------------------
    def conv1d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: int,
        padding: int,
        dilation: int,
        groups: int,
    ) -> Array:
        out = _conv.conv2d(
            x[:, :, None, :], weight[:, :, None, :], bias, (1, stride), (0, padding), (1, dilation), groups
        )
        return out[:, :, 0, :]

    def conv_transpose1d(
        self,
        x: Array,
        weight: Array,
        bias: Array | None,
        stride: int,
        padding: int,
        padding_out: int,
        dilation: int,
        groups: int,
    ) -> Array:
        out = _conv.conv_transpose2d(
            x[:, :, None, :], weight[:, :, None, :], bias, (1, stride), (0, padding), (0, padding_out),
            (1, dilation), groups,
        )
        return out[:, :, 0, :]

    conv2d = staticmethod(_conv.conv2d)
    conv2d_x_backward = staticmethod(_conv.conv2d_x_backward)
    conv2d_weight_backward = staticmethod(_conv.conv2d_weight_backward)
    conv_transpose2d = staticmethod(_conv.conv_transpose2d)
    conv_transpose2d_x_backward = staticmethod(_conv.conv_transpose2d_x_backward)
    conv_transpose2d_weight_backward = staticmethod(_conv.conv_transpose2d_weight_backward)
    # 3-D: one GEMM per group over a window view (`_conv3d`); the 3-D pools are in `_pool3d`.
    conv3d = staticmethod(_conv3d.conv3d)
    conv3d_x_backward = staticmethod(_conv3d.conv3d_x_backward)
    conv3d_weight_backward = staticmethod(_conv3d.conv3d_weight_backward)
    conv_transpose3d = staticmethod(_conv3d.conv_transpose3d)
    conv_transpose3d_x_backward = staticmethod(_conv3d.conv_transpose3d_x_backward)
    conv_transpose3d_weight_backward = staticmethod(_conv3d.conv_transpose3d_weight_backward)

    # -- pooling ------------------------------------------------------------------------------
    max_pool2d = staticmethod(_pool.max_pool2d)

    def max_pool2d_with_indices(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[Array, Array]:
        return _pool.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, self._int_np)

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
        return _pool.max_pool2d_backward(x, output_grad, indices, kernel_size, stride, padding, dilation)

    avg_pool2d = staticmethod(_pool.avg_pool2d)
    avg_pool2d_backward = staticmethod(_pool.avg_pool2d_backward)
    adaptive_avg_pool2d = staticmethod(_pool.adaptive_avg_pool2d)
    adaptive_avg_pool2d_backward = staticmethod(_pool.adaptive_avg_pool2d_backward)

    def max_pool1d(self, x: Array, kernel_size: int, stride: int, padding: int, dilation: int) -> Array:
        return _pool.max_pool2d(x[:, :, None, :], (1, kernel_size), (1, stride), (0, padding), (1, dilation))[
            :, :, 0
        ]

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
        return _pool.avg_pool2d(
            x[:, :, None, :], (1, kernel_size), (1, stride), (0, padding), count_include_pad
        )[:, :, 0]

    def adaptive_avg_pool1d(self, x: Array, output_size: int) -> Array:
        return _pool.adaptive_avg_pool2d(x[:, :, None, :], (1, output_size))[:, :, 0]

    # -- embedding ----------------------------------------------------------------------------
    def embedding(self, weights: Array, indices: Array) -> Array:
        return weights.take(indices, axis=0)

    def embedding_backward(self, weights: Array, output_grad: Array, indices: Array) -> Array:
        # Row sums by one bincount over (row * D + column): float64 accumulation, repeats summed.
        vocab, dim = weights.shape
        check_bounds("embedding_backward", indices, vocab)
        flat = (indices.reshape(-1, 1).astype(np.intp) * dim + np.arange(dim)).ravel()
        sums = np.bincount(flat, weights=output_grad.astype(np.float64).ravel(), minlength=vocab * dim)
        return sums.reshape(vocab, dim).astype(weights.dtype, copy=False)

    # -- interpolation ------------------------------------------------------------------------
    interpolate = staticmethod(_interpolate.interpolate)
    interpolate_backward = staticmethod(_interpolate.interpolate_backward)
