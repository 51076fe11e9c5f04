"""Fused optimizer updates on CuPy arrays (the contract's `burn.backend.optim_ops`).

The default Adam is ten element-wise ops, each a kernel launch and a temporary; on the GPU a
training step of a small model is bound by those launches (host time), not by memory. Here an
update is one kernel that reads param, grad and both moments once and writes the new three,
with the default's operations in the default's order (the results agree up to float rounding:
NVRTC may contract a multiply and an add into one FMA). float16 takes the default path.
SGD with momentum and RMSProp likewise, one kernel per combination of their options (built on
first use: an option that is off costs nothing in the kernel).
"""

from __future__ import annotations

import functools
from typing import Any

import cupy as cp

from burn.backend.ops.optim import OptimOps as DefaultOptimOps

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
                out, m, v = _adam_first(param, grad, b2, c1, c2, step, eps)
            else:
                out, m, v = _adam(param, grad, moment_1, moment_2, t(beta_1), b2, c1, c2, step, eps)
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
        kernel = _sgd_kernel(velocity is None, weight_decay is not None, nesterov)
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
        kernel = _rmsprop_kernel(present, centered, with_buffer, weight_decay is not None)
        with cp.cuda.Device(param.device.id):
            results = kernel(*operands, *scalars)
        out, s = results[0], results[1]
        a = results[2] if centered else None
        b = results[-1] if with_buffer else None
        return out, s, a, b


def _decayed(decay: bool) -> str:
    """The gradient after L2 weight decay, as the default op: ``grad + param * weight_decay``."""
    return "const T gd = g + p * decay;" if decay else "const T gd = g;"


@functools.cache
def _sgd_kernel(first: bool, decay: bool, nesterov: bool) -> Any:
    """SGD with momentum in one kernel, for one combination of the options (the default op's
    operations in its order). The first step reads no velocity: it starts as the gradient."""
    velocity = "v = gd;" if first else "v = v0 * momentum + gd * damped;"
    update = "(gd + v * momentum)" if nesterov else "v"
    return cp.ElementwiseKernel(
        "T p, T g" + ("" if first else ", T v0") + ", T momentum, T damped, T lr, T decay",
        "T p1, T v",
        f"{_decayed(decay)} {velocity} p1 = p - {update} * lr;",
        f"burn_sgd_momentum_step_{int(first)}{int(decay)}{int(nesterov)}",
    )


@functools.cache
def _rmsprop_kernel(present: tuple[bool, bool, bool], centered: bool, with_buffer: bool, decay: bool) -> Any:
    """RMSProp in one kernel, for one combination of the options and of the states given
    (`present`: square average, gradient average, momentum buffer); an absent state is not read:
    the averages start at zero, the buffer as the step."""
    has_s, has_a, has_b = present
    inputs = (
        "T p, T g" + (", T s0" if has_s else "") + (", T a0" if has_a else "") + (", T b0" if has_b else "")
    )
    outputs = "T p1, T s" + (", T a" if centered else "") + (", T b" if with_buffer else "")
    body = [
        _decayed(decay),
        "s = s0 * alpha + (gd * gd) * c;" if has_s else "s = (gd * gd) * c;",
        "T avg = s;",
    ]
    if centered:
        body.append("a = a0 * alpha + gd * c;" if has_a else "a = gd * c;")
        body.append("avg = s - a * a;")
    body.append("T u = gd / (sqrt(avg) + eps);")
    if with_buffer:
        body.append("b = b0 * momentum + u; u = b;" if has_b else "b = u;")
    body.append("p1 = p - u * lr;")
    flags = "".join(str(int(f)) for f in (*present, centered, with_buffer, decay))
    return cp.ElementwiseKernel(
        inputs + ", T alpha, T c, T eps, T momentum, T lr, T decay",
        outputs,
        " ".join(body),
        f"burn_rmsprop_step_{flags}",
    )
