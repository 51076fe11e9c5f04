"""burn-ndarray's parallel kernels on numba's TBB pool (`runtime.tbb`, the ``prange`` launchers of
`burn_ndarray.kernels`): the same bits
as NumPy and the serial kernels at every thread count and layout, safe in a forked child and with
concurrent callers, and the Python pool whenever TBB is not numba's layer."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import numpy as np
import pytest

import burn_ndarray
from burn.backend.ops.optim import OptimOps
from burn_ndarray import NdArray
from burn_ndarray.kernels import activation as activation_kernels
from burn_ndarray.kernels import float as float_kernels
from burn_ndarray.kernels import optim as optim_kernels
from burn_ndarray.ops import activation, optim
from burn_ndarray.ops import float as float_ops
from burn_ndarray.runtime import split, tbb, threads

BIG = (301, 517)  # rows that do not split evenly between 2 or 3 threads
BINARY = {
    "float_add": np.add,
    "float_sub": np.subtract,
    "float_mul": np.multiply,
    "float_div": np.true_divide,
}


def _tbb_installed() -> bool:
    try:
        metadata.version("tbb")
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.fixture
def native(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The TBB pool, splitting from 4096 elements per thread; yields ``threads(n)``."""
    if not tbb.ready():
        pytest.skip("numba's TBB threading layer is not available here (no tbb wheel)")
    for name in ("NATIVE_UFUNC_PER_THREAD", "NATIVE_ROW_SUM_PER_THREAD"):
        monkeypatch.setattr(split, name, 1 << 12)
    monkeypatch.setattr(float_ops, "_binary_min_size", 1 << 13)
    monkeypatch.setattr(optim, "NATIVE_COMPILED_PER_THREAD", 1 << 12)
    before = burn_ndarray.get_num_threads()
    yield burn_ndarray.set_num_threads
    burn_ndarray.set_num_threads(before)


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the TBB pool's launchers (`burn_ndarray.kernels`) called during a test."""
    called: list[str] = []
    for module, name in [
        (float_kernels, "binary_flat"), (float_kernels, "binary_rows"), (float_kernels, "sum_rows_parallel"),
        (optim_kernels, "adam_in_place_parallel"), (optim_kernels, "adam_fresh_parallel"),
        (optim_kernels, "sgd_momentum_in_place_parallel"), (optim_kernels, "rmsprop_in_place_parallel"),
    ]:  # fmt: skip
        kernel = getattr(module, name)

        def spy(*args: Any, _kernel: Any = kernel, _name: str = name) -> Any:
            called.append(_name)
            return _kernel(*args)

        monkeypatch.setattr(module, name, spy)
    return called


def big(rng: np.random.Generator, shape: tuple[int, ...] = BIG, dtype: Any = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def test_tbb_is_the_layer_wherever_the_wheel_is_installed() -> None:
    assert tbb.ready() is _tbb_installed()
    if tbb.ready():
        import numba

        assert numba.threading_layer() == "tbb"


# -- element-wise arithmetic ----------------------------------------------------------------------
@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("lhs", "rhs", "launcher"),
    [
        (BIG, BIG, "binary_flat"),
        (BIG, BIG[1:], "binary_rows"),  # a bias row
        (BIG, (1, BIG[1]), "binary_rows"),
        (BIG, (BIG[0], 1), "binary_rows"),  # a value per row (x - mean)
        (BIG, (1,), "binary_rows"),
        ((7, 43, 517), (7, 43, 1), "binary_rows"),  # per row of a 3-D tensor
        ((7, 43, 517), (517,), "binary_rows"),
        ((7, 43, 517), (7, 1, 517), "binary_rows"),  # a row per group of rows (one per image)
        ((7, 43, 517), (7, 1, 1), "binary_rows"),  # a value per group of rows
    ],
    ids=[
        "same",
        "bias",
        "bias-2d",
        "per-row",
        "one-value",
        "per-row-3d",
        "bias-3d",
        "per-group",
        "group-value",
    ],  # fmt: skip
)
def test_binary_same_bits_as_numpy(
    B: NdArray,
    rng: Any,
    native: Any,
    launches: list[str],
    count: int,
    dtype: Any,
    lhs: Any,
    rhs: Any,
    launcher: str,
) -> None:
    native(count)
    a, b = big(rng, lhs, dtype), big(rng, rhs, dtype)
    b[np.abs(b) < 1e-3] = 0.5  # no huge quotients (exact either way; just tidier values)
    for name, ufunc in BINARY.items():
        got = getattr(B, name)(a, b)
        assert got.dtype == dtype and got.shape == a.shape and np.array_equal(got, ufunc(a, b)), name
    assert launches == [launcher] * len(BINARY)


def test_broadcast_on_the_left_swaps_only_commutative_ops(
    B: NdArray, rng: Any, native: Any, launches: list[str]
) -> None:
    native(2)
    row, full = big(rng, BIG[1:]), big(rng)
    for name, ufunc in BINARY.items():
        assert np.array_equal(getattr(B, name)(row, full), ufunc(row, full)), name
    assert launches == ["binary_rows", "binary_rows"]  # add and mul; sub and div take NumPy


def channels_last(rng: np.random.Generator, shape: tuple[int, int, int, int]) -> np.ndarray:
    """A ``[B, C, H, W]`` view of ``[B, H, W, C]`` memory, as the conv kernels return."""
    b, c, h, w = shape
    return big(rng, (b, h, w, c)).transpose(0, 3, 1, 2)


@pytest.mark.parametrize("count", [2, 3])
def test_channels_last_operands_keep_their_layout(
    B: NdArray, rng: Any, native: Any, launches: list[str], count: int
) -> None:
    native(count)
    shape = (3, 24, 13, 11)
    x, y = channels_last(rng, shape), channels_last(rng, shape)
    scale = big(rng, (3, 24, 1, 1))  # a squeeze-excitation scale: one value per image and channel
    y[np.abs(y) < 1e-3] = 0.5
    scale[np.abs(scale) < 1e-3] = 0.5
    for name, ufunc in BINARY.items():
        for lhs, rhs in [(x, y), (x, scale)]:
            got, want = getattr(B, name)(lhs, rhs), ufunc(lhs, rhs)
            assert np.array_equal(got, want), name
            assert got.strides == want.strides == x.strides, name  # channels-last, as NumPy's ufunc
    assert np.array_equal(B.float_mul(scale, x), scale * x)  # the scale on the left: commutative
    assert launches == ["binary_flat", "binary_rows"] * len(BINARY) + ["binary_rows"]


def test_other_layouts_take_numpy(B: NdArray, rng: Any, native: Any, launches: list[str]) -> None:
    native(2)
    a = big(rng, (7, 43, 517))
    middle = big(rng, (1, 43, 1))  # broadcast along the outer and inner dims: not rows of the result
    view = big(rng, (602, 517))[::2]
    for name, ufunc in BINARY.items():
        assert np.array_equal(getattr(B, name)(a, middle), ufunc(a, middle)), name
        assert np.array_equal(getattr(B, name)(view, view), ufunc(view, view)), name
    assert np.array_equal(B.float_add(a.astype(np.float16), a.astype(np.float16)), a.astype(np.float16) * 2)
    assert launches == []


# -- row sums and optimizer updates ---------------------------------------------------------------
def test_row_sums_same_bits_at_every_count(B: NdArray, rng: Any, native: Any, launches: list[str]) -> None:
    a = big(rng)
    results = []
    for count in (1, 2, 3, 2):
        native(count)
        results.append(B.float_sum_dim(a, 1))
    assert all(np.array_equal(results[0], r) for r in results[1:])
    np.testing.assert_allclose(results[0], a.astype(np.float64).sum(1, keepdims=True), rtol=1e-5, atol=1e-4)
    assert launches == ["sum_rows_parallel"] * 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_over_a_leading_dim_split_columns_numpys_bits(
    B: NdArray, rng: Any, native: Any, monkeypatch: pytest.MonkeyPatch, dtype: Any
) -> None:
    """A sum over the first dim (a bias gradient over the batch) is one leading index: its columns
    are cut between the chunks, each column summed in NumPy's order."""
    called: list[int] = []
    columns = float_kernels.sum_middle_columns

    def spy(parts: int, *args: Any) -> None:
        called.append(parts)
        columns(parts, *args)

    monkeypatch.setattr(float_kernels, "sum_middle_columns", spy)
    a = big(rng, (37, 5, 907), dtype)  # 907 columns: no even cut
    expected: list[int] = []
    for count in (1, 2, 3):
        native(count)
        for x in (a, a.reshape(37, -1)):
            got = B.float_sum_dim(x, 0)
            assert got.dtype == dtype and np.array_equal(got, np.add.reduce(x, 0, keepdims=True)), count
            if count > 1:
                expected.append(split.native_parts(a.size, split.NATIVE_ROW_SUM_PER_THREAD))
    assert called == expected and all(parts >= 2 for parts in called)  # none at one thread, both layouts


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("handed_over", ["moments", "none", "moments-and-gradient"])
def test_adam_same_bits_as_the_default_op(
    B: NdArray, rng: Any, native: Any, launches: list[str], count: int, handed_over: str
) -> None:
    native(count)
    p, g, m = big(rng), big(rng), big(rng)
    v = rng.uniform(0.1, 2.0, size=BIG).astype(np.float32)
    scalars = (0.9, 0.999, 0.01, 1e-5)
    expected = OptimOps.float_adam_step(B, p, g, m.copy(), v.copy(), *scalars)  # type: ignore[arg-type]
    held = (m.copy(), v.copy())
    launches.clear()  # the default op's own element-wise passes
    if handed_over == "moments":  # the copies; the gradient is held here
        got = B.float_adam_step(p, g, m.copy(), v.copy(), *scalars)
    elif handed_over == "none":
        got = B.float_adam_step(p, g, *held, *scalars)
    else:  # a copy of the gradient too, which takes the new param (no *args: see test_optim_fused)
        grad, moment_1, moment_2 = g.copy(), m.copy(), v.copy()
        where = grad.__array_interface__["data"][0]
        got = B.float_adam_step(p, grad, moment_1, moment_2, 0.9, 0.999, 0.01, 1e-5)
        assert got[0].__array_interface__["data"][0] == where
    assert all(np.array_equal(x, y) for x, y in zip(expected, got, strict=True))
    assert launches == ["adam_fresh_parallel" if handed_over == "none" else "adam_in_place_parallel"]


@pytest.mark.parametrize(
    "options", [(0.9, 0.1, True, 0.01), (0.9, 0.0, False, None)], ids=["nesterov-decay", "plain"]
)
def test_sgd_momentum_same_bits_as_the_default_op(
    B: NdArray, rng: Any, native: Any, launches: list[str], options: Any
) -> None:
    native(3)
    p, g, velocity = big(rng), big(rng), big(rng)
    expected = OptimOps.float_sgd_momentum_step(B, p, g, velocity.copy(), *options, 0.05)  # type: ignore[arg-type]
    launches.clear()
    got = B.float_sgd_momentum_step(p, g, velocity.copy(), *options, 0.05)
    assert all(np.array_equal(x, y) for x, y in zip(expected, got, strict=True))
    assert launches == ["sgd_momentum_in_place_parallel"]


@pytest.mark.parametrize(("centered", "momentum"), [(True, 0.9), (False, 0.9), (True, 0.0), (False, 0.0)])
def test_rmsprop_same_bits_as_the_default_op(
    B: NdArray, rng: Any, native: Any, launches: list[str], centered: bool, momentum: float
) -> None:
    native(2)
    p, g = big(rng), big(rng)
    s = rng.uniform(1.0, 2.0, size=BIG).astype(np.float32)
    a = big(rng) * 0.1 if centered else None
    b = big(rng) if momentum else None
    states = (s, a, b)
    options = (0.99, 1e-8, centered, momentum, 0.01, 0.01)
    copies = [None if x is None else x.copy() for x in states]
    expected = OptimOps.float_rmsprop_step(B, p, g, *copies, *options)  # type: ignore[arg-type]
    launches.clear()
    got = B.float_rmsprop_step(p, g, *[None if x is None else x.copy() for x in states], *options)  # type: ignore[arg-type]
    for x, y in zip(expected, got, strict=True):
        assert (x is None and y is None) or np.array_equal(x, y)
    assert launches == ["rmsprop_in_place_parallel"]


# -- safety ---------------------------------------------------------------------------------------
def test_concurrent_callers(B: NdArray, rng: Any, native: Any) -> None:
    """Several Python threads in the parallel kernels at once (thread-rank data parallelism):
    numba's workqueue layer would abort the process here; TBB serves them all."""
    native(2)
    a, b = big(rng), big(rng)
    expected = (a + b, a.sum(1, keepdims=True, dtype=np.float64))
    failures: list[str] = []

    def work() -> None:
        for _ in range(30):
            if not np.array_equal(B.float_add(a, b), expected[0]):
                failures.append("add")
            if not np.allclose(B.float_sum_dim(a, 1), expected[1], rtol=1e-5, atol=1e-4):
                failures.append("sum")

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert not any(w.is_alive() for w in workers) and failures == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_the_kernels(B: NdArray, rng: Any, native: Any, launches: list[str]) -> None:
    native(2)
    a, b = big(rng), big(rng)
    assert np.array_equal(B.float_add(a, b), a + b)  # the parent's pool is started
    pid = os.fork()
    if pid == 0:  # GNU OpenMP's layer would abort here; TBB starts again in the child
        ok = np.array_equal(B.float_add(a, b), a + b) and np.array_equal(B.float_mul(a, b), a * b)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert launches == ["binary_flat"]


_FALLBACK = """
import numpy as np, numba, burn_ndarray
from burn_ndarray import NdArray
from burn_ndarray.ops import float as float_ops
from burn_ndarray.runtime import split, tbb
{setup}
burn_ndarray.set_num_threads(2)
split.UFUNC_PER_THREAD = split.NATIVE_UFUNC_PER_THREAD = 1 << 12
float_ops._binary_min_size = 1 << 13
a = np.random.default_rng(0).standard_normal((300, 500)).astype(np.float32)
assert np.array_equal(NdArray().float_add(a, a), a + a)
print(tbb.ready(), numba.config.THREADING_LAYER)
"""


@pytest.mark.parametrize(
    ("setup", "env", "expected"),
    [
        ("", {"NUMBA_THREADING_LAYER": "workqueue"}, "False workqueue"),  # the user's choice stays
        (  # no tbb wheel: numba's own choice stays open, the Python pool runs the ops
            "from importlib import metadata\n"
            "def files(name): raise metadata.PackageNotFoundError(name)\n"
            "metadata.files = files",
            {},
            "False default",
        ),
    ],
    ids=["user-layer", "no-tbb"],
)
def test_the_python_pool_when_tbb_is_not_numbas_layer(setup: str, env: dict[str, str], expected: str) -> None:
    if not env and _tbb_installed() and os.environ.get("LD_LIBRARY_PATH"):
        pytest.skip("libtbb may be on the loader path here: numba would load it by itself")
    code = _FALLBACK.format(setup=setup)
    run = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-2:] == expected.split()


# -- ReLU: compiled at every thread count ---------------------------------------------------------
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_same_bits_as_numpy(
    B: NdArray, rng: Any, monkeypatch: pytest.MonkeyPatch, count: int, dtype: Any
) -> None:
    """NumPy's ``maximum(x, 0)`` exactly: NaN kept with its sign, -0.0 becomes +0.0; and the
    backward pass ``where(output > 0, grad, 0)``."""
    monkeypatch.setattr(activation, "RELU_COMPILED_MIN_SIZE", 1 << 12)
    monkeypatch.setattr(split, "NATIVE_UFUNC_PER_THREAD", 1 << 12)
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(count)
    try:
        x, g = big(rng, dtype=dtype), big(rng, dtype=dtype)
        x.flat[:6] = [np.nan, -np.nan, -0.0, 0.0, -np.inf, np.inf]
        expected = np.maximum(x, 0)
        got = B.relu(x)
        assert got.dtype == dtype and np.array_equal(got, expected, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(expected))
        back = B.relu_backward(expected, g)
        assert back.dtype == dtype and np.array_equal(back, np.where(expected > 0, g, dtype(0)))
    finally:
        burn_ndarray.set_num_threads(before)


def test_relu_of_a_channels_last_view_keeps_its_layout(
    B: NdArray, rng: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """conv2d's outputs are [N, C, H, W] views of [N, H, W, C] memory: ReLU takes them compiled,
    in memory order, and returns the same layout; views with gaps take NumPy."""
    monkeypatch.setattr(activation, "RELU_COMPILED_MIN_SIZE", 1 << 12)
    called: list[str] = []
    serial = activation_kernels.relu_range
    monkeypatch.setattr(activation_kernels, "relu_range", lambda *a: called.append("relu") or serial(*a))
    before = burn_ndarray.get_num_threads()
    burn_ndarray.set_num_threads(1)
    try:
        x = big(rng, (8, 20, 20, 16)).transpose(0, 3, 1, 2)
        got = B.relu(x)
        assert np.array_equal(got, np.maximum(x, 0)) and got.strides == x.strides
        gappy = x[:, :, ::2]
        assert np.array_equal(B.relu(gappy), np.maximum(gappy, 0))
        assert called == ["relu"]
    finally:
        burn_ndarray.set_num_threads(before)


def test_run_ranges_falls_back_to_the_python_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the TBB pool, the range kernels' chunks (the same cut) run on the Python pool."""
    monkeypatch.setattr(tbb, "_state", False)
    chunks: list[tuple[int, int]] = []
    used: list[object] = []
    real_run = threads.run
    monkeypatch.setattr(threads, "run", lambda task, parts: used.append(parts) or real_run(task, parts))

    def serial(lo: int, hi: int, out: list[tuple[int, int]]) -> None:
        out.append((lo, hi))

    split.run_ranges(serial, None, 10, 3, chunks)
    assert sorted(chunks) == [(0, 4), (4, 7), (7, 10)] and len(used) == 1
    chunks.clear()
    split.run_ranges(serial, None, 10, 1, chunks)
    assert chunks == [(0, 10)] and len(used) == 1  # one part: on this thread
