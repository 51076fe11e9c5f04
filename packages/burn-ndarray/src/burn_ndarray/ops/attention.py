"""The attention family (`burn.backend.ops.attention`) on NumPy arrays: scaled dot-product
attention through blocks of query rows, so that at most `BLOCK_SCORES` scores are held at once
(the contract's composition holds all ``L_q x L_k`` of them, with four temporaries of that size),
and its backward helper the same way, each block's weights recomputed from q and k as the forward
made them. float32 and float64 arrays; float16 and bfloat16 ones (an autocast attention), alone or
beside float32, widened to float32, run so, and the results rounded once to the operands' result
dtype, as a GPU's half attention keeps its softmax and accumulations in float32; other dtypes
by the contract's composition. The softmax of a float32 block is one compiled call
(`burn_ndarray.kernels.attention`), and so is its backward; with one block, the products write
the gradients without a sum.

At two threads and more, the (batch x heads) matrices are split between burn-ndarray's threads,
each chunk's products on BLAS's one thread (`runtime.blas.single_threaded`): one attention head's
GEMMs (ViT-tiny: 197 x 197 x 64) are too small for BLAS to thread well. Where the matrices do not
share evenly between the threads (ViT-tiny at batch 1: 3 heads on 2 threads), the forward splits
the query rows instead, every matrix in each chunk.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from burn.backend.ops.attention import AttentionOps as DefaultAttentionOps
from burn_ndarray import kernels
from burn_ndarray.ops.rounding import to_dtype
from burn_ndarray.runtime import blas, split, threads
from burn_ndarray.runtime.dtypes import LOW

Array = Any
# Scores per block of query rows (16 MB in float32): a long sequence's weights never exist whole,
# and a short one is a single block.
BLOCK_SCORES = 1 << 22
_FAST = (np.dtype(np.float32), np.dtype(np.float64))
# Multiply-adds of the scores and the weighted sum (L_q x L_k x (d_k + d_v) per matrix) from which
# the matrices are split between threads: below, handing them over costs more than it saves.
THREADED_MIN_WORK = 1 << 21


def _fast(*arrays: Array) -> bool:
    first = arrays[0].dtype
    return first in _FAST and all(a.__class__ is np.ndarray and a.dtype == first for a in arrays)


def _half_result(*arrays: Array) -> Any:
    """The result dtype when the operands are NumPy arrays of the half dtypes or float32 with at
    least one half among them (an autocast attention, whose backward gets a float32 output
    gradient when the residual stream is float32), else None. Such operands widen exactly to
    float32 and run the float32 path; the contract's composition would run them one op at a time
    on NumPy's slow half-precision loops (an autocast transformer block's attention backward:
    2.1x the float32 one, docs/benchmarks-log.md)."""
    if not all(a.__class__ is np.ndarray and (a.dtype in LOW or a.dtype == np.float32) for a in arrays):
        return None
    if not any(a.dtype in LOW for a in arrays):
        return None
    return np.result_type(*arrays)


def _rows(query: Array, key: Array) -> int:
    """Query rows per block: `BLOCK_SCORES` scores over every leading dim and key."""
    per_row = math.prod(query.shape[:-2]) * key.shape[-2]
    return max(1, BLOCK_SCORES // max(1, per_row))


def _weights(q: Array, kt: Array, mask: Array | None, scale: float, causal: bool, start: int,
             parts: int | None = None) -> Array:
    """Weights of the query rows ``start..start + len(q)`` (as `attention_weights`, in place);
    the compiled softmax on `parts` threads (None: as many as its size takes)."""
    s = np.matmul(q, kt)
    rows, cols = s.shape[-2], s.shape[-1]
    masked = None
    if mask is not None:
        full = np.broadcast_to(mask, (*s.shape[:-2], mask.shape[-2] if mask.ndim >= 2 else 1, cols))
        masked = full if full.shape[-2] == 1 else full[..., start : start + rows, :]
    if causal:
        after = np.arange(start, start + rows)[:, None] < np.arange(cols)[None, :]
        masked = after if masked is None else masked | after
    compiled = kernels.load("attention") if s.dtype == np.float32 and s.flags.c_contiguous else None
    if masked is not None or compiled is None:
        # scaled before the -inf goes in (a scale <= 0 would turn it into +inf or NaN)
        s *= scale
        if masked is not None:
            np.copyto(s, -np.inf, where=masked)
    if compiled is not None:
        rows2d = s.reshape(-1, cols)  # a view of matmul's fresh block
        if parts is None:
            parts = split.compiled_parts(s.size, split.ROWWISE_PER_THREAD, split.NATIVE_UFUNC_PER_THREAD)
        # unmasked scores: scaled inside the softmax's first pass, not in a pass of their own
        factor = 1.0 if masked is not None else scale
        serial, parallel = compiled.softmax_rows_range, compiled.softmax_rows
        split.run_ranges(serial, parallel, rows2d.shape[0], parts, rows2d, factor)
        return s
    top = s.max(-1, keepdims=True)
    top[np.isinf(top)] = 0.0  # every key masked: exp gives 0 instead of NaN
    s -= top
    np.exp(s, out=s)
    total = s.sum(-1, keepdims=True)
    total[total == 0] = 1.0
    s /= total
    return s


def _chunks(query: Array, key: Array, value: Array, mask: Array | None) -> list[slice] | None:
    """Chunks of the flattened leading (batch x heads) dims for the threads, or None to run
    whole: one thread, a single matrix, leading dims that broadcast, a mask that differs between
    matrices, or too little work."""
    count = threads.get_num_threads()
    if count < 2:
        return None
    lead = query.shape[:-2]
    n = math.prod(lead)
    if n < 2 or key.shape[:-2] != lead or value.shape[:-2] != lead:
        return None
    if mask is not None and math.prod(mask.shape[:-2]) != 1:
        return None
    work = n * query.shape[-2] * key.shape[-2] * (key.shape[-1] + value.shape[-1])
    if work < THREADED_MIN_WORK:
        return None
    return threads.split(n, min(count, n))


def _row_chunks(query: Array, chunks: list[slice]) -> list[slice] | None:
    """Chunks of the query rows for the forward's threads, in place of `chunks` of matrices that
    do not share evenly between the threads (ViT-tiny at batch 1: 3 heads, 2 for one thread and 1
    for the other), else None. Each query row's output needs its own scores alone, so rows split
    without a sum; the backward sums over rows, and keeps the matrices."""
    count = len(chunks)
    n = chunks[-1].stop
    if n % count == 0 or query.shape[-2] < 2 * count:
        return None
    return threads.split(query.shape[-2], count)


def _flat(a: Array) -> Array:
    """`a` with its leading dims as one: ``[n, rows, cols]``."""
    return a.reshape(-1, *a.shape[-2:])


def _matrix_mask(mask: Array | None) -> Array | None:
    """A mask shared by every matrix, without its unit leading dims (it then broadcasts over a
    chunk's ``[n, rows, cols]``)."""
    return mask.reshape(mask.shape[-2:]) if mask is not None and mask.ndim > 2 else mask


def _forward(query: Array, key: Array, value: Array, mask: Array | None, scale: float, causal: bool,
             out: Array, step: int, parts: int | None, first: int = 0) -> None:
    """Attention of float32/float64 arrays into `out`, through blocks of `step` query rows (the
    whole problem's, so that a chunk of matrices is cut as when run whole: the same bits);
    `query` and `out` hold the query rows from `first` on (a chunk of rows: the mask's and the
    causal cut's rows are counted from there)."""
    lq = query.shape[-2]
    kt = np.swapaxes(key, -1, -2)
    for start in range(0, lq, step):
        w = _weights(query[..., start : start + step, :], kt, mask, scale, causal, first + start, parts)
        np.matmul(w, value, out=out[..., start : start + step, :])


def _backward(query: Array, key: Array, value: Array, mask: Array | None, output_grad: Array,
              scale: float, causal: bool, step: int, parts: int | None) -> tuple[Array, Array, Array]:
    """The gradients of float32/float64 attention, through blocks of `step` query rows (as
    `_forward`), each block's weights recomputed; compiled softmax passes on `parts` threads."""
    lq = query.shape[-2]
    kt, vt = np.swapaxes(key, -1, -2), np.swapaxes(value, -1, -2)
    grad_query = np.empty(query.shape, query.dtype)
    whole = step >= lq  # one block: its products write the gradients directly
    fresh = np.empty if whole else np.zeros
    grad_key = fresh(key.shape, query.dtype)
    grad_value = fresh(value.shape, query.dtype)
    compiled = kernels.load("attention") if query.dtype == np.float32 else None
    for start in range(0, lq, step):
        rows = slice(start, start + step)
        q, g = query[..., rows, :], output_grad[..., rows, :]
        w = _weights(q, kt, mask, scale, causal, start, parts)
        if whole:
            np.matmul(np.swapaxes(w, -1, -2), g, out=grad_value)
        else:
            grad_value += np.matmul(np.swapaxes(w, -1, -2), g)
        grad_w = np.matmul(g, vt)
        if compiled is not None and grad_w.flags.c_contiguous and w.flags.c_contiguous:
            width = grad_w.shape[-1]
            dw2d, w2d = grad_w.reshape(-1, width), w.reshape(-1, width)
            n = parts or split.compiled_parts(w.size, split.ROWWISE_PER_THREAD, split.NATIVE_UFUNC_PER_THREAD)
            serial, parallel = compiled.softmax_grad_rows_range, compiled.softmax_grad_rows
            split.run_ranges(serial, parallel, dw2d.shape[0], n, dw2d, w2d, scale)
        else:
            grad_w -= (grad_w * w).sum(-1, keepdims=True)
            grad_w *= w
            grad_w *= scale  # the scores' gradient
        np.matmul(grad_w, key, out=grad_query[..., rows, :])
        if whole:
            np.matmul(np.swapaxes(grad_w, -1, -2), q, out=grad_key)
        else:
            grad_key += np.matmul(np.swapaxes(grad_w, -1, -2), q)
    return grad_query, grad_key, grad_value


class AttentionOps:
    """The attention ops of `burn_ndarray.NdArray`."""

    def attention(self, query: Array, key: Array, value: Array, mask: Array | None, scale: float,
                  causal: bool) -> Array:
        half = _half_result(query, key, value)
        if half is not None:
            q, k, v = (a.astype(np.float32, copy=False) for a in (query, key, value))
            return to_dtype(AttentionOps.attention(self, q, k, v, mask, scale, causal), half)
        if not _fast(query, key, value):
            backend: Any = self  # a mixin of the Backend the default op runs on
            return DefaultAttentionOps.attention(backend, query, key, value, mask, scale, causal)
        out = np.empty((*query.shape[:-1], value.shape[-1]), query.dtype)
        chunks = _chunks(query, key, value, mask)
        step = _rows(query, key)
        if chunks is None:
            _forward(query, key, value, mask, scale, causal, out, step, None)
            return out
        q, k, v, o, m = _flat(query), _flat(key), _flat(value), _flat(out), _matrix_mask(mask)
        rows = _row_chunks(query, chunks)

        def task(c: slice) -> None:
            _forward(q[c], k[c], v[c], m, scale, causal, o[c], step, 1)  # one thread each

        def row_task(r: slice) -> None:
            _forward(q[:, r], k, v, m, scale, causal, o[:, r], step, 1, r.start)

        with blas.single_threaded():
            if rows is None:
                threads.run(task, chunks)
            else:
                threads.run(row_task, rows)
        return out

    def attention_backward(self, query: Array, key: Array, value: Array, mask: Array | None,
                           output_grad: Array, scale: float, causal: bool) -> tuple[Array, Array, Array]:
        half = _half_result(query, key, value, output_grad)
        if half is not None:
            q, k, v, g = (a.astype(np.float32, copy=False) for a in (query, key, value, output_grad))
            grads = AttentionOps.attention_backward(self, q, k, v, mask, g, scale, causal)
            return tuple(to_dtype(a, half) for a in grads)  # type: ignore[return-value]
        if not _fast(query, key, value, output_grad):
            backend: Any = self
            return DefaultAttentionOps.attention_backward(
                backend, query, key, value, mask, output_grad, scale, causal
            )
        chunks = _chunks(query, key, value, mask)
        step = _rows(query, key)
        if chunks is None:
            return _backward(query, key, value, mask, output_grad, scale, causal, step, None)
        q, k, v, g, m = _flat(query), _flat(key), _flat(value), _flat(output_grad), _matrix_mask(mask)
        flat_grads = [np.empty(a.shape, query.dtype) for a in (q, k, v)]

        def task(c: slice) -> None:
            parts = _backward(q[c], k[c], v[c], m, g[c], scale, causal, step, 1)  # one thread each
            for whole, part in zip(flat_grads, parts, strict=True):
                whole[c] = part

        with blas.single_threaded():
            threads.run(task, chunks)
        grad_query, grad_key, grad_value = flat_grads
        return grad_query.reshape(query.shape), grad_key.reshape(key.shape), grad_value.reshape(value.shape)
