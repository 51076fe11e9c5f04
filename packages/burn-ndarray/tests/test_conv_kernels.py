"""The compiled im2col / col2im copies (`kernels.conv`) against NumPy's in `ops.conv`: the same
convolution outputs and gradients, bit for bit, at 1 and 2 threads (the Winograd path, which
would take the 3x3 cases, is off here: test_winograd.py covers it)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest
from conftest import without_compiled

import burn_ndarray
from burn_ndarray.kernels import conv as conv_kernels
from burn_ndarray.ops import conv, winograd
from burn_ndarray.runtime import split

Pair = tuple[int, int]
CASES: list[tuple[tuple[int, ...], tuple[int, ...], Pair, Pair, Pair, int]] = [
    ((8, 32, 13, 13), (64, 32, 3, 3), (1, 1), (0, 0), (1, 1), 1),  # the CNN's second conv
    ((4, 16, 20, 20), (24, 16, 3, 3), (2, 2), (1, 1), (1, 1), 1),  # stride and padding
    ((4, 8, 21, 19), (8, 8, 3, 2), (1, 2), (1, 0), (2, 1), 1),  # dilation, uneven kernel
    ((4, 32, 12, 12), (16, 16, 3, 3), (1, 1), (1, 1), (1, 1), 2),  # groups of 16: NumPy's im2col
    ((4, 1, 28, 28), (32, 1, 3, 3), (1, 1), (0, 0), (1, 1), 1),  # C = 1: NumPy's other layout
    ((1, 3, 30, 30), (16, 3, 3, 3), (2, 2), (1, 1), (1, 1), 1),  # a stem: one image, split by rows
]


_numpy = partial(without_compiled, conv, "COMPILED_MIN_SIZE")


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize(("x_shape", "w_shape", "stride", "padding", "dilation", "groups"), CASES)
def test_same_bits_as_numpy(
    rng: Any, monkeypatch: pytest.MonkeyPatch, count: int, x_shape: Any, w_shape: Any, stride: Pair,
    padding: Pair, dilation: Pair, groups: int,
) -> None:  # fmt: skip
    monkeypatch.setattr(conv, "COMPILED_MIN_SIZE", 1 << 8)
    monkeypatch.setattr(winograd, "MIN_WORK", 1 << 62)
    for name in ("UFUNC_PER_THREAD", "NATIVE_UFUNC_PER_THREAD"):  # split from 256 elements a thread
        monkeypatch.setattr(split, name, 1 << 8)
    launched: list[str] = []
    for name in ("im2col", "col2im"):
        kernel = getattr(conv_kernels, name)
        monkeypatch.setattr(conv_kernels, name, lambda *a, _k=kernel, _n=name: launched.append(_n) or _k(*a))
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(count)
    try:
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        b = rng.standard_normal(w_shape[0]).astype(np.float32)
        hyper = (stride, padding, dilation, groups)
        y = conv.conv2d(x, w, b, *hyper)
        assert np.array_equal(y, _numpy(conv.conv2d, x, w, b, *hyper))
        g = rng.standard_normal(y.shape).astype(np.float32)
        for backward in (conv.conv2d_x_backward, conv.conv2d_weight_backward):
            assert np.array_equal(backward(x, w, g, *hyper), _numpy(backward, x, w, g, *hyper)), backward
    finally:
        burn_ndarray.set_num_threads(before)
    channels_innermost = groups == 1 and x_shape[1] > 1
    assert ("im2col" in launched) == channels_innermost
    assert "col2im" in launched


@pytest.mark.parametrize("count", [1, 2])
def test_channels_last_and_nchw_inputs_read_in_place(
    rng: Any, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    """The compiled im2col reads its input through strides: an NCHW array and a channels-last view
    (what a convolution returns) give NumPy's bits, padding taps as zeros."""
    monkeypatch.setattr(conv, "COMPILED_MIN_SIZE", 1 << 8)
    monkeypatch.setattr(winograd, "MIN_WORK", 1 << 62)
    for name in ("UFUNC_PER_THREAD", "NATIVE_UFUNC_PER_THREAD"):
        monkeypatch.setattr(split, name, 1 << 8)
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(count)
    try:
        nchw = rng.standard_normal((2, 5, 11, 9)).astype(np.float32)
        channels_last = np.ascontiguousarray(nchw.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
        w = rng.standard_normal((7, 5, 3, 3)).astype(np.float32)
        hyper = ((2, 1), (2, 1), (1, 2), 1)
        expected = _numpy(conv.conv2d, nchw, w, None, *hyper)
        for x in (nchw, channels_last):
            assert np.array_equal(conv.conv2d(x, w, None, *hyper), expected)
    finally:
        burn_ndarray.set_num_threads(before)
