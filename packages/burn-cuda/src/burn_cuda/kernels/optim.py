"""Kernels of the fused optimizer updates (`burn_cuda.ops.optim`): Adam, and SGD with momentum and
RMSProp, one kernel per combination of their options (built on first use: an option that is off
costs nothing in the kernel). Each reads param, grad and the states once and writes the new ones,
with the default op's operations in its order.
"""

from __future__ import annotations

import functools
from typing import Any

import cupy as cp

_ADAM_TAIL = """
    const T second = (g * g) * c2;
    v = v0 * b2 + second;
    p1 = p - (m / (sqrt(v) + eps)) * step;
"""

adam = cp.ElementwiseKernel(
    "T p, T g, T m0, T v0, T b1, T b2, T c1, T c2, T step, T eps",
    "T p1, T m, T v",
    "const T first = g * c1; m = m0 * b1 + first;" + _ADAM_TAIL,
    "burn_adam_step",
)

# The first step: both moments start at zero, so they are not read.
adam_first = cp.ElementwiseKernel(
    "T p, T g, T b2, T c1, T c2, T step, T eps",
    "T p1, T m, T v",
    "m = g * c1; const T v0 = 0;" + _ADAM_TAIL,
    "burn_adam_first_step",
)


def _decayed(decay: bool) -> str:
    """The gradient after L2 weight decay, as the default op: ``grad + param * weight_decay``."""
    return "const T gd = g + p * decay;" if decay else "const T gd = g;"


@functools.cache
def sgd_kernel(first: bool, decay: bool, nesterov: bool) -> Any:
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
def rmsprop_kernel(present: tuple[bool, bool, bool], centered: bool, with_buffer: bool, decay: bool) -> Any:
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
