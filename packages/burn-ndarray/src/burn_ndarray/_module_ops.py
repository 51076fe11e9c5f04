"""Module ops (`burn.backend.ModuleOps`) of `burn_ndarray.NdArray`: the shared ones on NumPy
(`burn.backend.xp`: conv, pool, interpolate, and 1-D through 2-D), with NumPy's own paths where
they are faster here: NHWC convolutions with per-group 2-D GEMMs (`_conv`), max pooling with
``out=`` passes (`_pool`), 3-D convolutions (`_conv3d`) and a bincount embedding gradient."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.xp.conv import XpConvOps
from burn.backend.xp.pool import XpPoolOps
from burn.backend.xp.sampling import XpInterpolateOps
from burn_ndarray import _conv, _conv3d, _pool
from burn_ndarray._common import check_bounds
from burn_ndarray._windows import Pair

Array = Any


class ModuleOps(XpConvOps, XpPoolOps, XpInterpolateOps):
    """The module ops of `burn_ndarray.NdArray`."""

    _int_np: np.dtype

    # -- convolution: NHWC, one 2-D GEMM per group (NumPy's stacked matmul is slower here) -----
    _conv2d = conv2d = staticmethod(_conv.conv2d)
    conv2d_x_backward = staticmethod(_conv.conv2d_x_backward)
    conv2d_weight_backward = staticmethod(_conv.conv2d_weight_backward)
    _conv_weight_grad = staticmethod(_conv.weight_grad)
    _conv_gemm = staticmethod(_conv.gemm)
    # 3-D: one GEMM per group over a window view (`_conv3d`); the 3-D pools are in `_pool3d`.
    conv3d = staticmethod(_conv3d.conv3d)
    conv3d_x_backward = staticmethod(_conv3d.conv3d_x_backward)
    conv3d_weight_backward = staticmethod(_conv3d.conv3d_weight_backward)
    conv_transpose3d = staticmethod(_conv3d.conv_transpose3d)
    conv_transpose3d_x_backward = staticmethod(_conv3d.conv_transpose3d_x_backward)
    conv_transpose3d_weight_backward = staticmethod(_conv3d.conv_transpose3d_weight_backward)

    # -- max pooling: running maximum over tap views with out= passes ---------------------------
    _max_pool2d = max_pool2d = staticmethod(_pool.max_pool2d)

    def _max_pool2d_with_indices(
        self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[Array, Array]:
        return _pool.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, self._int_np)

    max_pool2d_with_indices = _max_pool2d_with_indices

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
