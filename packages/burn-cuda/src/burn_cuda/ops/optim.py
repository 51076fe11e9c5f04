"""Optimizer ops of the contract (`burn.backend.ops.optim`) on CuPy arrays: fused updates.

The default Adam is ten element-wise ops, each a kernel launch and a temporary; on the GPU a
training step of a small model is bound by those launches (host time), not by memory. Here an
update is one kernel (`burn_cuda.kernels.optim`) that reads param, grad and both moments once and
writes the new three, with the default's operations in the default's order (the results agree up
to float rounding: NVRTC may contract a multiply and an add into one FMA). float16 takes the
default path. SGD with momentum and RMSProp likewise.
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn.backend.ops.optim import OptimOps as DefaultOptimOps
from burn_cuda.kernels import optim as k

Array = Any

_FUSED = (cp.dtype(cp.float32), cp.dtype(cp.float64))


class CudaOptimOps:
    """`burn.backend.OptimOps` for CuPy arrays: Adam, SGD with momentum and RMSProp, each in one
    kernel per param."""

    def float_adam_step(
        self,
        param: Array,
        grad: Array,
        moment_1: Array | None,
        moment_2: Array | None,
        beta_1: float,
        beta_2: float,
        step_size: float,
        epsilon: float,
    ) -> tuple[Array, Array, Array]:
        dtype = param.dtype
        # A lone moment (one None) takes the default op below.
        operands = (
            (param, grad) if moment_1 is None or moment_2 is None else (param, grad, moment_1, moment_2)
        )
        if (
            dtype not in _FUSED
            or (moment_1 is None) != (moment_2 is None)
            or any(a.dtype != dtype or a.shape != param.shape for a in operands)
        ):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultOptimOps.float_adam_step(
                backend, param, grad, moment_1, moment_2, beta_1, beta_2, step_size, epsilon
            )
        t = dtype.type
        c1, c2, b2, step, eps = t(1.0 - beta_1), t(1.0 - beta_2), t(beta_2), t(step_size), t(epsilon)
        with cp.cuda.Device(param.device.id):
            if moment_1 is None:
                out, m, v = k.adam_first(param, grad, b2, c1, c2, step, eps)
            else:
                out, m, v = k.adam(param, grad, moment_1, moment_2, t(beta_1), b2, c1, c2, step, eps)
        return out, m, v

    def float_sgd_momentum_step(
        self,
        param: Array,
        grad: Array,
        velocity: Array | None,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[Array, Array]:
        dtype = param.dtype
        operands = (param, grad) if velocity is None else (param, grad, velocity)
        if dtype not in _FUSED or any(a.dtype != dtype or a.shape != param.shape for a in operands):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultOptimOps.float_sgd_momentum_step(
                backend, param, grad, velocity, momentum, dampening, nesterov, weight_decay, lr
            )
        t = dtype.type
        decay = 0.0 if weight_decay is None else weight_decay
        scalars = (t(momentum), t(1.0 - dampening), t(lr), t(decay))
        kernel = k.sgd_kernel(velocity is None, weight_decay is not None, nesterov)
        with cp.cuda.Device(param.device.id):
            out, v = kernel(*operands, *scalars)
        return out, v

    def float_rmsprop_step(
        self,
        param: Array,
        grad: Array,
        square_avg: Array | None,
        grad_avg: Array | None,
        momentum_buffer: Array | None,
        alpha: float,
        epsilon: float,
        centered: bool,
        momentum: float,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[Array, Array, Array | None, Array | None]:
        # States the options ignore count as absent (as in the default op).
        with_buffer = momentum > 0.0
        states = (square_avg, grad_avg if centered else None, momentum_buffer if with_buffer else None)
        operands = (param, grad, *(a for a in states if a is not None))
        dtype = param.dtype
        if dtype not in _FUSED or any(a.dtype != dtype or a.shape != param.shape for a in operands):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultOptimOps.float_rmsprop_step(
                backend, param, grad, square_avg, grad_avg, momentum_buffer,
                alpha, epsilon, centered, momentum, weight_decay, lr,
            )  # fmt: skip
        t = dtype.type
        decay = 0.0 if weight_decay is None else weight_decay
        scalars = (t(alpha), t(1.0 - alpha), t(epsilon), t(momentum), t(lr), t(decay))
        present = tuple(a is not None for a in states)
        kernel = k.rmsprop_kernel(present, centered, with_buffer, weight_decay is not None)
        with cp.cuda.Device(param.device.id):
            results = kernel(*operands, *scalars)
        out, s = results[0], results[1]
        a = results[2] if centered else None
        b = results[-1] if with_buffer else None
        return out, s, a, b
