"""burn-ndarray's fused Adam (`burn_ndarray.ops.optim`): the default op's bits on every path (whole
arrays, block by block, first step, moments written in place or not), and its fallbacks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend.ops.optim import OptimOps
from burn_ndarray import NdArray
from burn_ndarray.ops import optim

SCALARS = (0.9, 0.999, 0.01, 1e-5)


def operands(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
    p, g, m = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    return [p, g, m, rng.uniform(0.1, 2.0, size=shape).astype(dtype)]


def default(B: NdArray, p: Any, g: Any, m: Any, v: Any) -> list[np.ndarray]:
    return list(OptimOps.float_adam_step(B, p, g, m, v, *SCALARS))  # type: ignore[arg-type]


@pytest.fixture(params=["whole", "blocked"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "blocked":  # small blocks, the last one partial
        monkeypatch.setattr(optim, "BLOCKED_MIN_SIZE", 1)
        monkeypatch.setattr(optim, "BLOCK", 1000)
    return str(request.param)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("first", [True, False], ids=["first-step", "later-step"])
def test_same_bits_as_the_default_op(B: NdArray, rng: Any, path: str, dtype: Any, first: bool) -> None:
    p, g, m, v = operands(rng, (53, 97), dtype)  # 5141 elements: six blocks of 1000
    expected = default(B, p, g, None if first else m.copy(), None if first else v.copy())
    moment_1, moment_2 = (None, None) if first else (m.copy(), v.copy())
    got = B.float_adam_step(p, g, moment_1, moment_2, *SCALARS)
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == dtype and a.shape == (53, 97)
        np.testing.assert_array_equal(a, b)


def test_handed_over_moments_are_written_in_place(B: NdArray, rng: Any, path: str) -> None:
    p, g, m, v = operands(rng, (300, 300), np.float32)  # 360 KB: above the reuse threshold
    expected = default(B, p, g, m.copy(), v.copy())
    moment_1, moment_2 = m.copy(), v.copy()
    addresses = [a.__array_interface__["data"][0] for a in (moment_1, moment_2)]
    # No *args: CPython's argument tuple would be a second holder of the moments.
    new, m1, v1 = B.float_adam_step(p, g, moment_1, moment_2, 0.9, 0.999, 0.01, 1e-5)
    assert [a.__array_interface__["data"][0] for a in (m1, v1)] == addresses
    for a, b in zip((new, m1, v1), expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_moments_held_elsewhere_are_only_read(B: NdArray, rng: Any, path: str) -> None:
    p, g, m, v = operands(rng, (300, 300), np.float32)
    kept = [m.copy(), v.copy()]
    moment_1, moment_2 = kept
    B.float_adam_step(p, g, moment_1, moment_2, 0.9, 0.999, 0.01, 1e-5)
    np.testing.assert_array_equal(kept[0], m)
    np.testing.assert_array_equal(kept[1], v)


def test_views_and_other_dtypes_take_the_whole_array_or_default_path(B: NdArray, rng: Any, path: str) -> None:
    p, g, m, v = operands(rng, (97, 53), np.float32)
    transposed = [a.T for a in (p, g, m, v)]  # not C-contiguous: never flattened into blocks
    got = B.float_adam_step(*transposed, *SCALARS)
    for a, b in zip(got, default(B, *transposed), strict=True):
        np.testing.assert_array_equal(a, b)
    half = [a.astype(np.float16) for a in (p, g, m, v)]  # the default op, as the plain ops do
    for a, b in zip(B.float_adam_step(*half, *SCALARS), default(B, *half), strict=True):
        assert a.dtype == np.float16
        np.testing.assert_array_equal(a, b)


def test_a_gradient_in_f_order_gives_a_c_order_param(B: NdArray, rng: Any, path: str) -> None:
    """A weight gradient handed over in F order (the matmul backward's transposed product) is
    taken in C order: the same bits as the C-order gradient, and the new param stays C-ordered."""
    p, g, m, v = operands(rng, (64, 300), np.float32)
    expected = B.float_adam_step(p, g, m.copy(), v.copy(), 0.9, 0.999, 1e-3, 1e-8)
    f_grad = np.asfortranarray(g)
    got = B.float_adam_step(p, f_grad, m.copy(), v.copy(), 0.9, 0.999, 1e-3, 1e-8)
    for e, o in zip(expected, got, strict=True):
        assert np.array_equal(e, o) and o.flags.c_contiguous
    np.testing.assert_array_equal(f_grad, g)  # the C-order copy took the new param, if any


def test_a_handed_over_gradient_receives_the_new_param(B: NdArray, rng: Any) -> None:
    """With the moments, a gradient held by nothing else (handed over by `adam_apply`) is written
    over by the compiled pass (`kernels.optim.adam_in_place` with no `out`): no new buffer, the same bits."""
    p, g, m, v = operands(rng, (300, 300), np.float32)
    expected = default(B, p, g, m.copy(), v.copy())
    grad, moment_1, moment_2 = g.copy(), m.copy(), v.copy()
    where = grad.__array_interface__["data"][0]
    # No *args: CPython's argument tuple would be a second holder of the operands.
    got = B.float_adam_step(p, grad, moment_1, moment_2, 0.9, 0.999, 0.01, 1e-5)
    assert got[0].__array_interface__["data"][0] == where
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_gradient_held_elsewhere_is_only_read(B: NdArray, rng: Any) -> None:
    p, g, m, v = operands(rng, (300, 300), np.float32)
    kept = [g.copy()]
    grad, moment_1, moment_2 = kept[0], m.copy(), v.copy()
    new, _, _ = B.float_adam_step(p, grad, moment_1, moment_2, 0.9, 0.999, 0.01, 1e-5)
    assert not np.shares_memory(new, kept[0])
    np.testing.assert_array_equal(kept[0], g)
