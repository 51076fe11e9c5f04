"""Small sums along the first or last dim as a GEMV with ones (burn_ndarray.ops.reductions)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from burn_ndarray import NdArray
from burn_ndarray.ops import reductions
from burn_ndarray.ops.reductions import gemv_sum

SHAPES = [(4, 4), (1, 7), (7, 1), (128, 63), (1000, 8), (5,), (3, 5, 7), (2, 3, 4, 5), (1, 8191)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_and_last_dim_sums_close_to_float64(
    B: NdArray, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any
) -> None:
    x = rng.standard_normal(shape).astype(dtype)
    rtol = 1e-6 if dtype is np.float32 else 1e-14
    for dim in {0, len(shape) - 1}:
        ref = x.astype(np.float64).sum(dim, keepdims=True)
        got = gemv_sum(x, dim, x.dtype)
        assert got is not None and got.dtype == dtype and got.shape == ref.shape, dim
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * np.sqrt(shape[dim]))
        assert np.array_equal(B.float_sum_dim(x, dim), got)  # the backend takes this path
        mean = B.float_mean_dim(x, dim)
        assert mean.dtype == dtype and np.array_equal(mean, got / shape[dim])


def test_layouts(B: NdArray, rng: np.random.Generator) -> None:
    base = rng.standard_normal((12, 10)).astype(np.float32)
    for x in (base.T, base[::2, ::-1], base[:, ::3].T):  # 2-D: any layout
        for dim in (0, 1):
            ref = x.astype(np.float64).sum(dim, keepdims=True)
            np.testing.assert_allclose(gemv_sum(x, dim, x.dtype), ref, rtol=1e-6)
    cube = rng.standard_normal((4, 5, 6)).astype(np.float32)
    assert gemv_sum(cube, 1, cube.dtype) is None  # a middle dim: the caller's reduce
    assert gemv_sum(cube.transpose(2, 1, 0), 0, cube.dtype) is None  # N-D, not C-contiguous
    for x, dim in ((cube, 1), (cube.transpose(2, 1, 0), 0), (cube.transpose(2, 1, 0), 2)):
        np.testing.assert_allclose(B.float_sum_dim(x, dim), x.sum(dim, keepdims=True), rtol=1e-6)


def test_empty_and_special_values(B: NdArray) -> None:
    for shape, dim in (((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((2, 0, 3), 0)):
        x = np.zeros(shape, np.float32)
        assert gemv_sum(x, dim, x.dtype) is None
        assert np.array_equal(B.float_sum_dim(x, dim), x.sum(dim, keepdims=True))
    x = np.array([[np.inf, 1.0], [np.nan, 1.0], [np.inf, -np.inf], [-0.0, -0.0]], np.float32)
    with np.errstate(invalid="ignore"):
        got = B.float_sum_dim(x, 1)
    assert got[0, 0] == np.inf and np.isnan(got[1, 0]) and np.isnan(got[2, 0]) and got[3, 0] == 0.0


_BITS_SCRIPT = """
import hashlib, sys
import numpy as np
from burn_ndarray.ops.reductions import gemv_sum
digest = hashlib.sha256()
for shape in ((90, 90), (8191, 1), (2, 4000), (4, 5, 300)):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    for dim in (0, len(shape) - 1):
        digest.update(gemv_sum(x, dim, x.dtype).tobytes())
print(digest.hexdigest())
"""


def test_same_bits_at_every_blas_thread_count() -> None:
    """OpenBLAS fixes its thread count when NumPy loads: each count in its own process. Below
    MAX_SIZE the GEMV runs on one thread whatever the count, so the bits are the same."""
    digests = set()
    for count in ("1", "2", "4"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": count, "OMP_NUM_THREADS": count}
        command = [sys.executable, "-c", _BITS_SCRIPT]
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        digests.add(run.stdout.strip())
    assert len(digests) == 1


def test_burns_thread_count_does_not_reach_the_gemv(rng: np.random.Generator, threads: Any) -> None:
    x = rng.standard_normal((90, 90)).astype(np.float32)
    threads(1)
    expected = [gemv_sum(x, dim, x.dtype) for dim in (0, 1)]
    for count in (2, 3):
        threads(count)
        assert all(np.array_equal(e, gemv_sum(x, d, x.dtype)) for e, d in zip(expected, (0, 1), strict=True))


def test_the_ones_cache_stays_small() -> None:
    x = np.ones((2, 3), np.float32)
    for length in range(1, 200):
        assert gemv_sum(np.ones((2, length), np.float32), 1, x.dtype).tolist() == [[length]] * 2
    assert 0 < len(reductions._ONES_F32) <= reductions._ONES_KEPT
    column, row = reductions._ones(5, x.dtype)
    assert not column.flags.writeable and column.shape == (5, 1) and row.shape == (1, 5)
