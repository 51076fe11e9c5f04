"""Gradients that reach a tensor as slices (`burn_autodiff.sliced`): joined by one ``cat`` when
they cut one dim into disjoint stretches, summed otherwise; the values are the dense sums'."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import host, leaf

from burn_autodiff import Autodiff
from burn_autodiff.sliced import Pieces, SlicedGrad, accumulate, materialize

X = np.arange(2 * 6 * 5, dtype=np.float64).reshape(2, 6, 5) / 7.0


def _weights(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _loss_grad(B: Autodiff, pieces: list[tuple[slice, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """d/dx of sum_k sum(x[pieces[k]] * w_k), through burn and by hand."""
    x = leaf(B, X)
    expected = np.zeros_like(X)
    loss = None
    for k, index in enumerate(pieces):
        part = x[index]
        w = _weights(part.shape, k)
        term = (part * leaf(B, w)).sum()
        loss = term if loss is None else loss + term
        expected[index] += w
    grads = loss.backward()
    return host(x.grad(grads)), expected


@pytest.mark.parametrize(
    "pieces",
    [
        [(slice(None), slice(t, t + 1)) for t in range(6)],  # every step of dim 1, as an RNN reads
        [(slice(None), slice(4, 6)), (slice(None), slice(0, 1))],  # out of order, with a gap
        [(slice(None), slice(None), slice(0, 2)), (slice(None), slice(None), slice(3, 5))],  # last dim
        [(slice(0, 1),), (slice(1, 2),)],  # first dim, whole rows
    ],
    ids=["steps", "gaps", "last-dim", "first-dim"],
)
def test_disjoint_stretches_of_one_dim(B: Autodiff, pieces: list[tuple[slice, ...]]) -> None:
    got, expected = _loss_grad(B, pieces)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "pieces",
    [
        [(slice(None), slice(0, 4)), (slice(None), slice(2, 6))],  # overlapping
        [(slice(None), slice(0, 6, 2)), (slice(None), slice(1, 6, 2))],  # strided
        [(slice(0, 1), slice(0, 3)), (slice(1, 2), slice(3, 6))],  # two dims cut
    ],
    ids=["overlap", "strided", "two-dims"],
)
def test_other_pieces_are_summed(B: Autodiff, pieces: list[tuple[slice, ...]]) -> None:
    got, expected = _loss_grad(B, pieces)
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)


def test_slices_meet_a_whole_gradient(B: Autodiff) -> None:
    x = leaf(B, X)
    w = _weights(X.shape, 9)
    loss = (x * leaf(B, w)).sum() + x[:, 1:3].sum() + (x[:, 4:5] * 2.0).sum()
    expected = w.copy()
    expected[:, 1:3] += 1.0
    expected[:, 4:5] += 2.0
    np.testing.assert_allclose(host(x.grad(loss.backward())), expected, rtol=1e-15, atol=0)


def test_nested_autodiff_backend(B: Autodiff) -> None:
    """Autodiff(Autodiff): the pieces are the inner autodiff backend's tensors, joined by its ops."""
    BB = Autodiff(B)
    x = leaf(BB, [1.0, 2.0, 3.0, 4.0])
    y = (x[0:2] ** 3).sum() + (x[2:4] ** 2).sum()
    (gx,) = [x.grad(y.backward())]
    np.testing.assert_allclose(host(gx), [3.0, 12.0, 6.0, 8.0])


class _Recorder:
    """An inner backend stand-in that records which primitive ops the joining uses."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def op(*args: Any) -> Any:
            self.calls.append(name)
            if name == "float_cat":
                return np.concatenate(args[0], axis=args[1])
            if name == "float_zeros":
                return np.zeros(args[0])
            if name in ("float_device", "float_get_dtype"):
                return None
            if name == "float_slice_assign":
                out = np.array(args[0])
                out[args[1]] = args[2]
                return out
            if name == "float_add":
                return args[0] + args[1]
            raise AssertionError(name)

        return op


def test_steps_become_one_cat_without_full_zeros() -> None:
    B = _Recorder()
    shape = (4, 3)
    pending: Any = None
    for t in range(4):
        piece = SlicedGrad(shape, (slice(t, t + 1, 1), slice(0, 3, 1)), np.full((1, 3), float(t)))
        pending = piece if pending is None else accumulate(B, pending, piece)
    assert isinstance(pending, Pieces) and B.calls == []
    out = materialize(B, pending)
    assert B.calls.count("float_cat") == 1 and "float_add" not in B.calls and "float_zeros" not in B.calls
    np.testing.assert_array_equal(out, np.repeat(np.arange(4.0)[:, None], 3, axis=1))
