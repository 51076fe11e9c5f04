"""The Winograd F(2x2, 3x3) path of burn-ndarray's conv2d (`ops.winograd`): results against float64
convolutions, which shapes take it, the bits at several thread counts, and the BLAS thread limit
it runs under."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import threadpoolctl

import burn_ndarray
from burn_ndarray.ops import conv, winograd
from burn_ndarray.runtime import blas

Pair = tuple[int, int]
ONE: Pair = (1, 1)
# (x [N, C, H, W], output channels, padding): odd output sizes leave partial edge tiles.
CASES: list[tuple[tuple[int, int, int, int], int, Pair]] = [
    ((8, 32, 13, 13), 64, (0, 0)),  # the benchmark CNN's second layer, smaller batch
    ((4, 16, 14, 14), 24, (1, 1)),
    ((3, 16, 7, 9), 17, (0, 2)),
    ((2, 20, 5, 6), 16, (2, 1)),
    ((64, 8, 2, 2), 8, (1, 1)),  # one tile per image
]


@pytest.fixture(autouse=True)
def quiet_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    """BLAS threads that sleep when idle, as under OPENBLAS_THREAD_TIMEOUT=4: the path runs at
    every thread count (the rule itself has its own tests below)."""
    monkeypatch.setattr(blas, "idle_threads_poll", lambda: False)


@pytest.fixture
def any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small cases take the Winograd path too (the size rule has its own test)."""
    monkeypatch.setattr(winograd, "MIN_WORK", 1)
    monkeypatch.setattr(winograd, "MIN_TILES", 1)


def _conv64(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, padding: Pair) -> np.ndarray:
    """The float64 im2col convolution (the Winograd path takes float32 only)."""
    bias = None if b is None else b.astype(np.float64)
    return conv.conv2d(x.astype(np.float64), w.astype(np.float64), bias, ONE, padding, ONE, 1)


def _close(got: np.ndarray, want: np.ndarray) -> None:
    """Within a few float32 ulps of the result's scale (rounding, not a wrong tap, which moves an
    element by a whole product)."""
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=4e-6 * float(np.abs(want).max()))


def _inputs(rng: Any, xs: tuple[int, ...], o: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal((o, xs[1], 3, 3)) / np.sqrt(9 * xs[1])).astype(np.float32)
    return x, w, rng.standard_normal(o).astype(np.float32)


@pytest.mark.usefixtures("any_size")
@pytest.mark.parametrize(("xs", "o", "padding"), CASES, ids=str)
def test_conv_and_gradients_match_float64(rng: Any, xs: tuple[int, ...], o: int, padding: Pair) -> None:
    x, w, b = _inputs(rng, xs, o)
    assert winograd.applies(x, w.shape, ONE, padding, ONE, 1)
    y = conv.conv2d(x, w, b, ONE, padding, ONE, 1)
    assert y.dtype == np.float32
    _close(y, _conv64(x, w, b, padding))
    g = rng.standard_normal(y.shape).astype(np.float32)
    want_dx = conv.conv2d_x_backward(
        x.astype(np.float64), w.astype(np.float64), g.astype(np.float64), ONE, padding, ONE, 1
    )
    want_dw = conv.conv2d_weight_backward(
        x.astype(np.float64), w.astype(np.float64), g.astype(np.float64), ONE, padding, ONE, 1
    )
    _close(conv.conv2d_x_backward(x, w, g, ONE, padding, ONE, 1), want_dx)
    _close(conv.conv2d_weight_backward(x, w, g, ONE, padding, ONE, 1), want_dw)


@pytest.mark.usefixtures("any_size")
def test_without_bias_and_in_every_layout(rng: Any) -> None:
    x, w, _ = _inputs(rng, (4, 16, 12, 12), 16)
    want = _conv64(x, w, None, ONE)
    channels_last = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    for layout in (x, channels_last, x[:, :, ::1, ::-1][:, :, :, ::-1]):
        _close(conv.conv2d(layout, w, None, ONE, ONE, ONE, 1), want)


def test_each_path_is_taken(rng: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for name in ("conv", "x_grad", "weight_grad"):
        real = getattr(winograd, name)
        monkeypatch.setattr(winograd, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    x, w, b = _inputs(rng, (6, 16, 14, 14), 24)  # 294 tiles x 16 x 24 channels
    y = conv.conv2d(x, w, b, ONE, ONE, ONE, 1)
    conv.conv2d_x_backward(x, w, y, ONE, ONE, ONE, 1)
    conv.conv2d_weight_backward(x, w, y, ONE, ONE, ONE, 1)
    assert calls == ["conv", "x_grad", "conv", "weight_grad"]  # x_grad is a convolution of the gradient


@pytest.mark.parametrize(
    ("xs", "ws", "stride", "padding", "dilation", "groups", "dtype"),
    [
        ((4, 16, 14, 14), (16, 16, 3, 3), ONE, ONE, ONE, 1, np.float64),  # float64 keeps im2col
        ((4, 16, 14, 14), (16, 16, 3, 3), (2, 2), ONE, ONE, 1, np.float32),
        ((4, 16, 14, 14), (16, 16, 3, 3), ONE, ONE, (2, 2), 1, np.float32),
        ((4, 16, 14, 14), (16, 8, 3, 3), ONE, ONE, ONE, 2, np.float32),
        ((4, 16, 14, 14), (16, 16, 5, 5), ONE, ONE, ONE, 1, np.float32),
        ((4, 4, 14, 14), (16, 4, 3, 3), ONE, ONE, ONE, 1, np.float32),  # few channels
        ((1, 16, 6, 6), (16, 16, 3, 3), ONE, ONE, ONE, 1, np.float32),  # little work
        ((1, 64, 16, 16), (64, 64, 3, 3), ONE, ONE, ONE, 1, np.float32),  # 64 tiles, many channels
    ],
)
def test_other_convolutions_keep_im2col(
    rng: Any, xs: Any, ws: Any, stride: Pair, padding: Pair, dilation: Pair, groups: int, dtype: Any
) -> None:
    x = rng.standard_normal(xs).astype(dtype)
    assert not winograd.applies(x, ws, stride, padding, dilation, groups)


def test_input_gradient_with_padding_over_two_keeps_im2col(rng: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        winograd, "x_grad", lambda *a: pytest.fail("padding 3 has no Winograd input gradient")
    )
    x, w, _ = _inputs(rng, (4, 16, 10, 10), 16)
    g = rng.standard_normal((4, 16, 14, 14)).astype(np.float32)
    want = conv.conv2d_x_backward(
        x.astype(np.float64), w.astype(np.float64), g.astype(np.float64), ONE, (3, 3), ONE, 1
    )
    _close(conv.conv2d_x_backward(x, w, g, ONE, (3, 3), ONE, 1), want)


@pytest.mark.usefixtures("any_size")
def test_mixed_float32_and_float16_give_im2cols_dtype(rng: Any) -> None:
    x, w, b = _inputs(rng, (4, 16, 14, 14), 16)
    y = conv.conv2d(x, w.astype(np.float16), b.astype(np.float16), ONE, ONE, ONE, 1)
    assert y.dtype == np.float32
    _close(y, _conv64(x, w.astype(np.float16), b.astype(np.float16), ONE))


@pytest.mark.usefixtures("any_size")
def test_same_bits_at_every_thread_count(rng: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(winograd, "WORK_PER_THREAD", 1 << 10)  # split even this small case
    monkeypatch.setattr(winograd, "TILES_PER_BLOCK", 16)
    x, w, b = _inputs(rng, (8, 16, 13, 13), 16)
    g = rng.standard_normal((8, 16, 13, 13)).astype(np.float32)
    before = burn_ndarray.get_num_threads()
    results = []
    try:
        for count in (1, 2, 3):
            burn_ndarray.set_num_threads(count)
            results.append(
                (
                    conv.conv2d(x, w, b, ONE, ONE, ONE, 1),
                    conv.conv2d_x_backward(x, w, g, ONE, ONE, ONE, 1),
                    conv.conv2d_weight_backward(x, w, g, ONE, ONE, ONE, 1),
                    conv.conv2d_weight_backward(x, w, g, ONE, ONE, ONE, 1),
                )
            )
    finally:
        burn_ndarray.set_num_threads(before)
    for y, dx, dw, dw_again in results:
        assert np.array_equal(y, results[0][0]) and np.array_equal(dx, results[0][1])
        assert np.array_equal(dw, dw_again)  # one count: the same bits every run
        np.testing.assert_allclose(dw, results[0][2], rtol=1e-5, atol=1e-5)  # across counts: rounding


def _blas_threads() -> list[int]:
    return [info["num_threads"] for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]


_TWO_USERS = """
import threading, threadpoolctl
from burn_ndarray.runtime import blas

def _blas_threads():
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

def _enter_and_read():
    with blas.single_threaded():
        return _blas_threads()

before = _blas_threads()
inside = []
first_in, release = threading.Event(), threading.Event()

def user():
    with blas.single_threaded():
        inside.append(_blas_threads())
        first_in.set()
        release.wait()

other = threading.Thread(target=user)
other.start()
first_in.wait()
waiter = threading.Thread(target=lambda: inside.append(_enter_and_read()))
waiter.start()
waiter.join(timeout=0.2)
assert waiter.is_alive()  # the second user waits for the first to leave
release.set()
other.join()
waiter.join()
assert inside == [[1] * len(before)] * 2, inside
assert _blas_threads() == before
"""


def test_blas_limit_holds_inside_and_is_restored_with_two_users() -> None:
    """In a fresh process: OpenBLAS (0.3.31) stops taking sets made from other threads once sets
    came from elsewhere (the other tests here change the thread count), a limitation of the
    library documented in `blas.set_threads`."""
    proc = subprocess.run([sys.executable, "-c", _TWO_USERS], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    ("threads", "polling", "taken"), [(1, True, True), (2, True, False), (2, False, True)]
)
def test_several_threads_need_quiet_blas(
    rng: Any, monkeypatch: pytest.MonkeyPatch, threads: int, polling: bool, taken: bool
) -> None:
    monkeypatch.setattr(blas, "idle_threads_poll", lambda: polling)
    x, w, _ = _inputs(rng, (6, 16, 14, 14), 24)
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(threads)
    try:
        assert winograd.applies(x, w.shape, ONE, ONE, ONE, 1) == taken
    finally:
        burn_ndarray.set_num_threads(before)


class _Lib:
    """A stand-in for threadpoolctl's controller of one BLAS library."""

    def __init__(self, api: str, threads: int, timeout: int | None, path: str) -> None:
        self.user_api, self.internal_api, self.num_threads, self.filepath = "blas", api, threads, path
        getter = {} if timeout is None else {"openblas_thread_timeout": staticmethod(lambda: timeout)}
        self.dynlib = type("Dynlib", (), getter)()


@pytest.mark.parametrize(
    ("lib", "polls"),
    [
        (("openblas", 2, 0, "a"), True),  # OPENBLAS_THREAD_TIMEOUT unset: 2^28 cycles
        (("openblas", 2, 4, "b"), False),
        (("openblas", 2, 20, "c"), False),  # `blas.configure`'s
        (("openblas", 2, 21, "d"), True),
        (("openblas", 1, 0, "e"), False),  # one thread: no idle workers
        (("openblas", 2, None, "f"), True),  # an OpenBLAS without the getter: its default
        (("mkl", 2, None, "g"), True),
    ],
)
def test_idle_threads_poll(monkeypatch: pytest.MonkeyPatch, lib: tuple[Any, ...], polls: bool) -> None:
    monkeypatch.undo()  # the real function, not the fixture's stand-in
    monkeypatch.setattr(blas, "_numpy_libraries", lambda: [_Lib(*lib)])
    monkeypatch.setattr(blas, "_poll_cycles", {})
    assert blas.idle_threads_poll() is polls


def test_only_numpys_blas_counts() -> None:
    numpy_libs = os.path.dirname(os.path.realpath(np.__file__)) + ".libs"
    numpys = _Lib("openblas", 2, 20, os.path.join(numpy_libs, "libopenblas.so"))
    scipys = _Lib("openblas", 2, 0, "/elsewhere/scipy.libs/libopenblas.so")  # numba loads it
    assert blas._numpys([scipys, numpys]) == [numpys]
    system = _Lib("openblas", 2, 0, "/usr/lib/libopenblas.so")  # a NumPy built on a system BLAS
    assert blas._numpys([system, scipys]) == [system, scipys]


def test_numpys_blas_found_with_the_libraries() -> None:
    libs, numpys = blas._libraries()
    assert numpys == blas._numpys(libs) and numpys


def test_idle_threads_poll_reads_this_process() -> None:
    assert isinstance(blas.idle_threads_poll(), bool)
