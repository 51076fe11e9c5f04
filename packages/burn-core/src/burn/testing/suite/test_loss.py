"""Loss ops: cross-entropy against class indices and its backward helper, against float64
references, with every reduction, one-class and no-row edges, logits far from zero, infinities
and NaN in single rows, and enough rows that a backend may split them between threads; plus the
functional `cross_entropy_with_logits` (a composition).

The forward op goes through `burn.tensor.module.cross_entropy`; the backward helper has no
Tensor method and is called on the backend's primitives directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, f64, float_input, make, rand_float, tensor_module, wrap_float
from burn.testing.reference import activation as ref

REDUCTIONS = ("none", "sum", "mean")


# (rows, classes): one class, one row, a typical classifier batch, more classes than rows, and
# 2048 x 160 (327,680 logits: large enough for a backend to split rows between threads).
SHAPES = [(1, 1), (3, 1), (1, 5), (32, 10), (4, 50), (2048, 160), (3, 1003)]


def _losses(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The float64 per-row losses."""
    return -ref.log_softmax(x, 1)[np.arange(x.shape[0]), t]


def _reduce(losses: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.array([losses.sum()])
    return np.array([losses.mean() if losses.size else np.nan])


def _gradient(x: np.ndarray, t: np.ndarray, g: np.ndarray, reduction: str) -> np.ndarray:
    """The float64 gradient of the reduced loss with respect to `x`, given its gradient `g`."""
    rows = x.shape[0]
    diff = ref.softmax(x, 1)
    diff[np.arange(rows), t] -= 1.0
    if reduction == "none":
        return diff * g.reshape(rows, 1)
    return diff * (g.reshape(()) / (rows if reduction == "mean" else 1))


def _cross_entropy(logits: Any, targets: Any, reduction: Any) -> Any:
    from burn.tensor import module

    return module.cross_entropy(logits, targets, reduction)


@covers("cross_entropy")
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cross_entropy(backend: Any, float_dtype: DType, shape: Any, reduction: str, rng: Any) -> None:
    rows, classes = shape
    x = rand_float(rng, shape, float_dtype, -4, 4)
    t = rng.integers(0, classes, size=rows)
    out = _cross_entropy(make(backend, x, float_dtype), make(backend, t, backend.int_dtype), reduction)
    terms = rows if reduction == "sum" else classes
    want = _reduce(_losses(f64(x), t), reduction)
    check_float(out, want, float_dtype, terms=terms, what=f"cross_entropy {shape} {reduction}")


@covers("cross_entropy")
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_of_no_rows(backend: Any, float_dtype: DType, reduction: str) -> None:
    x = np.zeros((0, 4), dtype=float_dtype.numpy)
    t = np.zeros((0,), dtype=np.int64)
    out = _cross_entropy(make(backend, x, float_dtype), make(backend, t, backend.int_dtype), reduction)
    want = {"none": np.zeros(0), "sum": np.zeros(1), "mean": np.full(1, np.nan)}[reduction]
    check_float(out, want, float_dtype, what=f"cross_entropy of no rows, {reduction}")


@covers("cross_entropy")
def test_cross_entropy_is_stable_far_from_zero(backend: Any, float_dtype: DType) -> None:
    # exp(1000) overflows every float type: the loss must come from logits shifted by their max.
    x = np.array([[1000.0, 0.0, -1000.0], [-1000.0, -1001.0, -1003.0], [60.0, 61.0, 62.0]])
    x = x.astype(float_dtype.numpy)  # bfloat16 rounds -1001 and -1003: the reference sees that too
    t = np.array([0, 2, 1])
    out = _cross_entropy(make(backend, x, float_dtype), make(backend, t, backend.int_dtype), "none")
    check_float(out, _losses(f64(x), t), float_dtype, terms=3, what="cross_entropy far from zero")


@covers("cross_entropy")
def test_cross_entropy_with_infinities_and_nan(backend: Any, float_dtype: DType) -> None:
    # A masked class (-inf) takes no probability: finite loss unless it is the target (inf).
    # A NaN or a +inf logit makes its own row NaN and leaves the others alone.
    inf, nan = np.inf, np.nan
    x = np.array([[0.0, -inf, 1.0], [0.0, -inf, 1.0], [0.5, nan, 1.0], [2.0, inf, 1.0], [1.0, 2.0, 3.0]])
    t = np.array([0, 1, 0, 0, 2])
    out = _cross_entropy(make(backend, x, float_dtype), make(backend, t, backend.int_dtype), "none")
    finite = np.log(1.0 + np.e)  # row 0: logsumexp([0, 1]) - 0
    want = np.array([finite, inf, nan, nan, _losses(x[4:], t[4:])[0]])
    check_float(out, want, float_dtype, terms=3, what="cross_entropy with inf and NaN logits")


@covers("cross_entropy", "cross_entropy_backward")
def test_cross_entropy_special_values_in_long_rows(backend: Any, float_dtype: DType, rng: Any) -> None:
    # Rows as long as a language model's (a backend may take another kernel for them, with its
    # own tails: 203 classes is no multiple of a vector width): a -inf logit takes no
    # probability, a NaN or +inf makes its own row NaN and leaves the others alone.
    x = rand_float(rng, (5, 203), float_dtype, -4, 4)
    x[0, 7], x[1, 200], x[2, 100], x[3, 202] = -np.inf, np.nan, np.inf, -np.inf
    t = np.array([3, 4, 5, 202, 9])
    tx, tt = make(backend, x, float_dtype), make(backend, t, backend.int_dtype)
    with np.errstate(invalid="ignore"):  # the reference's inf - inf in rows 1 and 2
        want = _losses(f64(x), t)
        grad = _gradient(f64(x), t, np.ones(5), "none")
    want[1] = want[2] = np.nan
    check_float(_cross_entropy(tx, tt, "none"), want, float_dtype, terms=203, what="long rows")
    tg = make(backend, np.ones(5), float_dtype)
    dx = wrap_float(backend, backend.cross_entropy_backward(tx._p, tt._p, tg._p, "none"))
    grad[1:3] = np.nan
    check_float(dx, grad, float_dtype, terms=203, what="long rows backward")


@covers("cross_entropy_backward")
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (2048, 160), (3, 1003)], ids=str)
def test_cross_entropy_backward_helper(
    backend: Any, float_dtype: DType, shape: Any, reduction: str, rng: Any
) -> None:
    rows, classes = shape
    x = rand_float(rng, shape, float_dtype, -4, 4)
    t = rng.integers(0, classes, size=rows)
    g = rand_float(rng, (rows,) if reduction == "none" else (1,), float_dtype, 0.5, 2)
    tx, tg = make(backend, x, float_dtype), make(backend, g, float_dtype)
    tt = make(backend, t, backend.int_dtype)
    dx = wrap_float(backend, backend.cross_entropy_backward(tx._p, tt._p, tg._p, reduction))
    want = _gradient(f64(x), t, f64(g), reduction)
    check_float(dx, want, float_dtype, terms=classes, what=f"cross_entropy_backward {reduction}")


def test_cross_entropy_with_logits(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    logits, tl = float_input(backend, rng, dtype, (2, 3, 4))
    probs = ref.softmax(rng.standard_normal((2, 3, 4)), -1)
    tp = make(backend, probs, dtype)
    want = -(ref.log_softmax(logits, -1) * f64(probs.astype(dtype.numpy))).sum(-1).mean()
    check_float(
        tensor_module().cross_entropy_with_logits(tl, tp), [want], dtype, terms=8, what="cross_entropy"
    )
    with pytest.raises(ShapeError, match="must have the same shape"):
        tensor_module().cross_entropy_with_logits(tl, make(backend, probs[0], dtype))
