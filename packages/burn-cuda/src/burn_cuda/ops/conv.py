"""Convolution ops of the contract (`burn.backend.ops.conv`) on CuPy arrays: the shared ones
(`burn.backend.xp.conv`: im2col + one batched GEMM, col2im for gradients), their GEMM through
`burn_cuda._gemm` so that convolutions can be recorded in CUDA graphs."""

from __future__ import annotations

from burn.backend.xp.conv import XpConvOps
from burn_cuda import _gemm


class CudaConvOps(XpConvOps):
    """The convolution ops of `burn_cuda.Cuda`."""

    _conv_gemm = staticmethod(_gemm.matmul)  # capturable in CUDA graphs (`burn_cuda.graphs`)
