"""The compiled kernels of `_kernels`, split into chunks on numba's TBB pool (`_tbb`).

Each launcher cuts its range into `parts` contiguous chunks, the same cut as `_threads.split`,
and runs the serial kernel on every chunk in a ``prange``: one element (or row) is computed by the
same serial code whichever thread takes its chunk, so the bits are the serial kernels' at any
thread count. Used only when `_tbb.ready`; otherwise `_kernels` runs the same chunks on the
Python pool. Options that may be None (RMSProp's averages) are pruned at compile time, as in the
serial kernels: numba compiles one launcher per combination.

Element-wise arithmetic (`binary_flat`, `binary_rows`) is here too: on one thread NumPy's ufuncs
are as fast, so these run only split. ReLU and its backward pass run compiled on one thread too
(`relu_range`): NumPy's ``maximum(x, 0)`` and ``where`` are 4x slower than one compiled pass.
The op is an int (`_parallel.ADD`...), tested outside the loops so that each loop vectorizes.
"""

from __future__ import annotations

from typing import Any

from numba import njit, prange, types
from numba.core.extending import overload

from burn_ndarray import _kernels as serial
from burn_ndarray import _parallel, _tbb, _threads
from burn_ndarray._parallel import ADD, MUL, SUB

Array = Any
# Compiled once per machine and cached on disk, like the serial kernels.
_jit = njit(cache=True, error_model="numpy", nogil=True)
_jit_parallel = njit(cache=True, error_model="numpy", nogil=True, parallel=True)


@_jit_parallel
def count_parts(parts: int) -> int:
    """Runs `parts` empty chunks on the pool: starts it (see `_tbb.ready`)."""
    total = 0
    for _ in prange(parts):
        total += 1
    return total


def run_ranges(serial_fn: Any, parallel_fn: Any, n: int, parts: int, *args: Any) -> None:
    """``serial_fn(lo, hi, *args)`` over ``range(n)`` cut in `parts` chunks (`bounds`): one
    ``parallel_fn(parts, *args)`` on the TBB pool when it runs, else the chunks on the Python pool
    (`_threads.run`), or one call on this thread for one part. The pooling, convolution-copy and
    inner-sum kernels take this shape."""
    parts = max(1, min(parts, n))
    if parts > 1 and _tbb.ready():
        parallel_fn(parts, *args)
    elif parts > 1:
        _threads.run(lambda c: serial_fn(c.start, c.stop, *args), _threads.split(n, parts))
    else:
        serial_fn(0, n, *args)


def copy_parts(size: int) -> int:
    """Chunks for a memory-bound pass over `size` elements: the arithmetic ops' thresholds."""
    return _parallel.compiled_parts(size, _parallel.UFUNC_PER_THREAD, _parallel.NATIVE_UFUNC_PER_THREAD)


@_jit
def bounds(n: int, chunk: int, parts: int) -> tuple[int, int]:
    """Chunk `chunk` of ``range(n)`` cut in `parts`: sizes differ by at most one, larger first
    (as `_threads.split`)."""
    step, extra = divmod(n, parts)
    start = chunk * step + min(chunk, extra)
    return start, start + step + (1 if chunk < extra else 0)


def part(a: Array | None, lo: int, hi: int) -> Array | None:
    """``a[lo:hi]``, or None for a None `a`: compiled (`_part`), the None stays typed as None, so
    the serial kernel called with it prunes its branches as when called directly."""
    return None if a is None else a[lo:hi]


@overload(part)
def _part(a: Any, lo: Any, hi: Any) -> Any:
    # numba wants the implementations' parameters, annotations included, to be the overload's.
    def nothing(a: Any, lo: Any, hi: Any) -> Any:
        return None

    def chunk(a: Any, lo: Any, hi: Any) -> Any:
        return a[lo:hi]

    return nothing if isinstance(a, types.NoneType) else chunk


@_jit_parallel
def adam_in_place(parts: int, p: Array, g: Array, m: Array, v: Array, out: Any, *scalars: Any) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        serial.adam_in_place(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], part(out, lo, hi), *scalars)


@_jit_parallel
def adam_fresh(
    parts: int, p: Array, g: Array, m_in: Array, v_in: Array, out: Array, m: Array, v: Array, *scalars: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        serial.adam_fresh(
            p[lo:hi], g[lo:hi], m_in[lo:hi], v_in[lo:hi], out[lo:hi], m[lo:hi], v[lo:hi], *scalars
        )


@_jit_parallel
def sgd_momentum_in_place(
    parts: int, p: Array, g: Array, v: Array, out: Any, decay: Any, look_ahead: Any, *scalars: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        serial.sgd_momentum_in_place(
            p[lo:hi], g[lo:hi], v[lo:hi], part(out, lo, hi), decay, look_ahead, *scalars
        )


@_jit_parallel
def rmsprop_in_place(
    parts: int, p: Array, g: Array, s: Array, a: Any, b: Any, out: Any, decay: Any, *scalars: Any
) -> None:
    for c in prange(parts):
        lo, hi = bounds(g.size, c, parts)
        serial.rmsprop_in_place(
            p[lo:hi], g[lo:hi], s[lo:hi], part(a, lo, hi), part(b, lo, hi), part(out, lo, hi), decay, *scalars
        )


@_jit_parallel
def sum_rows(parts: int, x: Array, out: Array, zero: Any) -> None:
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        serial.sum_rows(x[lo:hi], out[lo:hi], zero)


@_jit
def _apply(op: int, x: Array, y: Array, out: Array) -> None:
    """``out[j] = x[j] <op> y[j]`` on 1-D arrays; a `y` of length 1 is broadcast."""
    n = out.shape[0]
    if y.shape[0] == 1 and n != 1:
        s = y[0]
        if op == ADD:
            for j in range(n):
                out[j] = x[j] + s
        elif op == SUB:
            for j in range(n):
                out[j] = x[j] - s
        elif op == MUL:
            for j in range(n):
                out[j] = x[j] * s
        else:
            for j in range(n):
                out[j] = x[j] / s
    elif op == ADD:
        for j in range(n):
            out[j] = x[j] + y[j]
    elif op == SUB:
        for j in range(n):
            out[j] = x[j] - y[j]
    elif op == MUL:
        for j in range(n):
            out[j] = x[j] * y[j]
    else:
        for j in range(n):
            out[j] = x[j] / y[j]


@_jit_parallel
def binary_flat(parts: int, op: int, x: Array, y: Array, out: Array) -> None:
    """``out = x <op> y`` on 1-D arrays of one size, chunks of elements on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        _apply(op, x[lo:hi], y[lo:hi], out[lo:hi])


@_jit_parallel
def binary_rows(parts: int, op: int, x: Array, y: Array, out: Array) -> None:
    """``out[r] = x[r] <op> y[r or 0]`` on 2-D arrays, `y` with 1 or ``out``'s rows and 1 or its
    columns (broadcast), chunks of rows on the pool."""
    rows = out.shape[0]
    each_row = y.shape[0] != 1
    for c in prange(parts):
        lo, hi = bounds(rows, c, parts)
        for r in range(lo, hi):
            _apply(op, x[r], y[r if each_row else 0], out[r])


@_jit
def relu_range(lo: int, hi: int, x: Array, out: Array, zero: Any) -> None:
    """NumPy's ``maximum(x, 0)`` for elements `lo` to `hi` of 1-D arrays."""
    xs, outs = x[lo:hi], out[lo:hi]  # indices from 0: no negative-index wrap, so the loop vectorizes
    for i in range(outs.size):
        v = xs[i]
        outs[i] = v if v > zero or v != v else zero  # np.maximum(x, 0): NaN kept, -0.0 -> +0.0


@_jit
def relu_backward_range(lo: int, hi: int, output: Array, grad: Array, out: Array, zero: Any) -> None:
    """``where(output > 0, grad, 0)`` for elements `lo` to `hi` of 1-D arrays of one dtype."""
    os, gs, outs = output[lo:hi], grad[lo:hi], out[lo:hi]
    for i in range(outs.size):
        outs[i] = gs[i] if os[i] > zero else zero


@_jit_parallel
def relu(parts: int, x: Array, out: Array, zero: Any) -> None:
    """`relu_range` over all of `x`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        relu_range(lo, hi, x, out, zero)


@_jit_parallel
def relu_backward(parts: int, output: Array, grad: Array, out: Array, zero: Any) -> None:
    """`relu_backward_range` over all of `output`, chunks on the pool."""
    for c in prange(parts):
        lo, hi = bounds(out.size, c, parts)
        relu_backward_range(lo, hi, output, grad, out, zero)


@_jit
def sum_middle_serial(lo: int, hi: int, x: Array, out: Array) -> None:
    """``out[i] = x[i, 0] + x[i, 1] + ...`` (rows of `x`'s last axis added in order, as NumPy
    reduces a middle axis) for `i` from `lo` to `hi`; `x` is ``(lead, length, inner)``."""
    for i in range(lo, hi):
        acc = out[i]
        first = x[i, 0]
        for c in range(acc.shape[0]):
            acc[c] = first[c]
        for k in range(1, x.shape[1]):
            row = x[i, k]
            for c in range(acc.shape[0]):
                acc[c] += row[c]


@_jit_parallel
def sum_middle(parts: int, x: Array, out: Array) -> None:
    """`sum_middle_serial` over every leading index, chunks of them on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        sum_middle_serial(lo, hi, x, out)


@_jit
def sum_middle_columns_serial(lo: int, hi: int, x: Array, out: Array) -> None:
    """`sum_middle_serial`'s sums (the same additions in the same order) for the columns `lo` to
    `hi` of the inner axis, at every leading index: the split when there are fewer leading indices
    than chunks (a bias gradient summed over the batch is ``(1, batch, features)``)."""
    for i in range(x.shape[0]):
        acc = out[i, lo:hi]
        first = x[i, 0, lo:hi]
        for c in range(hi - lo):
            acc[c] = first[c]
        for k in range(1, x.shape[1]):
            row = x[i, k, lo:hi]
            for c in range(hi - lo):
                acc[c] += row[c]


@_jit_parallel
def sum_middle_columns(parts: int, x: Array, out: Array) -> None:
    """`sum_middle_columns_serial` over chunks of the inner axis on the pool."""
    for c in prange(parts):
        lo, hi = bounds(x.shape[2], c, parts)
        sum_middle_columns_serial(lo, hi, x, out)
