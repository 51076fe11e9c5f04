"""A matrix used in several products gets its gradient as one GEMM over the stacked factors
(`burn_autodiff.products`); the values are the sum of the per-use products, up to rounding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import host, leaf, tensor

from burn import activation
from burn_autodiff import Autodiff, lazy, products
from burn_autodiff.products import ProductGrad, Products

RNG = np.random.default_rng(0)


def _spy_matmuls(monkeypatch: pytest.MonkeyPatch, B: Autodiff) -> list[tuple[int, ...]]:
    """Shapes of the inner backend's matmul results during the test."""
    shapes: list[tuple[int, ...]] = []
    inner = B.inner
    matmul = inner.float_matmul

    def spy(a: Any, b: Any) -> Any:
        out = matmul(a, b)
        shapes.append(tuple(out.shape))
        return out

    monkeypatch.setattr(inner, "float_matmul", spy)
    return shapes


def test_a_recurrence_multiplies_its_weight_gradient_once(
    B: Autodiff, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps, batch, hidden = 6, 3, 4
    w_np = RNG.standard_normal((hidden, hidden)) / 2
    xs = RNG.standard_normal((steps, batch, hidden))
    w = leaf(B, w_np)
    h = tensor(B, np.zeros((batch, hidden)))
    for t in range(steps):  # h = tanh(x_t + h @ W)
        h = activation.tanh(tensor(B, xs[t]) + h.matmul(w))
    shapes = _spy_matmuls(monkeypatch, B)
    grad = host(w.grad(h.sum().backward()))
    assert shapes.count((hidden, hidden)) == 1  # one GEMM for W's gradient, not one per step

    # by hand: the same recurrence backwards in float64, the per-step products summed
    hs = [np.zeros((batch, hidden))]
    for t in range(steps):
        hs.append(np.tanh(xs[t] + hs[-1] @ w_np))
    expected, dh = np.zeros_like(w_np), np.ones((batch, hidden))
    for t in range(steps, 0, -1):
        dz = dh * (1 - hs[t] ** 2)
        expected += hs[t - 1].T @ dz
        dh = dz @ w_np.T
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-12)


def test_products_meeting_other_gradients(B: Autodiff) -> None:
    """A shared weight also used element-wise and sliced: the products are multiplied, then added."""
    w_np = RNG.standard_normal((4, 5))
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4))
    w = leaf(B, w_np)
    loss = (tensor(B, a).matmul(w) * 2).sum() + tensor(B, b).matmul(w).sum() + (w * w).sum() + w[:2].sum()
    expected = 2 * a.T @ np.ones((3, 5)) + b.T @ np.ones((2, 5)) + 2 * w_np
    expected[:2] += 1
    np.testing.assert_allclose(host(w.grad(loss.backward())), expected, rtol=1e-12)


def test_a_linear_layer_on_a_sequence(B: Autodiff) -> None:
    """[batch, seq, d] @ W: the rows stacked, then one product (lazy when small)."""
    x, w_np = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 5))
    w = leaf(B, w_np)
    grads = (tensor(B, x).matmul(w) ** 2).sum().backward()
    y = x @ w_np
    np.testing.assert_allclose(host(w.grad(grads)), x.reshape(6, 4).T @ (2 * y).reshape(6, 5), rtol=1e-12)


def test_large_factors_are_multiplied_at_once(nd: Any) -> None:
    small = products.weight_grad(nd, np.ones((4, 8)), np.ones((4, 8)))
    assert isinstance(small, ProductGrad)
    rows = products.MAX_FACTOR_SIZE // 8 + 1
    big = products.weight_grad(nd, np.ones((rows, 4)), np.ones((rows, 4)))
    assert isinstance(big, np.ndarray) and big.shape == (4, 4) and big[0, 0] == rows


def test_factors_of_other_dtypes_are_not_stacked(nd: Any) -> None:
    x32, g32 = np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)
    x64, g64 = np.ones((5, 3)), np.ones((5, 4))
    joined = lazy.accumulate(nd, ProductGrad(x32, g32), ProductGrad(x32 * 2, g32))
    assert isinstance(joined, Products) and len(joined) == 2
    total = lazy.accumulate(nd, joined, ProductGrad(x64, g64))  # multiplied, then added
    assert isinstance(total, np.ndarray) and np.array_equal(total, np.full((3, 4), 2 + 4 + 5.0))
    assert np.array_equal(lazy.materialize(nd, joined), np.full((3, 4), 6, np.float32))
