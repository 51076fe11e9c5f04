"""Philox random numbers: reproducible for a seed, in range, with the right moments."""

from __future__ import annotations

import numpy as np

from burn.foundations.distribution import Bernoulli, Normal, Uniform
from burn.foundations.dtype import DType


def test_seeded_draws_repeat(B, dev, down):
    B.seed(7)
    a = down(B.float_random((1001,), Normal(0, 1), dev, DType.F32))
    b = down(B.float_random((1001,), Normal(0, 1), dev, DType.F32))
    B.seed(7)
    np.testing.assert_array_equal(down(B.float_random((1001,), Normal(0, 1), dev, DType.F32)), a)
    assert not np.array_equal(a, b)  # the counter moves on between calls


def test_seed_gives_same_bits_in_every_precision(B, dev, down):
    B.seed(3)
    a = down(B.float_random((64,), Uniform(0, 1), dev, DType.F32))
    B.seed(3)
    b = down(B.float_random((64,), Uniform(0, 1), dev, DType.F64))
    np.testing.assert_allclose(a, b, atol=2**-23)


def test_moments_and_ranges(B, dev, down):
    B.seed(1)
    u = down(B.float_random((20000,), Uniform(-2, 3), dev, DType.F64))
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.05
    n = down(B.float_random((20000,), Normal(1.0, 2.0), dev, DType.F32))
    assert abs(n.mean() - 1.0) < 0.06 and abs(n.std() - 2.0) < 0.06
    p = down(B.float_random((20000,), Bernoulli(0.25), dev, DType.F32))
    assert set(np.unique(p)) <= {0.0, 1.0} and abs(p.mean() - 0.25) < 0.02
    i = down(B.int_random((20000,), Uniform(-3, 4), dev, DType.I32))
    assert i.dtype == np.int32 and set(np.unique(i)) == set(range(-3, 4))
    k = down(B.int_random((5000,), Normal(10, 1), dev, DType.I64))
    assert abs(k.mean() - 10) < 0.1
