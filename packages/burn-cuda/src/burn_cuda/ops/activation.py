"""Activation ops of the contract (`burn.backend.ops.activation`): one fused CUDA kernel each
(`burn_cuda.kernels.activation`), where the default would chain several ops with a temporary each;
ReLU, hard sigmoid, softmax and log-softmax are the shared ones (`burn.backend.xp.activation`).
float16 and bfloat16 compute in float32 and round once.
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn.backend.xp.activation import XpActivationOps
from burn_cuda._dtypes import F32, LOW
from burn_cuda.kernels import activation as k

Array = Any


def _unary(kernel: Any, x: Array, *scalars: float) -> Array:
    """`kernel` on `x` (float16/bfloat16 through float32), scalars typed like the computation."""
    if x.dtype in LOW:
        return kernel(x.astype(F32), *(F32.type(s) for s in scalars)).astype(x.dtype)
    return kernel(x, *(x.dtype.type(s) for s in scalars))


def _binary(kernel: Any, a: Array, b: Array) -> Array:
    """`kernel` on two float arrays, promoted to one type (float16/bfloat16 through float32)."""
    dtype = cp.result_type(a, b)
    if dtype in LOW:
        return kernel(a.astype(F32), b.astype(F32)).astype(dtype)
    return kernel(a.astype(dtype, copy=False), b.astype(dtype, copy=False))


class CudaActivationOps(XpActivationOps):
    """The activation ops of `burn_cuda.Cuda`."""

    def relu_backward(self, output: Array, grad: Array) -> Array:
        return _binary(k.relu_backward, output, grad)

    def leaky_relu(self, x: Array, negative_slope: float) -> Array:
        return _unary(k.leaky_relu, x, negative_slope)

    def gelu(self, x: Array) -> Array:
        return _unary(k.gelu, x)

    def gelu_backward(self, x: Array, grad: Array) -> Array:
        return _binary(k.gelu_backward, x, grad)

    def sigmoid(self, x: Array) -> Array:
        return _unary(k.sigmoid, x)

    def sigmoid_backward(self, output: Array, grad: Array) -> Array:
        return _binary(k.sigmoid_backward, output, grad)

    def log_sigmoid(self, x: Array) -> Array:
        return _unary(k.log_sigmoid, x)

    def silu(self, x: Array) -> Array:
        return _unary(k.silu, x)

    def softplus(self, x: Array, beta: float) -> Array:
        return _unary(k.softplus, x, beta)
