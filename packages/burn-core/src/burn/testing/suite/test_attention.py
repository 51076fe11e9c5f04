"""Scaled dot-product attention and its backward helper against float64 references: plain,
causal, with a broadcast Bool mask, a query whose keys are all masked (a zero row, not NaN),
unequal query and key lengths, and a long sequence (enough rows that a backend may work through
blocks of queries).

The forward op goes through `burn.tensor.module.attention`; the backward helper has no Tensor
method and is called on the backend's primitives directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, f64, make, rand_bool, rand_float, tensor_module, wrap_float

# (leading dims, L_q, L_k, E, E_v)
SHAPES = [((), 1, 1, 1, 1), ((2,), 3, 5, 4, 2), ((2, 3), 7, 7, 8, 8), ((1, 2), 300, 300, 16, 16)]


def _weights(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, scale: float, causal: bool) -> np.ndarray:
    scores = q @ np.swapaxes(k, -1, -2) * scale
    masked = np.zeros(scores.shape, bool)
    if mask is not None:
        masked |= np.broadcast_to(mask, scores.shape)
    if causal:
        masked |= np.triu(np.ones(scores.shape[-2:], bool), 1)
    scores = np.where(masked, -np.inf, scores)
    top = scores.max(-1, keepdims=True)
    top = np.where(np.isinf(top), 0.0, top)
    e = np.exp(scores - top)
    total = e.sum(-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)


def _forward(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: Any, scale: float, causal: bool
) -> np.ndarray:
    return _weights(q, k, mask, scale, causal) @ v


def _backward(q, k, v, mask, grad, scale, causal):  # type: ignore[no-untyped-def]
    w = _weights(q, k, mask, scale, causal)
    dv = np.swapaxes(w, -1, -2) @ grad
    dw = grad @ np.swapaxes(v, -1, -2)
    ds = w * (dw - (dw * w).sum(-1, keepdims=True)) * scale
    return ds @ k, np.swapaxes(ds, -1, -2) @ q, dv


def _inputs(rng: Any, shape: Any, dtype: DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lead, lq, lk, e, ev = shape
    return (
        rand_float(rng, (*lead, lq, e), dtype, -1, 1),
        rand_float(rng, (*lead, lk, e), dtype, -1, 1),
        rand_float(rng, (*lead, lk, ev), dtype, -1, 1),
    )


@covers("attention")
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_attention(backend: Any, float_dtype: DType, shape: Any, causal: bool, rng: Any) -> None:
    q, k, v = _inputs(rng, shape, float_dtype)
    scale = 1.0 / np.sqrt(shape[3])
    out = tensor_module().attention(*(make(backend, a, float_dtype) for a in (q, k, v)), causal=causal)
    want = _forward(f64(q), f64(k), f64(v), None, scale, causal)
    check_float(out, want, float_dtype, terms=2 * shape[3] + shape[2], what=f"attention {shape} {causal}")


@covers("attention")
def test_attention_with_a_broadcast_mask_and_a_fully_masked_query(
    backend: Any, float_dtype: DType, rng: Any
) -> None:
    shape = ((2, 3), 4, 6, 5, 3)
    q, k, v = _inputs(rng, shape, float_dtype)
    mask = rand_bool(rng, (2, 1, 4, 6))  # one mask per batch item, every head
    mask[1, 0, 2, :] = True  # batch 1, query 2: no key left
    out = tensor_module().attention(
        *(make(backend, a, float_dtype) for a in (q, k, v)), make(backend, mask, DType.BOOL), scale=0.7
    )
    want = _forward(f64(q), f64(k), f64(v), mask, 0.7, False)
    assert not np.isnan(want).any() and (want[1, :, 2] == 0).all()
    check_float(out, want, float_dtype, terms=16, what="attention with a mask")


@covers("attention")
def test_attention_refuses_mismatched_inputs(backend: Any, rng: Any) -> None:
    from burn.errors import KindError, ShapeError

    dtype = backend.float_dtype
    q, k, v = (make(backend, a, dtype) for a in _inputs(rng, ((2,), 3, 4, 5, 2), dtype))
    attention = tensor_module().attention
    with pytest.raises(ShapeError, match="attention: query .* and key .* must have the same width"):
        attention(q, make(backend, np.zeros((2, 4, 6)), dtype), v)
    with pytest.raises(ShapeError, match="attention: key .* and value .* must have the same length"):
        attention(q, k, make(backend, np.zeros((2, 3, 2)), dtype))
    with pytest.raises(ShapeError, match=r"attention: mask \(3, 3\) does not broadcast"):
        attention(q, k, v, make(backend, np.zeros((3, 3), bool), DType.BOOL))
    with pytest.raises(KindError, match="attention: mask must be a Bool tensor"):
        attention(q, k, v, make(backend, np.zeros((3, 4)), dtype))


@covers("attention_backward")
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_attention_backward_helper(
    backend: Any, float_dtype: DType, shape: Any, causal: bool, rng: Any
) -> None:
    q, k, v = _inputs(rng, shape, float_dtype)
    lead, lq, _, _, ev = shape
    grad = rand_float(rng, (*lead, lq, ev), float_dtype, -1, 1)
    mask = rand_bool(rng, (lq, shape[2])) if lq > 2 else None
    tq, tk, tv, tg = (make(backend, a, float_dtype) for a in (q, k, v, grad))
    tm = None if mask is None else make(backend, mask, DType.BOOL)._p
    scale = 0.5
    got = backend.attention_backward(tq._p, tk._p, tv._p, tm, tg._p, scale, causal)
    want = _backward(f64(q), f64(k), f64(v), mask, f64(grad), scale, causal)
    for name, g, w in zip(("query", "key", "value"), got, want, strict=True):
        check_float(
            wrap_float(backend, g), w, float_dtype, terms=4 * shape[3] + 2 * shape[2],
            what=f"attention_backward {shape} {causal} {name}",
        )
