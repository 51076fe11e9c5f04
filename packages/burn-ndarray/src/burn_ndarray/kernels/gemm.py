"""Compiled launcher of the blocked GEMM (`burn_ndarray.runtime.gemm`): blocks of the result's
columns (or rows), each one call of NumPy's CBLAS ``?gemm``, on numba's TBB pool one block at a
time (numba's parallel chunk size 1), so that a thread that is not running holds none of the work that
is not started yet: the thread that launched the loop takes every block left.

The BLAS function is called by its address (`call_gemm`, a call through a pointer in the
generated code), so the kernel holds no ctypes object and numba caches it on disk like the others.
"""

from __future__ import annotations

from typing import Any

import numba
from llvmlite import ir
from numba import prange, types
from numba.core.extending import intrinsic

from burn_ndarray.kernels.jit import jit_parallel

# CBLAS's enums.
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


@intrinsic
def call_gemm(
    typingctx: Any,
    address: Any,
    order: Any,
    trans_a: Any,
    trans_b: Any,
    m: Any,
    n: Any,
    k: Any,
    alpha: Any,
    a: Any,
    lda: Any,
    b: Any,
    ldb: Any,
    beta: Any,
    c: Any,
    ldc: Any,
) -> Any:
    """``cblas_?gemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`` at
    `address`: enums int32, sizes int64 (OpenBLAS's 64-bit interface, NumPy's), pointers int64,
    `alpha`/`beta` the element type."""
    args = (order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    expected = (types.int32,) * 3 + (types.int64,) * 3
    if tuple(args[:6]) != expected or alpha != beta or alpha not in (types.float32, types.float64):
        return None  # numba reports no matching signature

    def codegen(context: Any, builder: Any, signature: Any, values: Any) -> Any:
        argument_types = [context.get_value_type(t) for t in signature.args[1:]]
        function = builder.inttoptr(values[0], ir.FunctionType(ir.VoidType(), argument_types).as_pointer())
        builder.call(function, values[1:])
        return context.get_dummy_value()

    return types.void(address, *args), codegen


@jit_parallel
def gemm_blocks(
    address: int,
    trans_a: Any,
    trans_b: Any,
    m: int,
    n: int,
    k: int,
    a: int,
    lda: int,
    b: int,
    ldb: int,
    c: int,
    ldc: int,
    one: Any,
    zero: Any,
    axis: int,
    width: int,
    blocks: int,
    a_step: int,
    b_step: int,
    c_step: int,
) -> None:
    """``c = a @ b`` (row-major) in `blocks` blocks of `width` columns (`axis` 1: `b` and `c`
    advance by `b_step` / `c_step` bytes a column) or rows (`axis` 0: `a` and `c` advance by
    `a_step` / `c_step` bytes a row). Launched with numba's parallel chunk size 1 (set by the
    caller: numba's setter is not cacheable in compiled code), one block per hand-out."""
    # numba passes no typing context at the calls: mypy sees the intrinsic's signature.
    for block in prange(blocks):
        start = block * width
        if axis == 1:
            size = min(width, n - start)
            call_gemm(  # type: ignore[call-arg]
                address, numba.int32(ROW_MAJOR), trans_a, trans_b, m, size, k, one,
                a, lda, b + start * b_step, ldb, zero, c + start * c_step, ldc,
            )  # fmt: skip
        else:
            size = min(width, m - start)
            call_gemm(  # type: ignore[call-arg]
                address, numba.int32(ROW_MAJOR), trans_a, trans_b, size, n, k, one,
                a + start * a_step, lda, b, ldb, zero, c + start * c_step, ldc,
            )  # fmt: skip
