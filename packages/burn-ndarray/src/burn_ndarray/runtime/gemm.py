"""Large 2-D GEMMs on several threads: cut into blocks of the result's columns (or rows) that
numba's TBB pool hands out one at a time, the calling thread taking its share, each block one
call of NumPy's BLAS (``cblas_?gemm``) on the thread that took it, with the BLAS on one thread.

Why not the BLAS's own threads: OpenBLAS (0.3.31 measured) splits a GEMM in fixed shares, one per
thread, and its threads wait for each other inside the call. When another process holds a core,
the share of the thread that is not running waits for that thread's next time slice, at every
one of those waits: on the shared 2-core machine (load average 5-7) a [128, 256] @ [256, 1024]
GEMM on two OpenBLAS threads took 9-46 ms as a median of 200 calls against 0.8 ms on one thread
(docs/benchmarks-log.md, "the second core"). Here a thread that is not running has taken no block
that is not started, and the caller runs the rest itself; one pool (TBB's, which the element-wise
kernels use) instead of two that poll for the same cores. onnxruntime's pool works the same way.

The cut depends on the shape and the thread count only, and each block is one BLAS call on its
own rows and columns: the same bits whichever thread takes a block.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from typing import Any

import numpy as np

from burn_ndarray import kernels
from burn_ndarray.runtime import blas, busy, tbb, threads

Array = Any
# Multiply-adds from which a GEMM is split: [128, 256] @ [256, 256] (0.19 ms on one thread) and up.
MIN_MACS = 1 << 23
# Blocks per thread: a thread that stalls inside a block holds up one block, not its share.
BLOCKS_PER_THREAD = 4
# Block widths are multiples of this many columns (rows): on one thread, blocks of 64 columns cost
# 4-10% over the whole product, of 128 2-7%, of 256 0-5% (NumPy's matmul on column views).
BLOCK_MULTIPLE = 64
# Widths of `even`'s blocks are multiples of this: OpenBLAS's register tiles (4-16 wide) fit whole.
EVEN_MULTIPLE = 16

_lock = threading.Lock()
_resolved: dict[str, Any] | None = None
_main = threading.main_thread()


def _functions() -> dict[str, Any]:
    """NumPy's OpenBLAS's functions this module calls (``set`` / ``get``: its thread count, a
    call each where threadpoolctl's setter takes tens of microseconds; ``float32`` / ``float64``:
    the addresses of ``cblas_sgemm`` / ``cblas_dgemm``), or an empty dict where NumPy's BLAS is
    not one pthreads OpenBLAS with the 64-bit CBLAS interface NumPy 2's wheels carry."""
    global _resolved
    if _resolved is None:
        with _lock:
            found: dict[str, Any] = {}
            libs = blas._numpy_libraries()
            lib = libs[0] if len(libs) == 1 else None
            if lib is not None and lib.internal_api == "openblas" and lib.threading_layer == "pthreads":
                dynlib = lib.dynlib
                for prefix, suffix in itertools.product(("scipy_", ""), ("64_", "_64")):
                    names = (
                        f"{prefix}openblas_set_num_threads{suffix}",
                        f"{prefix}openblas_get_num_threads{suffix}",
                        f"{prefix}cblas_sgemm{suffix}",
                        f"{prefix}cblas_dgemm{suffix}",
                    )
                    if all(hasattr(dynlib, name) for name in names):
                        setter, getter, sgemm, dgemm = (getattr(dynlib, name) for name in names)
                        setter.argtypes, setter.restype = [ctypes.c_int], None
                        getter.argtypes, getter.restype = [], ctypes.c_int
                        found = {
                            "set": setter,
                            "get": getter,
                            "float32": ctypes.cast(sgemm, ctypes.c_void_p).value,
                            "float64": ctypes.cast(dgemm, ctypes.c_void_p).value,
                        }
                        break
            _resolved = found
    return _resolved


def cut(rows: int, cols: int, count: int) -> tuple[int, int, int]:
    """How a [rows, cols] result is cut for `count` threads: the axis (1: columns, 0: rows), the
    block width and the number of blocks; `BLOCKS_PER_THREAD` per thread of widths that are
    multiples of `BLOCK_MULTIPLE` (fewer when the axis is short; one block: no split).

    Example:
        >>> from burn_ndarray.runtime.gemm import cut
        >>> cut(128, 1024, 2)
        (1, 128, 8)
    """
    axis, length = (1, cols) if cols >= 2 * BLOCK_MULTIPLE or cols >= rows else (0, rows)
    wanted = -(-length // (BLOCKS_PER_THREAD * count))
    width = max(BLOCK_MULTIPLE, -(-wanted // BLOCK_MULTIPLE) * BLOCK_MULTIPLE)
    return (axis, *even(length, width, -(-length // width), count))


def even(length: int, width: int, blocks: int, count: int) -> tuple[int, int]:
    """The width and number of blocks of an axis of `length` cut in `blocks` of `width`, recut
    in a multiple of `count` near-equal blocks (widths a multiple of `EVEN_MULTIPLE`) when
    `blocks` is short of `BLOCKS_PER_THREAD` per thread and not a multiple of `count`: a small
    product's last block would otherwise leave a thread idle (ViT-tiny's [197, 768] @ [768, 192]
    in 3 blocks of 64 columns: 2 for one thread, 1 for the other).

    Example:
        >>> from burn_ndarray.runtime.gemm import even
        >>> even(192, 64, 3, 2)
        (96, 2)
    """
    if blocks < 2 or blocks % count == 0 or blocks >= BLOCKS_PER_THREAD * count:
        return width, blocks
    target = max(count, blocks // count * count)  # blocks: a multiple of count, never more
    width = -(-length // target)
    width = -(-width // EVEN_MULTIPLE) * EVEN_MULTIPLE
    return width, -(-length // width)


def _operand(a: Array) -> tuple[Array, int, int]:
    """`a` (2-D) as CBLAS takes it in row-major order: the array, its transpose flag and its
    leading dimension; a C-ordered copy when neither its rows nor its columns are contiguous."""
    item = a.itemsize
    if a.strides[1] == item and a.strides[0] >= max(a.shape[1], 1) * item and a.strides[0] % item == 0:
        return a, 111, a.strides[0] // item  # rows contiguous: no transpose
    if a.strides[0] == item and a.strides[1] >= max(a.shape[0], 1) * item and a.strides[1] % item == 0:
        return a, 112, a.strides[1] // item  # a transposed view: columns contiguous
    a = np.ascontiguousarray(a)
    return a, 111, max(a.shape[1], 1)


def matmul(lhs: Array, rhs: Array, out: Array | None = None) -> Array | None:
    """``lhs @ rhs`` for 2-D operands, both float32 or both float64, split as the module says,
    into `out` when given (a [rows, cols] array of their dtype whose rows are contiguous);
    None (the caller makes one BLAS call) at one thread, below `MIN_MACS`, off the main thread
    (the BLAS's thread count is process-wide: one thread sets it), without numba's TBB pool, or
    where NumPy's BLAS is not an OpenBLAS this module can call.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray.runtime import gemm
        >>> a, b = np.ones((512, 256), np.float32), np.ones((256, 512), np.float32)
        >>> out = gemm.matmul(a, b)
        >>> out is None or bool((out == 256).all())
        True
    """
    count = threads.get_num_threads()
    if count < 2:
        return None
    rows, inner = lhs.shape
    cols = rhs.shape[1]
    dtype = lhs.dtype
    if rows * inner * cols < MIN_MACS or rhs.dtype != dtype or threading.current_thread() is not _main:
        return None
    name = dtype.name
    if name not in ("float32", "float64"):
        return None
    functions = _functions()
    if not functions or not tbb.ready():
        return None
    compiled = kernels.load("gemm")
    if compiled is None:
        return None
    axis, width, blocks = cut(rows, cols, count)
    if blocks < 2:
        return None
    item = dtype.itemsize
    if out is None:
        out = np.empty((rows, cols), dtype)
    elif (
        out.shape != (rows, cols) or out.dtype != dtype or out.strides[1] != item
        or out.strides[0] < cols * item or out.strides[0] % item
    ):  # fmt: skip
        return None
    ldc = out.strides[0] // item
    lhs, trans_a, lda = _operand(lhs)
    rhs, trans_b, ldb = _operand(rhs)
    # Bytes from one row of lhs (one column of rhs) to the next, in memory.
    a_step = lda * item if trans_a == 111 else item
    b_step = item if trans_b == 111 else ldb * item
    c_step = item if axis == 1 else ldc * item
    scalar = dtype.type
    before = functions["get"]()
    functions["set"](1)
    set_chunk_size = tbb.chunk_size_setter()
    chunk_size = set_chunk_size(1)  # one block per hand-out (as `tbb.launch`); returns the old size
    try:
        compiled.gemm_blocks(
            functions[name], np.int32(trans_a), np.int32(trans_b), rows, cols, inner,
            lhs.ctypes.data, lda, rhs.ctypes.data, ldb, out.ctypes.data, ldc,
            scalar(1), scalar(0), axis, width, blocks, a_step, b_step, c_step,
        )  # fmt: skip
    finally:
        set_chunk_size(chunk_size)
        functions["set"](before)
    return out


def product(lhs: Array, rhs: Array, out: Array | None = None) -> Array:
    """``lhs @ rhs`` of 2-D operands (into `out` when given, as NumPy's ``out=``): in `matmul`'s
    blocks on the TBB pool where they apply, else one call of NumPy's matmul (its BLAS). For the
    GEMMs of ops other than ``float_matmul`` (the convolutions' im2col and 1x1 products), which
    would otherwise run on OpenBLAS's own threads: one pool for every large GEMM. NumPy's BLAS
    follows the machine's load at every call (`busy.follow`, a clock read between its looks),
    for the products below `MIN_MACS` and the BLAS calls these blocks do not reach: a model of
    small 1x1 convolutions and no large product (MobileNetV3-small) never looked before, and
    its [49, 576] @ [576, 96] products took 150 ms a call on OpenBLAS's two threads at load 13.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray.runtime import gemm
        >>> a, b = np.ones((256, 512), np.float32), np.ones((512, 256), np.float32)
        >>> bool((gemm.product(a, b) == 512).all())
        True
    """
    busy.follow()
    if lhs.shape[0] * lhs.shape[1] * rhs.shape[1] >= MIN_MACS:
        blocked = matmul(lhs, rhs, out)
        if blocked is not None:
            return blocked
    if out is None:
        return np.matmul(lhs, rhs)
    return np.matmul(lhs, rhs, out=out)


def stacked(lhs: Array, rhs: Array) -> Array:
    """``np.matmul(lhs, rhs)`` of stacks of matrices (leading dims broadcast as NumPy's): each
    matrix's product through `product` (`matmul`'s blocks) where one product reaches `MIN_MACS`
    at two threads or more, else NumPy's stacked matmul as it is.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray.runtime import gemm
        >>> a, b = np.ones((2, 1, 256, 256), np.float32), np.ones((2, 3, 256, 128), np.float32)
        >>> out = gemm.stacked(a, b)
        >>> out.shape, bool((out == 256).all())
        ((2, 3, 256, 128), True)
    """
    rows, inner = lhs.shape[-2:]
    cols = rhs.shape[-1]
    if (
        threads.get_num_threads() < 2 or rows * inner * cols < MIN_MACS or lhs.ndim < 3
        or rhs.ndim < 3 or lhs.dtype != rhs.dtype or lhs.dtype.name not in ("float32", "float64")
    ):  # fmt: skip
        return np.matmul(lhs, rhs)
    lead = np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2])
    out = np.empty((*lead, rows, cols), lhs.dtype)
    lhs = np.broadcast_to(lhs, (*lead, rows, inner))  # views: a broadcast matrix is read again
    rhs = np.broadcast_to(rhs, (*lead, inner, cols))
    for index in np.ndindex(*lead):
        product(lhs[index], rhs[index], out=out[index])
    return out
