"""Pooling ops of the contract (`burn.backend.ops.pool`) on `CLTensor` primitives: direct max and
average pooling kernels (`burn_opencl.kernels.pool`), adaptive average pooling as a separable linear
map (`module_common.SeparableMaps`). 1-D pools are 2-D ones over ``[N, C, 1, L]``; the rest are
burn-core's defaults."""

from __future__ import annotations

from burn.foundations.dtype import DType
from burn_opencl import layout
from burn_opencl.kernels import pool as pl
from burn_opencl.ops.module_common import P, Pair, SeparableMaps, from2d, to2d


class OpenCLPoolOps(SeparableMaps):
    """The pooling ops of `burn_opencl.OpenCL`."""

    int_dtype: DType

    def max_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        return pl.max_pool2d(x, kernel_size, stride, padding, dilation, self.int_dtype)[0]

    def max_pool2d_with_indices(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[P, P]:
        return pl.max_pool2d(x, kernel_size, stride, padding, dilation, self.int_dtype)

    def max_pool2d_with_indices_backward(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair, output_grad: P, indices: P
    ) -> P:
        return pl.max_pool2d_backward(
            x.shape,
            layout.contiguous(output_grad),
            layout.contiguous(indices),
            kernel_size,
            stride,
            padding,
            dilation,
        )

    def avg_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool) -> P:
        return pl.avg_pool2d(x, kernel_size, stride, padding, count_include_pad, self.int_dtype)

    def avg_pool2d_backward(
        self, x: P, output_grad: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> P:
        return pl.avg_pool2d_backward(
            x.shape, output_grad, kernel_size, stride, padding, count_include_pad, self.int_dtype
        )

    def max_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, dilation: int) -> P:
        return from2d(self.max_pool2d(to2d(x), (1, kernel_size), (1, stride), (0, padding), (1, dilation)))

    def max_pool1d_with_indices(
        self, x: P, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[P, P]:
        out, idx = self.max_pool2d_with_indices(
            to2d(x), (1, kernel_size), (1, stride), (0, padding), (1, dilation)
        )
        return from2d(out), from2d(idx)

    def avg_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, count_include_pad: bool) -> P:
        return from2d(
            self.avg_pool2d(to2d(x), (1, kernel_size), (1, stride), (0, padding), count_include_pad)
        )

    def adaptive_avg_pool2d(self, x: P, output_size: Pair) -> P:
        return self._separable(x, tuple(output_size), "adaptive", False)  # type: ignore[arg-type]

    def adaptive_avg_pool2d_backward(self, x: P, output_grad: P) -> P:
        return self._separable(output_grad, (x.shape[2], x.shape[3]), "adaptive", True)

    def adaptive_avg_pool1d(self, x: P, output_size: int) -> P:
        return from2d(self.adaptive_avg_pool2d(to2d(x), (1, output_size)))
