"""The activation family (`burn.backend.ops.activation`) on NumPy arrays: the shared ops
(`burn.backend.xp.activation`: hard sigmoid, softmax, log-softmax) and NumPy's own
(`ActivationOps`), with the compiled and threaded paths of large tensors in front of them
(`ThreadedActivationOps`).

NumPy's own: a few whole-array NumPy passes each. In-place updates (``*=``, ``out=``) only ever
touch temporaries created in the same function, never an input. float16 and bfloat16 go through
float32 where the formula subtracts nearly equal numbers, and are cast back.

Compiled and threaded: ReLU and its gradient one compiled pass at any thread count; float32 GELU
(erf and tanh forms), sigmoid and SiLU (forward and backward) one compiled pass each with its
own exp, and hard swish (forward, NumPy's bits), split on the TBB pool (`burn_ndarray.kernels.activation`);
transcendental activations and softmax otherwise on NumPy chunks on the Python pool (NumPy's SIMD
exp/log/tanh are not numba's: other bits). Results are the
same bits at any thread count. float64 keeps the NumPy paths (GELU's float64 erf fit, NumPy's
float64 exp); so do half-float sigmoid gradients, which the NumPy path computes in their own dtype.
One thread: GELU about 6x faster (4M elements: 28 -> 4.8 ms forward, 34 -> 6.4 ms backward),
sigmoid 4x on 4M elements (8.8 -> 2.1 ms) and 2.5x on a [32, 768] gate block (42 -> 17 us).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from burn.backend.ops.activation import SELU_ALPHA, SELU_SCALE
from burn.backend.ops.activation import ActivationOps as DefaultActivationOps
from burn.backend.xp.activation import XpActivationOps, work
from burn_ndarray import kernels
from burn_ndarray.kernels.erf import SMALL_SIZE, erf
from burn_ndarray.ops import rounding
from burn_ndarray.ops.rounding import to_dtype
from burn_ndarray.ops.select import where
from burn_ndarray.runtime import split, threads
from burn_ndarray.runtime.dtypes import BF16, BF16_SCALAR, F16, F32, F64, LOW

Array = Any
_ndarray = np.ndarray
_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_SQRT_2_OVER_PI = 2.0 * math.sqrt(2.0 / math.pi)
# ReLU and its backward pass run compiled from this size, at any thread count (NumPy's maximum(x, 0) and
# where() take longer than one compiled pass: docs/benchmarks-log.md, burn-ndarray measurements); below, small
# models never load numba.
RELU_COMPILED_MIN_SIZE = 1 << 16

# float32 GELU and its gradient run compiled from this size, faster than NumPy's from 1K elements
# (docs/benchmarks-log.md, burn-ndarray measurements); below, small models never load numba.
GELU_COMPILED_MIN_SIZE = 1 << 10

# float32 sigmoid, its gradient and SiLU run compiled from this size: even with NumPy at 1K
# elements, faster above (docs/benchmarks-log.md, burn-ndarray measurements).
SIGMOID_COMPILED_MIN_SIZE = 1 << 10

# float32 hard swish runs compiled from this size: one pass instead of NumPy's four (and their
# temporaries), 10x faster on MobileNetV3's 16x112x112 map (docs/benchmarks-log.md, "MobileNetV3
# at batch 1").
HARD_SWISH_COMPILED_MIN_SIZE = 1 << 10

# Element-wise ops of many NumPy passes (float64 GELU) run in blocks of at least this many elements,
# whose temporaries stay in cache between the passes (docs/benchmarks-log.md, burn-ndarray measurements).
BLOCK = 1 << 17

# Elements per thread before a compiled pass is split, on the TBB pool and on the Python pool:
# where the split GELU starts to win (docs/benchmarks-log.md, burn-ndarray measurements).
NATIVE_PER_THREAD = 1 << 12
PER_THREAD = 1 << 17
# Sigmoid's pass is a few times cheaper than GELU's, so the TBB split pays later (docs/benchmarks-log.md,
# burn-ndarray measurements).
SIGMOID_NATIVE_PER_THREAD = 1 << 15
_HALF_FLOATS = (F16, BF16)


_work = partial(work, np)  # `x` as an array, float32 for float16/bfloat16


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """``exp(min(x, 0)) / (1 + exp(-|x|))``: never overflows, full relative precision in both
    tails (``1/(1+e)`` for x >= 0, ``e/(1+e)`` for x < 0), and no per-element branch or select."""
    if x.ndim == 0:  # NumPy returns scalars for 0-d: the in-place updates below need arrays
        return _sigmoid(x.reshape(1)).reshape(())
    # Three allocations, everything else in place on our own temporaries: fresh large buffers
    # cost page faults on top of the copy.
    den = np.abs(x)
    np.negative(den, out=den)
    np.exp(den, out=den)
    den += 1.0
    out = np.minimum(x, 0)
    np.exp(out, out=out)
    out /= den
    return out


def _softplus_unit(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    if x.ndim == 0:
        return _softplus_unit(x.reshape(1)).reshape(())
    tail = np.abs(x)
    np.negative(tail, out=tail)
    np.exp(tail, out=tail)
    np.log1p(tail, out=tail)
    out = np.maximum(x, 0)
    out += tail
    return out  # type: ignore[no-any-return]


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


class ActivationOps(XpActivationOps):
    """The activation ops of `burn_ndarray.NdArray`."""

    def relu(self, x: Array) -> Array:
        # NumPy takes a Python 0 faster than the shared typed zero (docs/benchmarks-log.md, burn-ndarray
        # measurements); bfloat16 (ml_dtypes) needs a zero of its own type.
        return np.maximum(x, BF16_SCALAR(0) if x.dtype is BF16 else 0)

    def relu_backward(self, output: Array, grad: Array) -> Array:
        return where(output > 0, grad, grad.dtype.type(0))

    def leaky_relu(self, x: Array, negative_slope: float) -> Array:
        return where(x >= 0, x, x * (BF16_SCALAR(negative_slope) if x.dtype is BF16 else negative_slope))

    def gelu(self, x: Array) -> Array:
        if x.size <= SMALL_SIZE:  # per-op overhead dominates: one Python pass beats ~8 NumPy calls
            values = [v * (0.5 + 0.5 * math.erf(v * _SQRT1_2)) for v in np.ravel(x).tolist()]
            return np.array(values, dtype=np.float64).astype(x.dtype).reshape(x.shape)
        w = _work(x)
        cdf = erf(w * _SQRT1_2)
        cdf += 1.0
        cdf *= 0.5
        cdf *= w
        return cdf.astype(x.dtype, copy=False)

    def gelu_backward(self, x: Array, grad: Array) -> Array:
        w = _work(x)
        cdf = erf(w * _SQRT1_2)
        cdf += 1.0
        cdf *= 0.5
        pdf = np.exp(-0.5 * w * w)
        pdf *= _INV_SQRT_2PI
        pdf *= w
        pdf += cdf
        return (pdf * grad).astype(np.result_type(x.dtype, grad.dtype), copy=False)

    def sigmoid(self, x: Array) -> Array:
        return _sigmoid(_work(x)).astype(x.dtype, copy=False)

    def sigmoid_backward(self, output: Array, grad: Array) -> Array:
        return grad * (output * (1 - output))

    def log_sigmoid(self, x: Array) -> Array:
        w = _work(x)
        # log(sigmoid(x)) = -softplus(-x) = min(x, 0) - log1p(exp(-|x|))
        return (np.minimum(w, 0) - np.log1p(np.exp(-np.abs(w)))).astype(x.dtype, copy=False)

    def silu(self, x: Array) -> Array:
        w = _work(x)
        out = _sigmoid(w)
        out *= w
        return out.astype(x.dtype, copy=False)

    def softplus(self, x: Array, beta: float) -> Array:
        w = _work(x)
        if beta == 1.0:
            return _softplus_unit(w).astype(x.dtype, copy=False)
        return (_softplus_unit(w * beta) / beta).astype(x.dtype, copy=False)

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


_single: Any = ActivationOps
"""The NumPy ops that `ThreadedActivationOps` falls back to, called with the backend."""


class ThreadedActivationOps:
    """The activations' compiled and threaded paths, before `ActivationOps` in
    `burn_ndarray.NdArray`'s bases; each falls back to the NumPy op (next in the MRO) for small or
    unusual operands, after one size check (the per-op overhead on tiny tensors stays that of the
    NumPy op)."""

    def relu(self, x: Array) -> Array:
        if x.size >= RELU_COMPILED_MIN_SIZE:
            if x.dtype in LOW:
                # bfloat16: one compiled pass on its bits. float16: float32's compiled pass,
                # narrowed back exactly (NumPy runs element-wise ops on float16/bfloat16 one value
                # at a time, several times slower than the casts). The same bits either way.
                out = rounding.relu(x)
                if out is not None:
                    return out
                return to_dtype(ThreadedActivationOps.relu(self, x.astype(F32)), x.dtype)
            out = _compiled_relu(x, None)
            if out is not None:
                return out
            if x.size >= 2 * split.UFUNC_PER_THREAD:
                out = _map_rows(np.maximum, x, x.dtype.type(0), per_thread=split.UFUNC_PER_THREAD)
                if out is not None:
                    return out
        return _single.relu(self, x)

    def relu_backward(self, output: Array, grad: Array) -> Array:
        same_shape = output.__class__ is _ndarray and output.shape == grad.shape
        if grad.size >= RELU_COMPILED_MIN_SIZE and same_shape:
            if grad.dtype in LOW or output.dtype in LOW:  # exact: each value is grad's or 0
                out = rounding.relu_backward(output, grad)
                if out is not None:
                    return out
                wide = ThreadedActivationOps.relu_backward(self, output.astype(F32), grad.astype(F32))
                return to_dtype(wide, np.result_type(output, grad))
            out = _compiled_relu(output, grad)
            if out is not None:
                return out
            if grad.size >= 2 * split.UFUNC_PER_THREAD:
                single = _single.relu_backward
                per_thread = split.UFUNC_PER_THREAD
                out = _map_rows(lambda g, o: single(self, o, g), grad, output, per_thread=per_thread)
                if out is not None:
                    return out
        return _single.relu_backward(self, output, grad)

    def gelu(self, x: Array) -> Array:
        out = compiled_gelu(x) if x.size >= GELU_COMPILED_MIN_SIZE else None
        if out is not None:
            return out
        if x.size >= 2 * BLOCK:
            out = _blocked(lambda part: _single.gelu(self, part), x)
            if out is not None:
                return out
        return _single.gelu(self, x)

    def gelu_backward(self, x: Array, grad: Array) -> Array:
        out = compiled_gelu(x, grad) if x.size >= GELU_COMPILED_MIN_SIZE else None
        if out is not None:
            return out
        if x.size >= 2 * BLOCK:
            out = _blocked(lambda a, b: _single.gelu_backward(self, a, b), x, grad)
            if out is not None:
                return out
        return _single.gelu_backward(self, x, grad)

    def gelu_approximate(self, x: Array) -> Array:
        out = compiled_gelu_tanh(x) if x.size >= GELU_COMPILED_MIN_SIZE else None
        return _single.gelu_approximate(self, x) if out is None else out

    def gelu_approximate_backward(self, x: Array, grad: Array) -> Array:
        out = compiled_gelu_tanh(x, grad) if x.size >= GELU_COMPILED_MIN_SIZE else None
        if out is not None:
            return out
        backend: Any = self  # a mixin of the Backend the default op runs on
        return DefaultActivationOps.gelu_approximate_backward(backend, x, grad)

    def sigmoid(self, x: Array) -> Array:
        out = compiled_sigmoid(x) if x.size >= SIGMOID_COMPILED_MIN_SIZE else None
        return _single.sigmoid(self, x) if out is None else out

    def sigmoid_backward(self, output: Array, grad: Array) -> Array:
        large = output.size >= SIGMOID_COMPILED_MIN_SIZE
        out = compiled_sigmoid_backward(output, grad) if large else None
        return _single.sigmoid_backward(self, output, grad) if out is None else out

    def silu(self, x: Array) -> Array:
        out = compiled_silu(x) if x.size >= SIGMOID_COMPILED_MIN_SIZE else None
        return _single.silu(self, x) if out is None else out

    def hard_swish(self, x: Array) -> Array:
        large = x.size >= HARD_SWISH_COMPILED_MIN_SIZE
        out = _compiled("hard_swish", x, None, True, SIGMOID_NATIVE_PER_THREAD) if large else None
        return _single.hard_swish(self, x) if out is None else out

    def softmax(self, x: Array, dim: int) -> Array:
        if x.size >= 2 * split.ROWWISE_PER_THREAD:
            out = _rowwise(lambda part: _single.softmax(self, part, dim), x, dim)
            if out is not None:
                return out
        return _single.softmax(self, x, dim)

    def log_softmax(self, x: Array, dim: int) -> Array:
        if x.size >= 2 * split.ROWWISE_PER_THREAD:
            out = _rowwise(lambda part: _single.log_softmax(self, part, dim), x, dim)
            if out is not None:
                return out
        return _single.log_softmax(self, x, dim)


def compiled_gelu(x: Array, grad: Array | None = None) -> Array | None:
    """GELU of `x`, or with `grad` its backward pass ``grad * gelu'(x)``, in `x`'s memory layout;
    None for the caller's NumPy path (see `_compiled`)."""
    # A bfloat16 input (autocast): widened a block at a time inside one pass, not a whole copy.
    if grad is None:
        out = rounding.gelu(x)
        return _compiled("gelu", x, None, True, NATIVE_PER_THREAD) if out is None else out
    out = rounding.gelu_backward(x, grad)
    return _compiled("gelu_backward", x, grad, True, NATIVE_PER_THREAD) if out is None else out


def compiled_gelu_tanh(x: Array, grad: Array | None = None) -> Array | None:
    """Tanh GELU of `x`, or with `grad` its backward pass, in `x`'s memory layout; None for the
    caller's path (see `_compiled`)."""
    if grad is None:
        return _compiled("gelu_tanh", x, None, True, NATIVE_PER_THREAD)
    return _compiled("gelu_tanh_backward", x, grad, True, NATIVE_PER_THREAD)


def compiled_sigmoid(x: Array) -> Array | None:
    """``1 / (1 + exp(-x))`` in `x`'s memory layout; None for the caller's NumPy path."""
    return _compiled("sigmoid", x, None, True, SIGMOID_NATIVE_PER_THREAD)


def compiled_sigmoid_backward(output: Array, grad: Array) -> Array | None:
    """``grad * (output * (1 - output))`` for float32 (the NumPy path's bits); None otherwise."""
    return _compiled("sigmoid_backward", output, grad, False, SIGMOID_NATIVE_PER_THREAD)


def compiled_silu(x: Array) -> Array | None:
    """``x * sigmoid(x)`` in `x`'s memory layout; None for the caller's NumPy path."""
    return _compiled("silu", x, None, True, SIGMOID_NATIVE_PER_THREAD)


def _compiled(
    kernel: str, x: Array, other: Array | None, half_floats: bool, native_per_thread: int
) -> Array | None:
    """`kernel` of `burn_ndarray.kernels.activation` over `x` (and `other`, the gradient), split on the TBB
    pool from `native_per_thread` elements per thread; or None (the caller takes the NumPy path)
    unless the operands are NumPy arrays of one dtype, float32 (or, when `half_floats`, float16 /
    bfloat16, alone or beside float32, as an autocast step's half activation and float32 gradient:
    computed in float32, the result in the wider dtype), and numba is installed. Operands whose
    elements fill one block of memory in the same layout are read in place and the result takes
    that layout; others are copied in C order first (a [32, 768] gate view: copy and pass 19 us,
    the NumPy path 48)."""
    dtype = x.dtype
    if x.__class__ is not np.ndarray or (dtype is not F32 and not (half_floats and dtype in _HALF_FLOATS)):
        return None
    if other is not None and other.dtype is not dtype:
        if not half_floats or other.dtype not in _HALF_FLOATS and other.dtype is not F32:
            return None
        dtype = np.result_type(dtype, other.dtype)  # a half beside float32: float32, no rounding
    if other is not None and other.__class__ is not np.ndarray:
        return None
    compiled = kernels.load("activation")
    if compiled is None:
        return None
    same_f32 = x.dtype is F32 and (other is None or other.dtype is F32)
    flat = split.flat_in_memory_order(x) if same_f32 else None
    if flat is not None and (other is None or other.strides == x.strides):
        # in x's layout, its elements filling one block of memory (a channels-last view too)
        out = np.empty_like(x)
        out_flat = out.ravel(order="K")  # a view whose order is flat's
        other_flat = None if other is None else other.ravel(order="K")
    else:  # half floats, views with gaps (an LSTM's gates), layouts that differ: C-ordered copies
        flat = np.ascontiguousarray(x, F32).reshape(-1)
        out = np.empty(x.shape, F32)
        out_flat = out.reshape(-1)
        other_flat = None if other is None else np.ascontiguousarray(other, F32).reshape(-1)
    serial, parallel = getattr(compiled, f"{kernel}_range"), getattr(compiled, kernel)
    parts = split.compiled_parts(flat.size, PER_THREAD, native_per_thread)
    if other_flat is None:
        split.run_ranges(serial, parallel, flat.size, parts, flat, out_flat)
    else:
        split.run_ranges(serial, parallel, flat.size, parts, flat, other_flat, out_flat)
    return to_dtype(out, dtype)


def _compiled_relu(x: Array, grad: Array | None) -> Array | None:
    """ReLU of `x` (or, with `grad`, its backward pass where `x` is the output) by the compiled
    kernels of `burn_ndarray.kernels.activation` (one memory-bound pass, split as the arithmetic
    ops are); the result has `x`'s memory layout. None unless the operands are float32/float64
    arrays of one dtype that fill one block of memory in the same layout (and numba is installed)."""
    dtype = x.dtype
    if x.__class__ is not _ndarray or (dtype is not F32 and dtype is not F64):
        return None
    if grad is not None and (grad.__class__ is not _ndarray or grad.dtype is not dtype):
        return None
    if grad is not None and grad.strides != x.strides:  # the flat views must line up
        return None
    flat = split.flat_in_memory_order(x)
    if flat is None:
        return None
    compiled = kernels.load("activation")
    if compiled is None:
        return None
    out = np.empty_like(x)  # x's layout: its flat view lines up with x's
    out_flat, zero, parts = out.ravel(order="K"), dtype.type(0), split.copy_parts(x.size)
    if grad is None:
        split.run_ranges(compiled.relu_range, compiled.relu, x.size, parts, flat, out_flat, zero)
    else:
        args = (flat, grad.ravel(order="K"), out_flat, zero)
        split.run_ranges(compiled.relu_backward_range, compiled.relu_backward, x.size, parts, *args)
    return out


def _map_rows(
    fn: Callable[..., Array], x: Array, *others: Array, per_thread: int = split.TRANSCENDENTAL_PER_THREAD
) -> Array | None:
    """``fn(x, *others)`` computed chunk by chunk of the first axis on the pool, or None when
    `x` is small, not float32/float64, or there is one thread. `fn` must treat rows
    independently (element-wise, or reducing over a later axis)."""
    if x.__class__ is not _ndarray or x.size < 2 * per_thread:
        return None
    dtype = x.dtype
    if dtype is not F32 and dtype is not F64:
        return None
    chunks = split.chunks(x.shape, x.size, per_thread)
    if chunks is None:
        return None
    parts: list[Array] = [None] * len(chunks)
    ndim, rows = x.ndim, x.shape[0]

    def task(i: int) -> None:
        chunk = chunks[i]
        parts[i] = fn(x[chunk], *(split.share(o, chunk, ndim, rows) for o in others))

    threads.run(lambda chunk: task(chunk.start), [slice(i, i + 1) for i in range(len(chunks))])
    return np.concatenate(parts, axis=0)


def _blocked(fn: Callable[..., Array], x: Array, *others: Array) -> Array | None:
    """``fn(x, *others)`` (element-wise, many NumPy passes) computed block by block of `BLOCK`
    elements or more, so that each block's temporaries stay in cache across the passes, on as
    many threads as `split.TRANSCENDENTAL_PER_THREAD` allows: the same bits as one call on the whole.
    None unless every operand is a C-contiguous float32/float64 array of `x`'s shape and dtype."""
    dtype = x.dtype
    if x.__class__ is not _ndarray or (dtype is not F32 and dtype is not F64) or not x.flags.c_contiguous:
        return None
    for o in others:
        if o.__class__ is not _ndarray or o.shape != x.shape or o.dtype is not dtype:
            return None
        if not o.flags.c_contiguous:
            return None
    out = np.empty(x.shape, dtype)
    flat = [a.reshape(-1) for a in (x, *others)]
    out_flat = out.reshape(-1)

    def task(chunk: slice) -> None:
        length = chunk.stop - chunk.start
        for block in threads.split(length, max(1, length // BLOCK)):  # each BLOCK or longer
            part = slice(chunk.start + block.start, chunk.start + block.stop)
            out_flat[part] = fn(*(a[part] for a in flat))

    threads.run(task, threads.split(x.size, threads.parts(x.size, split.TRANSCENDENTAL_PER_THREAD)))
    return out


def _rowwise(fn: Callable[[Array], Array], x: Array, dim: int) -> Array | None:
    """`fn` (reducing along `dim`) over chunks of the first axis, when `dim` is not that axis."""
    if x.__class__ is not _ndarray or x.ndim < 2 or dim % x.ndim == 0:
        return None
    return _map_rows(fn, x, per_thread=split.ROWWISE_PER_THREAD)
