"""Threaded paths of large ops: element-wise arithmetic and sums along the last dim by compiled
kernels on numba's TBB pool when it runs (`_tbb`, `_kernels_parallel`), else on NumPy chunks (and
the serial row kernel) on the Python pool (`_threads`); transcendental activations and softmax on
NumPy chunks on the Python pool (NumPy's SIMD exp/log/tanh are not numba's: other bits), except
float32 GELU, sigmoid and SiLU, one compiled pass each with its own exp
(`_compiled_activations`).

Small tensors keep the single-threaded path at the cost of one size check: the ops whose
threaded path only helps with several threads (`UFUNC_OPS`) are bound to the plain ufunc itself
while the count is 1 (`_bind`). The thresholds come from measured costs per element and per
hand-off (docs/benchmarks.md, "Threaded kernels"; tools/bench_thresholds.py): below them, handing
work to threads costs more than it saves.

Chunks split the result along its first axis; an operand whose first axis broadcasts (or that has
fewer dims) is passed whole to every chunk. Element-wise results and row-wise results (softmax on
the last dim) are the same bits as the single-threaded ops at any thread count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from burn_ndarray import _tbb, _threads
from burn_ndarray._activation_ops import ActivationOps
from burn_ndarray._dtypes import F32, F64
from burn_ndarray._float_ops import FloatOps
from burn_ndarray._gemv_sum import MAX_SIZE as GEMV_SUM_MAX_SIZE
from burn_ndarray._gemv_sum import gemv_sum

Array = Any
_ndarray = np.ndarray
_add_reduce = np.add.reduce
# Elements each thread must get before an op is split, from tools/bench_thresholds.py: where
# the split time drops below the single-threaded time. Handing a chunk to a pool thread and
# getting it back costs 20 us on one 2-core AVX2 EPYC (2026-11-24) and 80-100 us on a 2-core
# AVX-512 EPYC VM (2026-11-26); these are the second machine's break-even points, so no machine
# runs an op slower split than whole (the first loses some gain on mid sizes). Below 2x these,
# ops run on the caller alone.
UFUNC_PER_THREAD = 1 << 20  # binary arithmetic: one cheap pass over memory (1M: ratio 0.98)
TRANSCENDENTAL_PER_THREAD = 1 << 18  # exp, log, tanh, sqrt, activations (256K: 1.14, 1M: 0.71)
ROWWISE_PER_THREAD = 1 << 17  # softmax / log-softmax over chunks of rows (256K: 0.91)
ROW_SUM_PER_THREAD = 1 << 21  # the compiled row sum is fast: a chunk must be large (4M: 0.97)
# The same on the TBB pool (`_tbb`), whose hot workers take a chunk in microseconds: splitting
# pays from 256K elements (2 threads, AVX-512 EPYC VM: add 256K 0.94, 1M 0.58; row sum 256K 0.83,
# 1M 0.66; 64K: 1.7-1.8).
NATIVE_UFUNC_PER_THREAD = 1 << 17
NATIVE_ROW_SUM_PER_THREAD = 1 << 17
# The element-wise ops of `_kernels_parallel`, by number (tested outside its loops).
ADD, SUB, MUL, DIV = 0, 1, 2, 3
# ReLU and its backward pass run compiled from this size, at any thread count (NumPy's
# maximum(x, 0) and where() take 4x as long as one compiled pass here); below, small models never
# load numba.
RELU_COMPILED_MIN_SIZE = 1 << 16
# float32 GELU and its gradient run compiled from this size (`_compiled_activations`: 1K elements
# 5.4 against 38 us, 4M 2.5 against 11 ms at 2 threads); below, small models never load numba.
GELU_COMPILED_MIN_SIZE = 1 << 10
# float32 sigmoid, its gradient and SiLU run compiled from this size (`_compiled_activations`:
# sigmoid 1K elements 5.1 against 5.3 us, 4K 6.7 against 10.3, 64K 38 against 109, 1 thread).
SIGMOID_COMPILED_MIN_SIZE = 1 << 10
# Element-wise ops of many NumPy passes (float64 GELU) run in blocks of at least this many elements,
# whose temporaries stay in cache between the passes (4M float32 GELU, 1 thread: 28 -> 14 ms).
BLOCK = 1 << 17
# The compiled row sum beats NumPy's from this size on, even on one thread.
ROW_SUM_MIN_SIZE = 1 << 14
# A sum along a middle dim with fewer leading indices than chunks splits its columns, when each
# chunk gets at least this many.
MIDDLE_SUM_MIN_COLUMNS = 64

_kernels: ModuleType | None = None
_kernels_missing = False


def kernels() -> ModuleType | None:
    """The compiled kernels, imported on first use; None when numba is not installed."""
    global _kernels, _kernels_missing
    if _kernels is None and not _kernels_missing:
        try:
            from burn_ndarray import _kernels as loaded
        except ImportError:
            _kernels_missing = True
            return None
        _kernels = loaded
    return _kernels


def compiled_parts(size: int, per_thread: int, native_per_thread: int) -> int:
    """How many chunks a compiled kernel over `size` elements runs in: `native_per_thread`
    elements per chunk on the TBB pool when it runs, else `per_thread` on the Python pool."""
    if size >= 2 * native_per_thread and _threads.get_num_threads() > 1 and _tbb.ready():
        return _threads.parts(size, native_per_thread)
    return _threads.parts(size, per_thread)


def _chunks(shape: tuple[int, ...], size: int, per_thread: int) -> list[slice] | None:
    """Slices of the first axis, one per thread that `size` elements warrant; None for one."""
    count = _threads.parts(size, per_thread)
    if count < 2 or not shape or shape[0] < 2:
        return None
    return _threads.split(shape[0], count)


def _part(operand: Array, chunk: slice, ndim: int, rows: int) -> Array:
    """The operand's share of a chunk of the result: sliced when its first axis is the result's."""
    if operand.ndim == ndim and operand.shape[0] == rows:
        return operand[chunk]
    return operand


# The size from which `_threaded_binary` is tried: the native pool's until it proves missing.
_binary_min_size = 2 * NATIVE_UFUNC_PER_THREAD


def _binary(ufunc: np.ufunc, code: int) -> Callable[[Any, Array, Array], Array]:
    def op(self: Any, lhs: Array, rhs: Array) -> Array:
        # One size check on the way to the ufunc for small operands (the per-op overhead).
        if lhs.size >= _binary_min_size or rhs.size >= _binary_min_size:
            out = _threaded_binary(ufunc, code, lhs, rhs)
            if out is not None:
                return out
        return ufunc(lhs, rhs)

    op.__name__ = op.__qualname__ = f"threaded_{ufunc.__name__}"
    return op


def _threaded_binary(ufunc: np.ufunc, code: int, lhs: Array, rhs: Array) -> Array | None:
    """``ufunc(lhs, rhs)`` split between threads (float32/float64 arrays of one dtype), or None
    for the plain ufunc."""
    if lhs.__class__ is not _ndarray or rhs.__class__ is not _ndarray:
        return None
    dtype = lhs.dtype
    if rhs.dtype is not dtype or (dtype is not F32 and dtype is not F64):
        return None
    if lhs.shape == rhs.shape:  # the common case: no broadcast, checked first (~8 us -> ~3 us)
        shape, size = lhs.shape, lhs.size
        native = _native_kernels()
        if native is not None and lhs.flags.c_contiguous and rhs.flags.c_contiguous:
            parts = _threads.parts(size, NATIVE_UFUNC_PER_THREAD)
            if parts > 1:
                out = np.empty(shape, dtype)
                native.binary_flat(parts, code, lhs.reshape(-1), rhs.reshape(-1), out.reshape(-1))
                return out
    else:
        shape = np.broadcast_shapes(lhs.shape, rhs.shape)
        size = math.prod(shape)
        if _native_kernels() is not None:
            result = _native_binary(code, lhs, rhs, shape, size)
            if result is not None:
                return result
    if _native_kernels() is None:  # the Python pool only: smaller ops skip this function from now on
        global _binary_min_size
        _binary_min_size = 2 * UFUNC_PER_THREAD
    chunks = _chunks(shape, size, UFUNC_PER_THREAD)
    if chunks is None:
        return None
    out = np.empty(shape, dtype)
    ndim, rows = len(shape), shape[0]

    def task(chunk: slice) -> None:
        ufunc(_part(lhs, chunk, ndim, rows), _part(rhs, chunk, ndim, rows), out=out[chunk])

    _threads.run(task, chunks)
    return out


_native: ModuleType | None = None


def _native_kernels() -> ModuleType | None:
    """`_kernels_parallel` once the TBB pool runs (`_tbb.ready`), else None."""
    global _native
    if _native is None and _tbb.ready():
        from burn_ndarray import _kernels_parallel

        _native = _kernels_parallel
    return _native


def _native_binary(code: int, lhs: Array, rhs: Array, shape: tuple[int, ...], size: int) -> Array | None:
    """The op by `_kernels_parallel` when one operand has the broadcast result's shape
    (C-contiguous) and the other one value per row or per column of the result seen as
    ``(rows, last dim)``; None otherwise."""
    parts = _threads.parts(size, NATIVE_UFUNC_PER_THREAD)
    if parts < 2 or not lhs.flags.c_contiguous or not rhs.flags.c_contiguous:
        return None
    native: Any = _native
    full, other = lhs, rhs
    if lhs.shape != shape:  # the broadcast one on the left: only commutative ops swap
        if code != ADD and code != MUL:
            return None
        full, other = rhs, lhs
    if full.shape != shape:
        return None
    columns = shape[-1]
    rows = size // columns
    padded = (1,) * (len(shape) - other.ndim) + other.shape
    if padded[-1] != 1 and padded[-1] != columns:
        return None
    if all(d == 1 for d in padded[:-1]):
        per_row = 1  # one row (or one value) for every row
    elif padded[:-1] == shape[:-1]:
        per_row = rows  # a row (or a value) of its own for each row
    else:
        return None
    if rows < parts:
        return None
    out = np.empty(shape, full.dtype)
    out2d = out.reshape(rows, columns)
    native.binary_rows(parts, code, full.reshape(rows, columns), other.reshape(per_row, -1), out2d)
    return out


def _unary(ufunc: np.ufunc) -> Callable[[Any, Array], Array]:
    def op(self: Any, tensor: Array) -> Array:
        if tensor.size >= 2 * TRANSCENDENTAL_PER_THREAD and tensor.__class__ is _ndarray:
            dtype = tensor.dtype
            chunks = _chunks(tensor.shape, tensor.size, TRANSCENDENTAL_PER_THREAD)
            if chunks is not None and (dtype is F32 or dtype is F64):
                out = np.empty(tensor.shape, dtype)
                _threads.run(lambda chunk: ufunc(tensor[chunk], out=out[chunk]), chunks)
                return out
        return ufunc(tensor)

    op.__name__ = op.__qualname__ = f"threaded_{ufunc.__name__}"
    return op


# Ops that are a bare ufunc on the single-threaded path: bound to it at one thread (`_bind`).
UFUNC_OPS: dict[str, Callable[..., Array]] = {
    "float_add": _binary(np.add, ADD),
    "float_sub": _binary(np.subtract, SUB),
    "float_mul": _binary(np.multiply, MUL),
    "float_div": _binary(np.true_divide, DIV),
    "float_exp": _unary(np.exp),
    "float_log": _unary(np.log),
    "float_sqrt": _unary(np.sqrt),
    "float_tanh": _unary(np.tanh),
}


def _map_rows(
    fn: Callable[..., Array], x: Array, *others: Array, per_thread: int = TRANSCENDENTAL_PER_THREAD
) -> Array | None:
    """``fn(x, *others)`` computed chunk by chunk of the first axis on the pool, or None when
    `x` is small, not float32/float64, or there is one thread. `fn` must treat rows
    independently (element-wise, or reducing over a later axis)."""
    if x.__class__ is not _ndarray or x.size < 2 * per_thread:
        return None
    dtype = x.dtype
    if dtype is not F32 and dtype is not F64:
        return None
    chunks = _chunks(x.shape, x.size, per_thread)
    if chunks is None:
        return None
    parts: list[Array] = [None] * len(chunks)
    ndim, rows = x.ndim, x.shape[0]

    def task(i: int) -> None:
        chunk = chunks[i]
        parts[i] = fn(x[chunk], *(_part(o, chunk, ndim, rows) for o in others))

    _threads.run(lambda chunk: task(chunk.start), [slice(i, i + 1) for i in range(len(chunks))])
    return np.concatenate(parts, axis=0)


class ParallelOps:
    """Threaded overrides, first in `burn_ndarray.NdArray`'s bases; each falls back to the
    single-threaded op (the next class in the MRO) for small or unusual operands, after one size
    check (the per-op overhead on tiny tensors stays that of the single-threaded op)."""

    # -- reductions ---------------------------------------------------------------------------
    def float_sum_dim(self, tensor: Array, dim: int) -> Array:
        dtype = tensor.dtype
        if dtype is F32 or dtype is F64:
            size = tensor.size
            if size < GEMV_SUM_MAX_SIZE:
                if tensor.__class__ is _ndarray:
                    sums = gemv_sum(tensor, dim, dtype)
                    if sums is not None:
                        return sums
            elif size >= ROW_SUM_MIN_SIZE:
                sums = _sum_dim(tensor, dim)
                if sums is not None:
                    return sums
            return _add_reduce(tensor, dim, keepdims=True)  # what ndarray.sum calls, 0.2 us sooner
        return _single.float_sum_dim(self, tensor, dim)

    def float_mean_dim(self, tensor: Array, dim: int) -> Array:
        size = tensor.size
        if size < GEMV_SUM_MAX_SIZE:
            dtype = tensor.dtype
            if tensor.__class__ is _ndarray and (dtype is F32 or dtype is F64):
                sums = gemv_sum(tensor, dim, dtype)
                if sums is not None:
                    sums /= tensor.shape[dim]
                    return sums
        elif size >= ROW_SUM_MIN_SIZE:
            sums = _sum_dim(tensor, dim)
            if sums is not None:
                sums /= tensor.shape[dim]
                return sums
        return _single.float_mean_dim(self, tensor, dim)

    # -- activations --------------------------------------------------------------------------
    def relu(self, x: Array) -> Array:
        if x.size >= RELU_COMPILED_MIN_SIZE:
            out = _compiled_relu(x, None)
            if out is not None:
                return out
            if x.size >= 2 * UFUNC_PER_THREAD:
                out = _map_rows(np.maximum, x, x.dtype.type(0), per_thread=UFUNC_PER_THREAD)
                if out is not None:
                    return out
        return _single.relu(self, x)

    def relu_backward(self, output: Array, grad: Array) -> Array:
        same_shape = output.__class__ is _ndarray and output.shape == grad.shape
        if grad.size >= RELU_COMPILED_MIN_SIZE and same_shape:
            out = _compiled_relu(output, grad)
            if out is not None:
                return out
            if grad.size >= 2 * UFUNC_PER_THREAD:
                single = _single.relu_backward
                out = _map_rows(lambda g, o: single(self, o, g), grad, output, per_thread=UFUNC_PER_THREAD)
                if out is not None:
                    return out
        return _single.relu_backward(self, output, grad)

    def gelu(self, x: Array) -> Array:
        out = _compiled_activation("compiled_gelu", x.size, GELU_COMPILED_MIN_SIZE, x)
        if out is not None:
            return out
        if x.size >= 2 * BLOCK:
            out = _blocked(lambda part: _single.gelu(self, part), x)
            if out is not None:
                return out
        return _single.gelu(self, x)

    def gelu_backward(self, x: Array, grad: Array) -> Array:
        out = _compiled_activation("compiled_gelu", x.size, GELU_COMPILED_MIN_SIZE, x, grad)
        if out is not None:
            return out
        if x.size >= 2 * BLOCK:
            out = _blocked(lambda a, b: _single.gelu_backward(self, a, b), x, grad)
            if out is not None:
                return out
        return _single.gelu_backward(self, x, grad)

    def sigmoid(self, x: Array) -> Array:
        out = _compiled_activation("compiled_sigmoid", x.size, SIGMOID_COMPILED_MIN_SIZE, x)
        return _single.sigmoid(self, x) if out is None else out

    def sigmoid_backward(self, output: Array, grad: Array) -> Array:
        size = output.size
        out = _compiled_activation("compiled_sigmoid_backward", size, SIGMOID_COMPILED_MIN_SIZE, output, grad)
        return _single.sigmoid_backward(self, output, grad) if out is None else out

    def silu(self, x: Array) -> Array:
        out = _compiled_activation("compiled_silu", x.size, SIGMOID_COMPILED_MIN_SIZE, x)
        return _single.silu(self, x) if out is None else out

    def softmax(self, x: Array, dim: int) -> Array:
        if x.size >= 2 * ROWWISE_PER_THREAD:
            out = _rowwise(lambda part: _single.softmax(self, part, dim), x, dim)
            if out is not None:
                return out
        return _single.softmax(self, x, dim)

    def log_softmax(self, x: Array, dim: int) -> Array:
        if x.size >= 2 * ROWWISE_PER_THREAD:
            out = _rowwise(lambda part: _single.log_softmax(self, part, dim), x, dim)
            if out is not None:
                return out
        return _single.log_softmax(self, x, dim)


class _Single(FloatOps, ActivationOps):
    """The single-threaded ops that `ParallelOps` falls back to (their classes' own methods)."""


_single: Any = _Single


def flat_in_memory_order(a: Array) -> Array | None:
    """A 1-D view of `a`'s elements in memory order when they fill one block of memory (C order,
    or a permutation of it such as the channels-last conv outputs); None otherwise."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    step = a.itemsize
    for stride, length in sorted(zip(a.strides, a.shape, strict=True)):
        if length != 1 and stride != step:
            return None
        step *= length
    return a.ravel(order="K")  # a view: the strides above leave no gaps


def _compiled_relu(x: Array, grad: Array | None) -> Array | None:
    """ReLU of `x` (or, with `grad`, its backward pass where `x` is the output) by the compiled
    kernels of `_kernels_parallel` (`run_ranges`: one memory-bound pass, split as the arithmetic
    ops are); the result has `x`'s memory layout. None unless the operands are float32/float64
    arrays of one dtype that fill one block of memory in the same layout (and numba is installed)."""
    dtype = x.dtype
    if x.__class__ is not _ndarray or (dtype is not F32 and dtype is not F64):
        return None
    if grad is not None and (grad.__class__ is not _ndarray or grad.dtype is not dtype):
        return None
    if grad is not None and grad.strides != x.strides:  # the flat views must line up
        return None
    flat = flat_in_memory_order(x)
    if flat is None or kernels() is None:
        return None
    from burn_ndarray import _kernels_parallel as compiled

    out = np.empty_like(x)  # x's layout: its flat view lines up with x's
    out_flat, zero, parts = out.ravel(order="K"), dtype.type(0), compiled.copy_parts(x.size)
    if grad is None:
        compiled.run_ranges(compiled.relu_range, compiled.relu, x.size, parts, flat, out_flat, zero)
    else:
        args = (flat, grad.ravel(order="K"), out_flat, zero)
        compiled.run_ranges(compiled.relu_backward_range, compiled.relu_backward, x.size, parts, *args)
    return out


def _blocked(fn: Callable[..., Array], x: Array, *others: Array) -> Array | None:
    """``fn(x, *others)`` (element-wise, many NumPy passes) computed block by block of `BLOCK`
    elements or more, so that each block's temporaries stay in cache across the passes, on as
    many threads as `TRANSCENDENTAL_PER_THREAD` allows: the same bits as one call on the whole.
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
        for block in _threads.split(length, max(1, length // BLOCK)):  # each BLOCK or longer
            part = slice(chunk.start + block.start, chunk.start + block.stop)
            out_flat[part] = fn(*(a[part] for a in flat))

    _threads.run(task, _threads.split(x.size, _threads.parts(x.size, TRANSCENDENTAL_PER_THREAD)))
    return out


def _rowwise(fn: Callable[[Array], Array], x: Array, dim: int) -> Array | None:
    """`fn` (reducing along `dim`) over chunks of the first axis, when `dim` is not that axis."""
    if x.__class__ is not _ndarray or x.ndim < 2 or dim % x.ndim == 0:
        return None
    return _map_rows(fn, x, per_thread=ROWWISE_PER_THREAD)


def _sum_dim(tensor: Array, dim: int) -> Array | None:
    """Sums along `dim` (kept as size 1) of a large C-contiguous float32/float64 array by the
    compiled row kernel, or None for the single-threaded op."""
    if tensor.__class__ is not _ndarray or tensor.size < ROW_SUM_MIN_SIZE:
        return None
    dtype, shape = tensor.dtype, tensor.shape
    if dtype is not F32 and dtype is not F64:
        return None
    dim %= len(shape)
    if not tensor.flags.c_contiguous:
        return _sum_dim_in_memory_order(tensor, dim)
    length = shape[dim]
    if length < 2:
        return None
    kept = shape[:dim] + (1,) + shape[dim + 1 :]
    if dim == len(shape) - 1:
        k = kernels()
        if k is None:
            return None
        rows = tensor.reshape(-1, length)
        parts = compiled_parts(tensor.size, ROW_SUM_PER_THREAD, NATIVE_ROW_SUM_PER_THREAD)
        return k.row_sums(rows, parts).reshape(kept)  # type: ignore[no-any-return]
    # Along an inner dim: rows of the trailing axes added in order, compiled (NumPy's bits, 5x
    # faster than its reduce on one thread: 0.76 -> 0.15 ms for a [1664, 26, 32] float32 sum
    # over the 26), chunks of leading indices, or of columns when there are fewer leading indices
    # than chunks (a sum over the first dim: [32, 128, 1024] 575 -> 346 us at 2 threads).
    sums = _sum_middle(tensor.reshape(math.prod(shape[:dim]), length, -1))
    return None if sums is None else sums.reshape(kept)


def _sum_middle(view: Array) -> Array | None:
    """``view.sum(axis=1)`` of a C-contiguous ``(lead, length, inner)`` array, as ``(lead, 1,
    inner)``, by `_kernels_parallel.sum_middle` on the threads the size warrants; None without
    numba."""
    if kernels() is None:
        return None
    from burn_ndarray import _kernels_parallel as compiled

    lead, inner = view.shape[0], view.shape[2]
    out = np.empty((lead, inner), view.dtype)
    parts = compiled_parts(view.size, ROW_SUM_PER_THREAD, NATIVE_ROW_SUM_PER_THREAD)
    if lead < parts and inner >= parts * MIDDLE_SUM_MIN_COLUMNS:
        # Fewer leading indices than chunks (a sum over the batch): chunks of columns instead.
        serial, split, count = compiled.sum_middle_columns_serial, compiled.sum_middle_columns, inner
    else:
        serial, split, count = compiled.sum_middle_serial, compiled.sum_middle, lead
    compiled.run_ranges(serial, split, count, parts, view, out)
    return out.reshape(lead, 1, -1)


def _sum_dim_in_memory_order(tensor: Array, dim: int) -> Array | None:
    """The sum along `dim` of a dense array in a permuted layout (conv2d's channels-last
    gradients: the bias gradient sums them over W, H and N), taken along the matching axis of its
    C-contiguous memory view (`_sum_middle`, or the row kernel when that axis is the innermost)
    and viewed back; None if the array has gaps."""
    if flat_in_memory_order(tensor) is None:
        return None
    order = sorted(range(tensor.ndim), key=lambda axis: -tensor.strides[axis])
    sums = _sum_dim(tensor.transpose(order), order.index(dim))
    return None if sums is None else sums.transpose(np.argsort(order))


def _compiled_activation(name: str, size: int, min_size: int, *args: Array) -> Array | None:
    """`_compiled_activations`' `name` of `args` from `min_size` elements, else None (small
    tensors never import numba); None too where the compiled path declines the operands."""
    if size < min_size:
        return None
    from burn_ndarray import _compiled_activations

    return getattr(_compiled_activations, name)(*args)  # type: ignore[no-any-return]


def _bind(count: int) -> None:
    """At one thread the ufunc ops are the bare ufuncs again (no Python frame); otherwise the
    threaded wrappers."""
    for name, threaded in UFUNC_OPS.items():
        if count > 1:
            setattr(ParallelOps, name, threaded)
        elif name in ParallelOps.__dict__:
            delattr(ParallelOps, name)


_bind(_threads.get_num_threads())
_threads._listeners.append(_bind)
