"""Cross-entropy on NumPy arrays: the compiled rows (float32/float64 from 512 logits) against the
shared NumPy code and a float64 reference, targets out of range as errors on every path, thread-count
invariance, and the operands the kernels do not take as they are (views, other int types)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ml_dtypes import bfloat16

from burn.backend.xp.loss import XpLossOps
from burn_ndarray import NdArray

# 2048 x 160 logits: above the size from which rows are split between threads.
LARGE = (2048, 160)


def _reference(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    w = x.astype(np.float64)
    shifted = w - w.max(axis=1, keepdims=True)
    return np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(len(t)), t]


def _data(rng: np.random.Generator, shape: tuple[int, int], dtype: Any = np.float32) -> tuple[Any, Any]:
    x = rng.uniform(-5, 5, size=shape).astype(dtype)
    return x, rng.integers(0, shape[1], size=shape[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (64, 8), (128, 10), LARGE], ids=str)
def test_compiled_rows_match_the_shared_numpy_code(B: NdArray, dtype: Any, shape: Any, rng: Any) -> None:
    x, t = _data(rng, shape, dtype)
    shared = XpLossOps.cross_entropy(B, x, t, "none")  # the NumPy passes, in x's dtype
    got = B.cross_entropy(x, t, "none")
    assert got.dtype == dtype and got.shape == (shape[0],)
    ulp = np.finfo(dtype).eps
    np.testing.assert_allclose(got, _reference(x, t), rtol=4 * ulp, atol=8 * ulp)
    np.testing.assert_allclose(got, shared, rtol=8 * ulp, atol=16 * ulp)
    mean, total = B.cross_entropy(x, t, "mean"), B.cross_entropy(x, t, "sum")
    assert mean.shape == total.shape == (1,) and mean.dtype == total.dtype == dtype
    np.testing.assert_allclose(total[0], _reference(x, t).sum(), rtol=4 * ulp)
    np.testing.assert_allclose(mean[0], _reference(x, t).mean(), rtol=4 * ulp)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_gradient_rows_match_the_shared_numpy_code(B: NdArray, reduction: str, rng: Any) -> None:
    x, t = _data(rng, (64, 7))
    g = rng.uniform(0.5, 2, size=64 if reduction == "none" else 1).astype(np.float32)
    got = B.cross_entropy_backward(x, t, g, reduction)
    shared = XpLossOps.cross_entropy_backward(B, x, t, g, reduction)
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, shared, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("bad", [-1, 10, 1 << 40])
@pytest.mark.parametrize(
    ("dtype", "rows"), [(np.float32, 60), (np.float32, 6), (bfloat16, 60)], ids=["compiled", "small", "numpy"]
)
def test_targets_out_of_range_are_errors(B: NdArray, bad: int, dtype: Any, rows: int, rng: Any) -> None:
    x, t = _data(rng, (rows, 10), dtype)
    t[4] = bad  # NumPy's indexing would wrap -1 to the last class
    with pytest.raises(IndexError, match=rf"cross_entropy: target {bad} of row 4 is out of range \[0, 10\)"):
        B.cross_entropy(x, t, "mean")
    with pytest.raises(IndexError, match=rf"cross_entropy_backward: target {bad} of row 4 is out of range"):
        B.cross_entropy_backward(x, t, np.ones(1, dtype), "mean")


def test_the_error_names_the_row_when_rows_are_split(B: NdArray, threads: Any, rng: Any) -> None:
    threads(2)
    x, t = _data(rng, LARGE)
    t[1500] = 160
    with pytest.raises(IndexError, match=r"target 160 of row 1500 is out of range \[0, 160\)"):
        B.cross_entropy(x, t, "none")
    with pytest.raises(IndexError, match=r"target 160 of row 1500"):
        B.cross_entropy_backward(x, t, np.ones(LARGE[0], np.float32), "none")


def test_rows_are_the_same_bits_at_every_thread_count(B: NdArray, threads: Any, rng: Any) -> None:
    x, t = _data(rng, LARGE)
    g = rng.uniform(0.5, 2, size=LARGE[0]).astype(np.float32)
    runs = []
    for count in (1, 2, 3):
        threads(count)
        losses, mean = B.cross_entropy(x, t, "none"), B.cross_entropy(x, t, "mean")
        runs.append((losses, B.cross_entropy_backward(x, t, g, "none"), mean))
    for losses, grads, mean in runs[1:]:
        np.testing.assert_array_equal(losses, runs[0][0])
        np.testing.assert_array_equal(grads, runs[0][1])
        # the mean adds float64 partial sums per chunk: equal up to float64 rounding, then rounded once
        np.testing.assert_allclose(mean, runs[0][2], rtol=np.finfo(np.float32).eps)


def test_views_and_other_int_types(B: NdArray, rng: Any) -> None:
    x, t = _data(rng, (90, 12))
    view = np.asfortranarray(x)[:, ::1]  # not C-contiguous
    for targets in (t.astype(np.int32), t.astype(np.uint8), t.reshape(90, 1)[:, 0]):
        np.testing.assert_allclose(B.cross_entropy(view, targets, "none"), _reference(x, t), rtol=1e-6)
        np.testing.assert_allclose(
            B.cross_entropy_backward(view, targets, np.ones(1, np.float32), "sum"),
            XpLossOps.cross_entropy_backward(B, x, t, np.ones(1, np.float32), "sum"),
            rtol=1e-6,
            atol=1e-7,
        )


def test_unknown_reduction_is_an_error(B: NdArray, rng: Any) -> None:
    x, t = _data(rng, (3, 4))
    with pytest.raises(ValueError, match=r"cross_entropy: reduction must be one of .*'avg'"):
        B.cross_entropy(x, t, "avg")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"cross_entropy_backward: reduction"):
        B.cross_entropy_backward(x, t, np.ones(1, np.float32), "avg")  # type: ignore[arg-type]


def test_small_logits_take_the_numpy_passes(B: NdArray, rng: Any) -> None:
    """Below 512 logits the shared NumPy code runs (small models never load numba): its bits."""
    x, t = _data(rng, (50, 10))
    np.testing.assert_array_equal(B.cross_entropy(x, t, "none"), XpLossOps.cross_entropy(B, x, t, "none"))
    x, t = _data(rng, (64, 8))  # 512: compiled, its own rounding
    assert not np.array_equal(B.cross_entropy(x, t, "none"), XpLossOps.cross_entropy(B, x, t, "none"))
