"""The layout rules that turn a row-major matmul into one column-major cuBLAS call, checked on
any machine: the planned call is executed by a NumPy model of ``cublasGemmStridedBatchedEx``
(column-major operands read through their leading dimensions and batch strides) and must give
``np.matmul``'s result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from burn_cuda._gemm_plan import OP_N, GemmCall, broadcast_batch, plan

pytestmark = pytest.mark.no_device


def _stored(x: np.ndarray, rows: int, cols: int, ld: int, stride: int, batch: int) -> np.ndarray:
    """The column-major ``[batch, rows, cols]`` matrices cuBLAS reads from `x`'s first element."""
    s = x.itemsize
    return as_strided(x, (batch, rows, cols), (stride * s, s, ld * s), writeable=False)


def _run(call: GemmCall, a: np.ndarray, b: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    c = call
    # First operand (our b): op(A) is m x k; second (our a): op(B) is k x n.
    first = (
        _stored(b, c.m, c.k, c.ld_first, c.stride_first, c.batch)
        if c.trans_first == OP_N
        else _stored(b, c.k, c.m, c.ld_first, c.stride_first, c.batch).transpose(0, 2, 1)
    )
    second = (
        _stored(a, c.k, c.n, c.ld_second, c.stride_second, c.batch)
        if c.trans_second == OP_N
        else _stored(a, c.n, c.k, c.ld_second, c.stride_second, c.batch).transpose(0, 2, 1)
    )
    out = np.full(out_shape, np.nan, dtype=a.dtype)
    s = out.itemsize
    view = as_strided(out, (c.batch, c.m, c.n), (c.stride_out * s, s, c.ld_out * s))
    view[...] = first @ second
    return out


def _check(a: np.ndarray, b: np.ndarray) -> GemmCall:
    batch = broadcast_batch(a.shape, b.shape)
    assert batch is not None
    a2, b2, call = plan(np, a, b, batch)
    got = _run(call, a2, b2, batch + (a.shape[-2], b.shape[-1]))
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-12, atol=1e-12)
    return call


def _data(rng: Any, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def test_row_major_operands_need_no_copy_and_no_transpose(rng: Any) -> None:
    a, b = _data(rng, 4, 5), _data(rng, 5, 6)
    call = _check(a, b)
    assert (call.trans_first, call.trans_second, call.batch) == (OP_N, OP_N, 1)
    assert (call.m, call.n, call.k, call.ld_first, call.ld_second, call.ld_out) == (6, 4, 5, 6, 5, 6)


@pytest.mark.parametrize("which", ["a", "b", "both"])
def test_transposed_views_are_passed_as_stored(rng: Any, which: str) -> None:
    a = _data(rng, 5, 4).T if which in ("a", "both") else _data(rng, 4, 5)
    b = _data(rng, 6, 5).T if which in ("b", "both") else _data(rng, 5, 6)
    a2, b2, call = plan(np, a, b, ())
    assert np.shares_memory(a2, a) and np.shares_memory(b2, b)  # no copies
    assert call.trans_second == (which in ("a", "both")) and call.trans_first == (which in ("b", "both"))
    _check(a, b)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [
        ((3, 4, 5), (3, 5, 6)),  # batched, same batch
        ((4, 5), (3, 5, 6)),  # one matrix for every batch: stride 0
        ((3, 4, 5), (5, 6)),
        ((1, 1, 4, 5), (2, 3, 5, 6)),  # size-1 batch dims: still one matrix
        ((2, 1, 4, 5), (2, 3, 5, 6)),  # a partial broadcast: materialized
        ((2, 3, 1, 5), (2, 3, 5, 1)),  # M = N = 1
        ((2, 3, 4, 1), (1, 6)),  # K = 1
    ],
)
def test_batched_and_broadcast_shapes(rng: Any, a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    _check(_data(rng, *a_shape), _data(rng, *b_shape))


def test_batched_transposed_views_and_strided_slices(rng: Any) -> None:
    a = _data(rng, 3, 5, 4).transpose(0, 2, 1)  # each matrix transposed, batch stride uniform
    b = _data(rng, 3, 5, 12)[:, :, ::2]  # neither layout: copied
    _, b2, call = plan(np, a, b, (3,))
    assert call.trans_second != OP_N and b2.flags.c_contiguous
    _check(a, b)
    _check(_data(rng, 2, 8, 5)[:, ::2], _data(rng, 5, 6))  # a strided slice of rows: copied


def test_stride_zero_for_a_shared_matrix(rng: Any) -> None:
    call = _check(_data(rng, 4, 5), _data(rng, 7, 5, 6))
    assert call.stride_second == 0 and call.stride_first == 30 and call.batch == 7


def test_batches_that_do_not_broadcast() -> None:
    assert broadcast_batch((2, 4, 5), (3, 5, 6)) is None
    assert broadcast_batch((2, 1, 4, 5), (3, 5, 6)) == (2, 3)
