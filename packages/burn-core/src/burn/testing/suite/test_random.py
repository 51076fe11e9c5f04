"""Random tensors: reproducible with `backend.seed`, and drawn from the requested distribution.

Moment checks use enough samples that a correct generator fails them with probability far below
1e-6 (bounds of 6 standard errors).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.distribution import Bernoulli, Normal, Uniform
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import f64, host

N = 20_000


def _draw(backend: Any, shape: tuple[int, ...], dist: Any, dtype: DType) -> Any:
    from burn import Tensor
    from burn.foundations.kind import Kind

    return Tensor.random(shape, dist, dtype=dtype, kind=Kind.of(dtype), backend=backend)


@covers("float_random")
@pytest.mark.parametrize(
    "dist",
    [Uniform(0.0, 1.0), Uniform(-3.0, 5.0), Normal(0.0, 1.0), Normal(2.0, 0.5), Bernoulli(0.3)],
    ids=repr,
)
def test_float_random_moments(backend: Any, float_dtype: DType, dist: Any) -> None:
    backend.seed(1234)
    t = _draw(backend, (N // 100, 100), dist, float_dtype)
    assert (t.dtype, t.shape) == (float_dtype, (N // 100, 100))
    x = f64(host(t)).reshape(-1)
    if isinstance(dist, Uniform):
        mean, std = (dist.low + dist.high) / 2, (dist.high - dist.low) / np.sqrt(12)
        # Rounding to a narrow dtype may land exactly on `high`; never outside.
        assert x.min() >= dist.low and x.max() <= dist.high, f"values outside [{dist.low}, {dist.high}]"
        if float_dtype in (DType.F32, DType.F64):
            assert x.max() < dist.high
    elif isinstance(dist, Normal):
        mean, std = dist.mean, dist.std
        assert abs(x.std() - std) < 6 * std / np.sqrt(2 * N), f"std {x.std()}, expected {std}"
    else:
        mean, std = dist.prob, np.sqrt(dist.prob * (1 - dist.prob))
        assert set(np.unique(x)) <= {0.0, 1.0}, "Bernoulli values must be 0 or 1"
    assert abs(x.mean() - mean) < 6 * std / np.sqrt(N), f"mean {x.mean()}, expected {mean}"


@covers("int_random")
@pytest.mark.parametrize(("low", "high"), [(0, 10), (-5, 3)])
def test_int_random_uniform(backend: Any, int_dtype: DType, low: int, high: int) -> None:
    if int_dtype is DType.U8 and low < 0:
        pytest.skip("negative range for an unsigned dtype")
    backend.seed(99)
    t = _draw(backend, (N,), Uniform(low, high), int_dtype)
    x = host(t).astype(np.int64)
    assert t.dtype is int_dtype
    assert set(np.unique(x)) == set(range(low, high)), (
        f"values {sorted(set(np.unique(x)))}, expected [{low}, {high})"
    )
    assert abs(x.mean() - (low + high - 1) / 2) < 6 * (high - low) / np.sqrt(12 * N)


@covers("int_random")
def test_int_random_bernoulli(backend: Any, int_dtype: DType) -> None:
    backend.seed(5)
    x = host(_draw(backend, (N,), Bernoulli(0.25), int_dtype)).astype(np.int64)
    assert set(np.unique(x)) == {0, 1}
    assert abs(x.mean() - 0.25) < 6 * np.sqrt(0.25 * 0.75 / N)


@covers("float_random", "int_random")
@pytest.mark.parametrize("kind", ["float", "int"])
def test_seed_reproducibility(backend: Any, kind: str) -> None:
    dtype = backend.float_dtype if kind == "float" else backend.int_dtype
    dist = Normal(0.0, 1.0) if kind == "float" else Uniform(0, 1000)
    backend.seed(42)
    a = host(_draw(backend, (50, 20), dist, dtype))
    b = host(_draw(backend, (50, 20), dist, dtype))
    backend.seed(42)
    c = host(_draw(backend, (50, 20), dist, dtype))
    d = host(_draw(backend, (50, 20), dist, dtype))
    backend.seed(43)
    e = host(_draw(backend, (50, 20), dist, dtype))
    np.testing.assert_array_equal(a, c, err_msg="same seed must give the same values")
    np.testing.assert_array_equal(b, d, err_msg="the sequence after a seed must repeat too")
    assert not np.array_equal(a, b), "consecutive draws must differ"
    assert not np.array_equal(a, e), "different seeds must give different values"


@covers("float_random")
def test_random_like_and_default_distribution(backend: Any) -> None:
    from burn import Tensor

    backend.seed(3)
    t = Tensor.random((100, 50), backend=backend)
    assert (t.dtype, t.shape) == (backend.float_dtype, (100, 50))
    x = f64(host(t))
    assert x.min() >= 0.0 and x.max() <= 1.0, "default distribution is Uniform(0, 1)"
    assert abs(x.mean() - 0.5) < 0.02
    like = t.random_like(Normal(5.0, 0.1))
    assert (like.dtype, like.shape) == (t.dtype, t.shape)
    assert abs(f64(host(like)).mean() - 5.0) < 0.01


@covers("float_random")
@pytest.mark.parametrize("shape", [(), (0, 3)], ids=str)
def test_random_edge_shapes(backend: Any, shape: Any) -> None:
    from burn import Tensor

    t = Tensor.random(shape, backend=backend)
    assert t.shape == shape and host(t).shape == shape
