"""How large ops split between threads: the elements each thread must get before an op is split
(below, handing work to a thread costs more than it saves), the chunks of an op's first axis, and
the launch of a compiled kernel's chunks on numba's TBB pool (`tbb`) when it runs, else on the
Python pool (`threads`), or on the caller alone for one part.

Chunks are contiguous and fixed by the size and the thread count alone (`threads.split`), and each
element is computed by the same code whichever thread takes its chunk: the results are the same
bits at any thread count. Chunks split the result along its first axis; an operand whose first
axis broadcasts (or that has fewer dims) is passed whole to every chunk (`share`).
"""

from __future__ import annotations

from typing import Any

from burn_ndarray.runtime import tbb, threads

Array = Any
# Elements a thread must get on the Python pool (below 2x, the caller runs the op alone): where a
# split stops losing on the slowest hand-off measured (docs/benchmarks-log.md, burn-ndarray measurements).
UFUNC_PER_THREAD = 1 << 20  # binary arithmetic: one cheap pass over memory
TRANSCENDENTAL_PER_THREAD = 1 << 18  # exp, log, tanh, sqrt, activations
ROWWISE_PER_THREAD = 1 << 17  # softmax / log-softmax over chunks of rows
ROW_SUM_PER_THREAD = 1 << 21  # the compiled row sum is fast: a chunk must be large
# The same on the TBB pool (`tbb`), whose hot workers take a chunk in microseconds (docs/benchmarks-log.md,
# burn-ndarray measurements).
NATIVE_UFUNC_PER_THREAD = 1 << 17
NATIVE_ROW_SUM_PER_THREAD = 1 << 17
# Chunks per thread on the TBB pool, at most, handed out one at a time (`tbb.launch`): a thread
# that is not running (another process holds its core) holds up one chunk, not its half of the
# op, and the caller takes the rest. Each chunk keeps the per-thread threshold: with chunks of a
# quarter of it, BERT at batch 1 (ops of 2^15-2^18 elements) ran 8-30% slower at 2 threads in the
# paired runs of docs/benchmarks-log.md ("the second core, part 2"), so mid-sized ops keep one
# chunk per thread and only large ones get more.
NATIVE_CHUNKS_PER_THREAD = 4


def native_parts(size: int, native_per_thread: int) -> int:
    """Chunks of an op over `size` elements on the TBB pool: one per thread that `size` warrants
    (`native_per_thread` elements each), up to `NATIVE_CHUNKS_PER_THREAD` per thread for larger
    ops, each of `native_per_thread` elements at least.

    Example:
        >>> from burn_ndarray.runtime import split, threads
        >>> before = threads.get_num_threads()
        >>> threads.set_num_threads(2)
        >>> split.native_parts(1 << 20, 1 << 17), split.native_parts(1 << 18, 1 << 17)
        (8, 2)
        >>> threads.set_num_threads(before)
    """
    used = threads.parts(size, native_per_thread)
    if used < 2:
        return used
    return min(used * NATIVE_CHUNKS_PER_THREAD, max(used, size // native_per_thread))


def compiled_parts(size: int, per_thread: int, native_per_thread: int) -> int:
    """How many chunks a compiled kernel over `size` elements runs in: `native_parts` on the TBB
    pool when it runs, else one per thread of `per_thread` elements on the Python pool."""
    if size >= 2 * native_per_thread and threads.get_num_threads() > 1 and tbb.ready():
        return native_parts(size, native_per_thread)
    return threads.parts(size, per_thread)


def copy_parts(size: int) -> int:
    """Chunks for a memory-bound pass over `size` elements: the arithmetic ops' thresholds."""
    return compiled_parts(size, UFUNC_PER_THREAD, NATIVE_UFUNC_PER_THREAD)


def chunks(shape: tuple[int, ...], size: int, per_thread: int) -> list[slice] | None:
    """Slices of the first axis, one per thread that `size` elements warrant; None for one."""
    count = threads.parts(size, per_thread)
    if count < 2 or not shape or shape[0] < 2:
        return None
    return threads.split(shape[0], count)


def share(operand: Array, chunk: slice, ndim: int, rows: int) -> Array:
    """The operand's share of a chunk of the result: sliced when its first axis is the result's."""
    if operand.ndim == ndim and operand.shape[0] == rows:
        return operand[chunk]
    return operand


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


def run_ranges(serial_fn: Any, parallel_fn: Any, n: int, parts: int, *args: Any) -> None:
    """``serial_fn(lo, hi, *args)`` over ``range(n)`` cut in `parts` chunks (`threads.split`): one
    ``parallel_fn(parts, *args)`` on the TBB pool when it runs (a ``prange`` over the same chunks,
    `burn_ndarray.kernels.jit.bounds`, handed out one at a time by `tbb.launch`), else the
    chunks on the Python pool (`threads.run`), or one
    call on this thread for one part. The element-wise, pooling, convolution-copy and inner-sum
    kernels take this shape."""
    parts = max(1, min(parts, n))
    if parts > 1 and tbb.ready():
        tbb.launch(parallel_fn, parts, *args)
    elif parts > 1:
        threads.run(lambda c: serial_fn(c.start, c.stop, *args), threads.split(n, parts))
    else:
        serial_fn(0, n, *args)


def run_chunks(
    serial_fn: Any, parallel_fn: Any, arrays: tuple[Array | None, ...], scalars: tuple[Any, ...], parts: int
) -> None:
    """``serial_fn(*arrays, *scalars)`` over `parts` contiguous chunks of the arrays' first axis
    (an array may be None): one ``parallel_fn(parts, *arrays, *scalars)`` on the TBB pool when it
    runs, else the chunks on the Python pool (`threads.run`), or one call on this thread for one
    part (the split and the closure cost a third of a small update). The optimizer updates and
    the row sums take this shape."""
    if parts < 2:
        serial_fn(*arrays, *scalars)
        return
    if tbb.ready():
        tbb.launch(parallel_fn, parts, *arrays, *scalars)
        return
    length = next(a for a in arrays if a is not None).shape[0]

    def task(c: slice) -> None:
        serial_fn(*(None if a is None else a[c] for a in arrays), *scalars)

    threads.run(task, threads.split(length, parts))
