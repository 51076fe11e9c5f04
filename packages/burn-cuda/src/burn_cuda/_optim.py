"""Fused optimizer updates on CuPy arrays (the contract's `burn.backend.optim_ops`).

The default Adam is ten element-wise ops, each a kernel launch and a temporary; on the GPU a
training step of a small model is bound by those launches (host time), not by memory. Here an
update is one kernel that reads param, grad and both moments once and writes the new three,
with the default's operations in the default's order (the results agree up to float rounding:
NVRTC may contract a multiply and an add into one FMA). float16 takes the default path.
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn.backend.optim_ops import OptimOps as DefaultOptimOps

Array = Any

_ADAM_TAIL = """
    const T second = (g * g) * c2;
    v = v0 * b2 + second;
    p1 = p - (m / (sqrt(v) + eps)) * step;
"""

_adam = cp.ElementwiseKernel(
    "T p, T g, T m0, T v0, T b1, T b2, T c1, T c2, T step, T eps",
    "T p1, T m, T v",
    "const T first = g * c1; m = m0 * b1 + first;" + _ADAM_TAIL,
    "burn_adam_step",
)

# The first step: both moments start at zero, so they are not read.
_adam_first = cp.ElementwiseKernel(
    "T p, T g, T b2, T c1, T c2, T step, T eps",
    "T p1, T m, T v",
    "m = g * c1; const T v0 = 0;" + _ADAM_TAIL,
    "burn_adam_first_step",
)

_FUSED = (cp.dtype(cp.float32), cp.dtype(cp.float64))


class OptimOps:
    """`burn.backend.OptimOps` for CuPy arrays: Adam in one kernel per param."""

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
        operands = (param, grad) if moment_1 is None else (param, grad, moment_1, moment_2)
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
                out, m, v = _adam_first(param, grad, b2, c1, c2, step, eps)
            else:
                out, m, v = _adam(param, grad, moment_1, moment_2, t(beta_1), b2, c1, c2, step, eps)
        return out, m, v
