"""Activation ops written once on a namespace: ReLU, hard sigmoid, softmax and log-softmax.

Backends add the others with what their library does best (NumPy: ``out=`` passes; CuPy: fused
kernels). Updates in place (``out=``, ``/=``) only ever touch temporaries created in the same
function, never an input. float16 and bfloat16 compute in float32 and are cast back.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, ClassVar

from burn.backend.xp.dtypes import F32, LOW

Array = Any


def work(xp: ModuleType, x: Array) -> Array:
    """`x` as an array in a type the namespace computes accurately (float32 for float16/bfloat16)."""
    if not isinstance(x, xp.ndarray):  # NumPy hands 0-d results over as scalars
        x = xp.asarray(x)
    return x.astype(F32) if x.dtype in LOW else x


class XpActivationOps:
    """The activation ops that need nothing but the namespace ``self.xp``."""

    xp: ClassVar[ModuleType]

    def relu(self, x: Array) -> Array:
        # NaN propagates; a zero of x's own type keeps the dtype (bfloat16 too).
        return self.xp.maximum(x, x.dtype.type(0))

    def hard_sigmoid(self, x: Array, alpha: float, beta: float) -> Array:
        w = work(self.xp, x)
        t = w.dtype.type  # scalars of the computation's type: no promotion to float64
        return self.xp.clip(w * t(alpha) + t(beta), t(0), t(1)).astype(x.dtype, copy=False)

    def softmax(self, x: Array, dim: int) -> Array:
        xp = self.xp
        w = work(xp, x)
        e = w - w.max(axis=dim, keepdims=True)  # stable: the largest exponent is 0
        xp.exp(e, out=e)
        e /= e.sum(axis=dim, keepdims=True)
        return e.astype(x.dtype, copy=False)

    def log_softmax(self, x: Array, dim: int) -> Array:
        xp = self.xp
        w = work(xp, x)
        shifted = w - w.max(axis=dim, keepdims=True)
        shifted -= xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        return shifted.astype(x.dtype, copy=False)
