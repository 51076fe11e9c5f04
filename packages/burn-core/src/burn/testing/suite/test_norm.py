"""Layer normalization and its backward helper against float64 references: rows of one element
(variance 0: the output is beta), several leading dims, without a shift, a constant row, rows long
enough that a backend may split them between threads, and the checks of its arguments.

The forward op goes through `burn.tensor.module.layer_norm`; the backward helper has no Tensor
method and is called on the backend's primitives directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, f64, make, rand_float, tensor_module, wrap_float

SHAPES = [(1,), (3, 1), (2, 5), (2, 3, 7), (4, 2, 3, 16), (600, 256)]
EPS = 1e-5


def _forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray | None, eps: float) -> np.ndarray:
    xh = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    return xh * gamma + (0.0 if beta is None else beta)


def _backward(x, gamma, eps, dy):  # type: ignore[no-untyped-def]
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + eps)
    xh = (x - x.mean(-1, keepdims=True)) * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(-1, keepdims=True) - xh * (g * xh).mean(-1, keepdims=True))
    width = x.shape[-1]
    return dx, (dy * xh).reshape(-1, width).sum(0), dy.reshape(-1, width).sum(0)


@covers("layer_norm")
@pytest.mark.parametrize("shift", [True, False], ids=["beta", "no-beta"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_layer_norm(backend: Any, float_dtype: DType, shape: Any, shift: bool, rng: Any) -> None:
    x = rand_float(rng, shape, float_dtype)
    gamma = rand_float(rng, shape[-1:], float_dtype)
    beta = rand_float(rng, shape[-1:], float_dtype) if shift else None
    out = tensor_module().layer_norm(
        make(backend, x, float_dtype),
        make(backend, gamma, float_dtype),
        None if beta is None else make(backend, beta, float_dtype),
        epsilon=EPS,
    )
    want = _forward(f64(x), f64(gamma), None if beta is None else f64(beta), EPS)
    check_float(out, want, float_dtype, terms=2 * shape[-1] + 4, what=f"layer_norm {shape}")


@covers("layer_norm")
def test_layer_norm_of_a_constant_row_is_beta(backend: Any, float_dtype: DType) -> None:
    x = np.full((2, 6), 3.0)
    gamma, beta = np.linspace(-1, 1, 6), np.linspace(0.5, 2, 6)
    out = tensor_module().layer_norm(*(make(backend, a, float_dtype) for a in (x, gamma, beta)), epsilon=0.1)
    check_float(
        out,
        np.broadcast_to(f64(beta.astype(float_dtype.numpy)), (2, 6)),
        float_dtype,
        what="layer_norm of a constant row",
    )


@covers("layer_norm")
def test_layer_norm_refuses_bad_arguments(backend: Any) -> None:
    from burn.errors import KindError, ShapeError

    dtype = backend.float_dtype
    x, gamma = make(backend, np.zeros((2, 4)), dtype), make(backend, np.ones(4), dtype)
    layer_norm = tensor_module().layer_norm
    with pytest.raises(ShapeError, match=r"layer_norm: gamma must be \[4\] for x \(2, 4\), got \(3,\)"):
        layer_norm(x, make(backend, np.ones(3), dtype))
    with pytest.raises(ShapeError, match=r"layer_norm: beta must be \[4\]"):
        layer_norm(x, gamma, make(backend, np.ones((1, 4)), dtype))
    with pytest.raises(KindError, match="layer_norm: gamma must be a Float tensor"):
        layer_norm(x, make(backend, np.ones(4, np.int64), backend.int_dtype))
    with pytest.raises(ValueError, match="layer_norm: epsilon must be finite and >= 0"):
        layer_norm(x, gamma, epsilon=-1.0)


@covers("layer_norm_backward")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_layer_norm_backward_helper(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    x = rand_float(rng, shape, float_dtype)
    gamma = rand_float(rng, shape[-1:], float_dtype)
    dy = rand_float(rng, shape, float_dtype, -1, 1)
    tx, tg, tdy = (make(backend, a, float_dtype) for a in (x, gamma, dy))
    got = backend.layer_norm_backward(tx._p, tg._p, EPS, tdy._p)
    want = _backward(f64(x), f64(gamma), EPS, f64(dy))
    rows = int(np.prod(shape[:-1]))
    terms = (6 * shape[-1], 4 * rows, rows)
    for name, g, w, n in zip(("x", "gamma", "beta"), got, want, terms, strict=True):
        what = f"layer_norm_backward {shape} {name}"
        check_float(wrap_float(backend, g), w, float_dtype, terms=n, what=what)
