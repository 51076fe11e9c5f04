"""gather/select/scatter_add/select_add (repeated indices accumulate), argwhere, slice_assign, cat."""

from __future__ import annotations

import numpy as np


def test_gather_and_select(B, up, down, rng):
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    idx = rng.integers(0, 5, (4, 3, 6))
    np.testing.assert_array_equal(down(B.float_gather(1, up(x), up(idx))), np.take_along_axis(x, idx, 1))
    rows = np.array([4, 0, 0, 2])
    np.testing.assert_array_equal(down(B.float_select(up(x), 1, up(rows))), x[:, rows])
    ints = rng.integers(-9, 9, (3, 4)).astype(np.int32)
    np.testing.assert_array_equal(down(B.int_select(up(ints), 0, up(np.array([2, 2])))), ints[[2, 2]])


def test_scatter_add_repeated_indices(B, up, down, rng):
    x = rng.standard_normal((3, 4)).astype(np.float64)
    idx = np.array([[0, 0, 3], [1, 1, 1], [2, 3, 2]])
    vals = rng.standard_normal((3, 3))
    expect = x.copy()
    for i in range(3):
        for j in range(3):
            expect[i, idx[i, j]] += vals[i, j]
    np.testing.assert_allclose(down(B.float_scatter_add(1, up(x), up(idx), up(vals))), expect, rtol=1e-12)


def test_select_add_repeated_rows(B, up, down, rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    rows = np.array([1, 4, 1, 1])
    vals = rng.standard_normal((4, 3)).astype(np.float32)
    expect = x.copy()
    np.add.at(expect, rows, vals)
    np.testing.assert_allclose(down(B.float_select_add(up(x), 0, up(rows), up(vals))), expect, rtol=1e-6)
    xi = np.zeros((2, 3), np.int64)
    np.testing.assert_array_equal(
        down(B.int_select_add(up(xi), 1, up(np.array([2, 2, 0])), up(np.ones((2, 3), np.int64)))),
        [[1, 0, 2]] * 2,
    )


def test_out_of_range_indices_stay_in_bounds(B, up, down):
    x = np.arange(4, dtype=np.float32)
    # -1 counts from the end; 99 is clamped: never a read outside the buffer.
    np.testing.assert_array_equal(down(B.float_select(up(x), 0, up(np.array([-1, 99])))), [3.0, 3.0])


def test_argwhere(B, up, down, rng):
    m = rng.random((3, 4, 5)) > 0.6
    np.testing.assert_array_equal(down(B.bool_argwhere(up(m))), np.argwhere(m))
    assert down(B.bool_argwhere(up(np.zeros((2, 2), bool)))).shape == (0, 2)
    big = rng.random(5000) > 0.99
    np.testing.assert_array_equal(down(B.bool_argwhere(up(big))), np.argwhere(big))


def test_slice_assign_and_cat(B, up, down):
    x = np.zeros((4, 5), np.float32)
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = down(B.float_slice_assign(up(x), (slice(1, 3), slice(0, 5, 2)), up(v)))
    expect = x.copy()
    expect[1:3, 0:5:2] = v
    np.testing.assert_array_equal(out, expect)
    a, b = np.ones((2, 2), np.int16), np.zeros((2, 3), np.int16)
    np.testing.assert_array_equal(down(B.int_cat([up(a), up(b)], 1)), np.concatenate([a, b], 1))
    flipped = B.bool_flip(up(np.array([[True, False, False]])), (1,))
    np.testing.assert_array_equal(down(B.bool_cat([flipped, flipped], 0)), [[False, False, True]] * 2)
