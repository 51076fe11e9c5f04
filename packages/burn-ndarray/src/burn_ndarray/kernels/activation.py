"""Compiled kernels of the activation family (`burn_ndarray.ops.activation`): ReLU and its
gradient (float32 and float64, one memory-bound pass), and float32 activations built on an exp
computed in the kernel, one compiled pass each: GELU (``x * (1 + erf(x / sqrt(2))) / 2``) and its
gradient, the tanh GELU (``x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))``) and its gradient,
sigmoid and its gradient, SiLU.

The NumPy paths (`burn_ndarray.ops.activation`) take whole-array passes: ~40 for GELU (the erf
polynomial of `erf`, then the GELU arithmetic), seven for sigmoid (two of them ``exp``); here each
element goes through the same float32 formulas in registers, in a loop that LLVM vectorizes. That
needs every
step free of library calls (numba calls libm's scalar ``expf``, which stops vectorization;
pip's llvmlite has no SVML), so ``exp(-a)`` is computed here: Cody-Waite reduction to ``r`` in
``[-ln2/2, ln2/2]``, a degree-7 Taylor polynomial (truncation error 5e-9, below float32's half
ulp), and the power of two built from its exponent bits. It differs from NumPy's ``exp`` by an ulp
or two. ReLU needs no exp: NumPy's ``maximum(x, 0)`` and ``where`` take 4x as long as its one pass.

GELU: the erf pieces are `erf`'s float32 fits, evaluated by the same Horner steps, each multiply
and add contracted into one fused multiply-add (``fastmath={"contract"}``: one rounding instead of
two, so within an ulp of the NumPy path's float32 steps rather than their bits; 1.5x faster,
forward and backward, on ViT-tiny's 197 x 768 activations: docs/benchmarks-log.md, "transformers
at one thread"). Sigmoid: the NumPy path's formula,
``1 / (1 + e)`` for x >= 0 and ``e / (1 + e)`` below with ``e = exp(-|x|)``, so it never overflows
and keeps full relative precision in both tails (subnormal results included); its gradient
``grad * (s * (1 - s))`` is the NumPy path's ops, the same bits. NaN and infinities give what the
NumPy paths give.

``*_range`` kernels compute elements ``lo`` to ``hi``; the launchers run chunks of them on numba's
TBB pool (`burn_ndarray.runtime.split.run_ranges`), each element by the same code: the same bits at
any thread count.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core.extending import intrinsic

from burn_ndarray.kernels.erf import _LARGE_32, _SMALL_32
from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any
_inline = njit(inline="always", error_model="numpy")
# Multiply-adds fused (contraction only: no reassociation, no finite-math assumption, so NaN and
# infinities behave as without it): the polynomials are chains of ``acc * s + c``, and fused they
# take one instruction and one rounding each. Inlined helpers take their caller's flags.
_fma = njit(cache=True, error_model="numpy", nogil=True, fastmath={"contract"})

_f32 = np.float32
_SMALL = tuple(_f32(c) for c in _SMALL_32)
_LARGE = tuple(_f32(c) for c in _LARGE_32)
_EXP_TAYLOR = tuple(_f32(1.0 / math.factorial(k)) for k in range(7, -1, -1))  # highest first
_LOG2E = _f32(1.0 / math.log(2.0))
# ln 2 split so that n * _LN2_HI is exact for the |n| <= 126 used here (Cody and Waite).
_LN2_HI = _f32(0.693359375)
_LN2_LO = _f32(math.log(2.0) - 0.693359375)
_EXP_MAX = _f32(87.0)  # exp(-87) ~ 1.6e-38, still a normal float32
_EXP_WIDE_MAX = _f32(104.0)  # exp(-104) ~ 6.8e-46 rounds to 0 in float32
_SQRT1_2 = _f32(1.0 / math.sqrt(2.0))
_INV_SQRT_2PI = _f32(1.0 / math.sqrt(2.0 * math.pi))
# Tanh GELU's constants: x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) (Hendrycks and Gimpel)
_GELU_K = _f32(0.044715)
_GELU_K3 = _f32(3.0 * 0.044715)
_GELU_C2 = _f32(2.0 * math.sqrt(2.0 / math.pi))
_ZERO, _HALF, _ONE, _TWO, _SIX = _f32(0.0), _f32(0.5), _f32(1.0), _f32(2.0), _f32(6.0)


@intrinsic
def _float32_from_bits(typingctx: Any, bits: Any) -> Any:
    """The float32 whose IEEE bits are the int32 `bits` (no conversion, a register reinterpret)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@_inline
def _exp_neg(a: Any) -> Any:
    """``exp(-a)`` for float32 `a` in ``[0, 87]``."""
    y = -a
    n = np.floor(y * _LOG2E + _HALF)  # the nearest integer to y / ln 2, in [-126, 0]
    r = (y - n * _LN2_HI) - n * _LN2_LO
    p = _EXP_TAYLOR[0]
    for c in _EXP_TAYLOR[1:]:
        p = p * r + c
    # p * 2**n (numba passes no typing context at the call: mypy sees the intrinsic's signature)
    return p * _float32_from_bits(np.int32(n + _f32(127.0)) << 23)  # type: ignore[call-arg]


@_inline
def _exp_neg_wide(a: Any) -> Any:
    """``exp(-a)`` for float32 `a` >= 0 (or NaN), subnormal results included: the power of two is
    built in two normal halves, so the last product rounds once into the subnormal range; 0 from
    ``a`` = 104 on, as NumPy's float32 exp."""
    y = -min(a, _EXP_WIDE_MAX)  # NaN -> the maximum: the callers keep NaN themselves
    n = np.floor(y * _LOG2E + _HALF)  # in [-150, 0]
    r = (y - n * _LN2_HI) - n * _LN2_LO
    p = _EXP_TAYLOR[0]
    for c in _EXP_TAYLOR[1:]:
        p = p * r + c
    k = np.int32(n)
    half = k >> 1  # floor(k / 2) >= -75: both scales are normal float32
    low: Any = _float32_from_bits((half + np.int32(127)) << 23)  # type: ignore[call-arg]
    high: Any = _float32_from_bits((k - half + np.int32(127)) << 23)  # type: ignore[call-arg]
    return (p * high) * low


@_inline
def _sigmoid(v: Any) -> Any:
    """``1 / (1 + e)`` for v >= 0, ``e / (1 + e)`` below, ``e = exp(-|v|)``; NaN for NaN."""
    e = _exp_neg_wide(abs(v))
    s = (_ONE if v >= _ZERO else e) / (_ONE + e)
    return s if v == v else v


@_inline
def _horner(coeffs: Any, s: Any) -> Any:
    """`erf._horner`'s steps on one float32."""
    acc = s * coeffs[0]
    for c in coeffs[1:-1]:
        acc = (acc + c) * s
    return acc + coeffs[-1]


@_inline
def _cdf(v: Any) -> Any:
    """``(1 + erf(v / sqrt(2))) / 2``: `erf.erf`'s float32 pieces, chosen without a branch."""
    x = v * _SQRT1_2
    ax = abs(x)
    t = min(ax, _TWO)  # NaN -> 2: the small piece then stays NaN through ``* x``
    small = _horner(_SMALL, t * t * _HALF - _ONE) * x
    xt = min(max(ax, _TWO), _SIX)  # erf is +-1 from 6 on
    large = _ONE - _exp_neg(xt * xt) * _horner(_LARGE, _SIX / xt - _TWO)
    large = large if xt < _SIX else _ONE
    large = large if x >= _ZERO else -large
    erf = large if ax >= _TWO else small
    return (erf + _ONE) * _HALF


@jit
def relu_range(lo: int, hi: int, x: Array, out: Array, zero: Any) -> None:
    """NumPy's ``maximum(x, 0)`` for elements `lo` to `hi` of 1-D arrays."""
    xs, outs = x[lo:hi], out[lo:hi]  # indices from 0: no negative-index wrap, so the loop vectorizes
    for i in range(outs.size):
        v = xs[i]
        outs[i] = v if v > zero or v != v else zero  # np.maximum(x, 0): NaN kept, -0.0 -> +0.0


@jit
def relu_backward_range(lo: int, hi: int, output: Array, grad: Array, out: Array, zero: Any) -> None:
    """``where(output > 0, grad, 0)`` for elements `lo` to `hi` of 1-D arrays of one dtype."""
    os, gs, outs = output[lo:hi], grad[lo:hi], out[lo:hi]
    for i in range(outs.size):
        outs[i] = gs[i] if os[i] > zero else zero


@jit_parallel
def relu(parts: int, x: Array, out: Array, zero: Any) -> None:
    """`relu_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        relu_range(lo, hi, x, out, zero)


@jit_parallel
def relu_backward(parts: int, output: Array, grad: Array, out: Array, zero: Any) -> None:
    """`relu_backward_range` over all of `output`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        relu_backward_range(lo, hi, output, grad, out, zero)


@_fma
def gelu_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = gelu(x[i])`` for `i` from `lo` to `hi` (1-D float32 arrays)."""
    xs, outs = x[lo:hi], out[lo:hi]  # indices from 0: no negative-index wrap, so loads vectorize
    for i in range(outs.size):
        v = xs[i]
        outs[i] = _cdf(v) * v


@_fma
def gelu_backward_range(lo: int, hi: int, x: Array, grad: Array, out: Array) -> None:
    """``out[i] = grad[i] * gelu'(x[i])``, ``gelu'(x) = cdf(x) + x * exp(-x**2 / 2) / sqrt(2 pi)``."""
    xs, grads, outs = x[lo:hi], grad[lo:hi], out[lo:hi]
    for i in range(outs.size):
        v = xs[i]
        half_square = _HALF * v * v
        density = _exp_neg(min(half_square, _EXP_MAX))
        density = density if half_square < _EXP_MAX else _ZERO  # NumPy's exp underflows to 0
        outs[i] = (density * _INV_SQRT_2PI * v + _cdf(v)) * grads[i]


@_fma
def gelu_tanh_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = x[i] * sigmoid(2u)``, ``2u = ((x^2 k + 1) x) 2c``, for `i` from `lo` to `hi`: the
    NumPy path's steps (its stable sigmoid, so the negative tail keeps full relative precision),
    multiply-adds fused."""
    xs, outs = x[lo:hi], out[lo:hi]
    for i in range(outs.size):
        v = xs[i]
        outs[i] = _sigmoid((v * v * _GELU_K + _ONE) * v * _GELU_C2) * v


@_fma
def gelu_tanh_backward_range(lo: int, hi: int, x: Array, grad: Array, out: Array) -> None:
    """``out[i] = grad[i] * (s + x s (1 - s) 2c (1 + 3k x^2))`` with ``s = sigmoid(2u)``: the
    contract default's steps (``gelu_approximate_backward``) on one element, multiply-adds fused."""
    xs, grads, outs = x[lo:hi], grad[lo:hi], out[lo:hi]
    for i in range(outs.size):
        v = xs[i]
        x2 = v * v
        s = _sigmoid((x2 * _GELU_K + _ONE) * v * _GELU_C2)
        du = (x2 * _GELU_K3 + _ONE) * _GELU_C2
        outs[i] = grads[i] * (s + v * (s * (_ONE - s)) * du)


@jit_parallel
def gelu_tanh(parts: int, x: Array, out: Array) -> None:
    """`gelu_tanh_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        gelu_tanh_range(lo, hi, x, out)


@jit_parallel
def gelu_tanh_backward(parts: int, x: Array, grad: Array, out: Array) -> None:
    """`gelu_tanh_backward_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        gelu_tanh_backward_range(lo, hi, x, grad, out)


@jit_parallel
def gelu(parts: int, x: Array, out: Array) -> None:
    """`gelu_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        gelu_range(lo, hi, x, out)


@jit_parallel
def gelu_backward(parts: int, x: Array, grad: Array, out: Array) -> None:
    """`gelu_backward_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        gelu_backward_range(lo, hi, x, grad, out)


@jit
def sigmoid_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = sigmoid(x[i])`` for `i` from `lo` to `hi` (1-D float32 arrays)."""
    xs, outs = x[lo:hi], out[lo:hi]
    for i in range(outs.size):
        outs[i] = _sigmoid(xs[i])


@jit
def sigmoid_backward_range(lo: int, hi: int, output: Array, grad: Array, out: Array) -> None:
    """``out[i] = grad[i] * (s * (1 - s))`` with ``s = output[i]``, the sigmoid's output."""
    outputs, grads, outs = output[lo:hi], grad[lo:hi], out[lo:hi]
    for i in range(outs.size):
        s = outputs[i]
        outs[i] = grads[i] * (s * (_ONE - s))


@jit
def silu_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = sigmoid(x[i]) * x[i]``."""
    xs, outs = x[lo:hi], out[lo:hi]
    for i in range(outs.size):
        v = xs[i]
        outs[i] = _sigmoid(v) * v


@jit
def hard_swish_range(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = x[i] * min(max(x[i] + 3, 0), 6) / 6`` in the NumPy path's order (the same bits;
    NaN kept, as NumPy's maximum and minimum keep it)."""
    xs, outs = x[lo:hi], out[lo:hi]
    three, six, zero = xs.dtype.type(3), xs.dtype.type(6), xs.dtype.type(0)
    for i in range(outs.size):
        v = xs[i]
        t = v + three
        t = t if t > zero or t != t else zero
        t = t if t < six or t != t else six
        outs[i] = (t / six) * v


@jit_parallel
def hard_swish(parts: int, x: Array, out: Array) -> None:
    """`hard_swish_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        hard_swish_range(lo, hi, x, out)


@jit_parallel
def sigmoid(parts: int, x: Array, out: Array) -> None:
    """`sigmoid_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        sigmoid_range(lo, hi, x, out)


@jit_parallel
def sigmoid_backward(parts: int, output: Array, grad: Array, out: Array) -> None:
    """`sigmoid_backward_range` over all of `output`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        sigmoid_backward_range(lo, hi, output, grad, out)


@jit_parallel
def silu(parts: int, x: Array, out: Array) -> None:
    """`silu_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        silu_range(lo, hi, x, out)
