"""Burn's further activations (`burn.backend.ActivationOps`: elu, celu, selu, gelu_approximate,
relu6, hardtanh, hard_swish, softsign, tanhshrink, threshold, thresholded_relu, glu, softmin) on
NumPy arrays.

As in `burn_ndarray._activation_ops`: a few whole-array passes each, in-place updates only on
temporaries made here, float16 / bfloat16 computed in float32 and cast back.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from burn.backend.ops.activation import SELU_ALPHA, SELU_SCALE
from burn_ndarray._activation_ops import _sigmoid, _work
from burn_ndarray._select import where

Array = Any
_TWO_SQRT_2_OVER_PI = 2.0 * math.sqrt(2.0 / math.pi)


def _elu(w: np.ndarray, alpha: float, rate: float) -> np.ndarray:
    """``w`` where positive, else ``alpha * (exp(rate * w) - 1)``; `w` is a work-dtype array.

    Written as ``alpha * (exp(rate * min(w, 0)) - 1) + max(w, 0)``: each term is exactly 0 where
    the other applies, so the sum is bit for bit the select, without a select pass; the exponential
    never overflows. (``expm1`` would be more accurate near 0 but is six times slower in NumPy.)
    """
    if w.ndim == 0:  # NumPy returns scalars for 0-d: the in-place updates below need arrays
        return _elu(w.reshape(1), alpha, rate).reshape(())
    out = np.minimum(w, 0)  # NaN stays NaN
    if rate != 1.0:
        out *= rate
    np.exp(out, out=out)
    out -= 1.0
    out *= alpha
    out += np.maximum(w, 0)
    return out


def _clip(w: np.ndarray, low: float, high: float) -> np.ndarray:
    """``min(max(w, low), high)``: NaN stays NaN (`min_val <= max_val` is checked by the caller)."""
    if w.ndim == 0:
        return _clip(w.reshape(1), low, high).reshape(())
    out = np.maximum(w, low)
    np.minimum(out, high, out=out)
    return out


def _halves(x: Array, dim: int) -> tuple[Array, Array]:
    half = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[(*lead, slice(0, half))], x[(*lead, slice(half, 2 * half))]


class ActivationExtraOps:
    """The activation ops of `burn_ndarray.NdArray` beyond `burn_ndarray._activation_ops`."""

    def gelu_approximate(self, x: Array) -> Array:
        # x * (1 + tanh(u)) / 2 = x * sigmoid(2u): the stable sigmoid keeps the negative tail.
        w = _work(x)
        inner = w * w
        inner *= 0.044715
        inner += 1.0
        inner *= w
        inner *= _TWO_SQRT_2_OVER_PI
        out = _sigmoid(inner)
        out *= w
        return out.astype(x.dtype, copy=False)

    def elu(self, x: Array, alpha: float) -> Array:
        return _elu(_work(x), alpha, 1.0).astype(x.dtype, copy=False)

    def celu(self, x: Array, alpha: float) -> Array:
        return _elu(_work(x), alpha, 1.0 / alpha).astype(x.dtype, copy=False)

    def selu(self, x: Array) -> Array:
        out = _elu(_work(x), SELU_ALPHA, 1.0)
        out *= SELU_SCALE
        return out.astype(x.dtype, copy=False)

    def hardtanh(self, x: Array, min_val: float, max_val: float) -> Array:
        return _clip(_work(x), min_val, max_val).astype(x.dtype, copy=False)

    def relu6(self, x: Array) -> Array:
        return _clip(_work(x), 0.0, 6.0).astype(x.dtype, copy=False)

    def hard_swish(self, x: Array) -> Array:
        w = _work(x)
        out = _clip(w + 3.0, 0.0, 6.0)
        out /= 6.0
        out *= w
        return out.astype(x.dtype, copy=False)

    def softsign(self, x: Array) -> Array:
        w = _work(x)
        den = np.abs(w)
        den += 1.0
        return (w / den).astype(x.dtype, copy=False)

    def tanhshrink(self, x: Array) -> Array:
        w = _work(x)  # float32 for the low types: x - tanh(x) cancels near 0
        return (w - np.tanh(w)).astype(x.dtype, copy=False)

    def threshold(self, x: Array, threshold: float, value: float) -> Array:
        return where(x <= threshold, x.dtype.type(value), x)

    def thresholded_relu(self, x: Array, alpha: float) -> Array:
        return where(x <= alpha, x.dtype.type(0), x)

    def glu(self, x: Array, dim: int) -> Array:
        first, second = _halves(_work(x), dim)
        out = _sigmoid(second)
        out *= first
        return out.astype(x.dtype, copy=False)

    def softmin(self, x: Array, dim: int) -> Array:
        w = _work(x)
        e = w.min(axis=dim, keepdims=True) - w  # -x shifted by its max: the largest exponent is 0
        np.exp(e, out=e)
        e /= e.sum(axis=dim, keepdims=True)
        return e.astype(x.dtype, copy=False)
