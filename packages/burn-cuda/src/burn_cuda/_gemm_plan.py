"""How a row-major ``[..., M, K] @ [..., K, N]`` becomes one column-major cuBLAS GEMM call.

Pure layout arithmetic (no CUDA), so the rules are tested on NumPy arrays on any machine.

cuBLAS is column-major: the row-major product ``C = A @ B`` is computed as ``C^T = B^T A^T``,
and a row-major C-contiguous matrix read column-major *is* its transpose. So our ``b`` is
cuBLAS' first operand and our ``a`` its second; an operand that is a transposed view of a
contiguous buffer is passed as stored with the transpose flag set instead of being copied.
Batched operands need one stride between matrices; a batch broadcast from a single matrix
uses stride 0. Anything else is copied to C order first.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

Array = Any

OP_N, OP_T = 0, 1  # cublasOperation_t


@dataclass(frozen=True)
class GemmCall:
    """The arguments of ``cublasGemmStridedBatchedEx`` (element counts, not bytes)."""

    trans_first: int  # op on cuBLAS' first operand: our `b`
    trans_second: int  # op on its second: our `a`
    m: int  # N
    n: int  # M
    k: int  # K
    ld_first: int
    stride_first: int
    ld_second: int
    stride_second: int
    ld_out: int
    stride_out: int
    batch: int


def _matrix_layout(x: Array) -> tuple[int, int] | None:
    """``(op, ld)`` of the trailing ``[R, C]`` matrices of a C-contiguous `x` (op N, ld C) or of a
    transposed view of one (op T, ld R); None for any other layout."""
    rows, cols = x.shape[-2:]
    if x.flags.c_contiguous:
        return OP_N, max(cols, 1)
    if x.swapaxes(-1, -2).flags.c_contiguous:
        return OP_T, max(rows, 1)
    return None


def _operand(xp: ModuleType, x: Array, batch: tuple[int, ...]) -> tuple[Array, int, int, int]:
    """`x` ready for the call over `batch`: ``(array, op, ld, batch stride)``, copied only when
    its layout has no single batch stride or is neither row- nor column-major."""
    rows, cols = x.shape[-2:]
    own = x.shape[:-2]
    if all(d == 1 for d in own):  # one matrix for the whole batch: stride 0
        x = x.reshape(rows, cols)
        layout = _matrix_layout(x)
        if layout is None:
            x = xp.ascontiguousarray(x)
            layout = _matrix_layout(x)
        assert layout is not None
        return x, layout[0], layout[1], 0
    if tuple(own) != batch:  # a partial broadcast: materialized below (stride-0 dims)
        x = xp.broadcast_to(x, batch + (rows, cols))
    layout = _matrix_layout(x)
    if layout is None:
        x = xp.ascontiguousarray(x)
        layout = _matrix_layout(x)
    assert layout is not None
    return x, layout[0], layout[1], rows * cols


def broadcast_batch(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The broadcast of the leading dims of two matmul operands (None when they do not broadcast)."""
    left, right = a_shape[:-2], b_shape[:-2]
    n = max(len(left), len(right))
    left, right = (1,) * (n - len(left)) + tuple(left), (1,) * (n - len(right)) + tuple(right)
    out = []
    for p, q in zip(left, right, strict=True):
        if p != q and p != 1 and q != 1:
            return None
        out.append(q if p == 1 else p)
    return tuple(out)


def plan(xp: ModuleType, a: Array, b: Array, batch: tuple[int, ...]) -> tuple[Array, Array, GemmCall]:
    """`a` ``[..., M, K]`` and `b` ``[..., K, N]`` (rank >= 2, leading dims broadcasting to
    `batch`, no dim zero) as cuBLAS operands and the call that writes a C-contiguous
    ``batch + [M, N]`` output."""
    m, k = a.shape[-2:]
    n = b.shape[-1]
    count = 1
    for d in batch:
        count *= d
    a, op_a, ld_a, stride_a = _operand(xp, a, batch)
    b, op_b, ld_b, stride_b = _operand(xp, b, batch)
    call = GemmCall(op_b, op_a, n, m, k, ld_b, stride_b, ld_a, stride_a, max(n, 1), m * n, count)
    return a, b, call
