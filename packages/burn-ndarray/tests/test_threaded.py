"""burn-ndarray's threaded kernels (`runtime.threads`, `runtime.split`, the threaded ops and
`burn_ndarray.kernels`): thread settings, the
same results as the single-threaded ops, and the same bits for the same inputs and thread count."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import burn_ndarray
from burn.backend.ops.optim import OptimOps
from burn_ndarray import NdArray, kernels
from burn_ndarray.ops import activation as activation_ops
from burn_ndarray.ops import optim as optim_ops
from burn_ndarray.runtime import recycle as recycle_module
from burn_ndarray.runtime import split
from burn_ndarray.runtime import threads as thread_pool

# Above every threshold once `small_thresholds` lowers them, with rows that do not split evenly
# between 2 or 3 threads.
BIG = (301, 517)
SCALARS = (0.9, 0.999, 0.01, 1e-5)
PER_THREAD = ("UFUNC_PER_THREAD", "TRANSCENDENTAL_PER_THREAD", "ROWWISE_PER_THREAD", "ROW_SUM_PER_THREAD")


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split from 4096 elements per thread, so that small arrays take the threaded paths."""
    for name in PER_THREAD:
        monkeypatch.setattr(split, name, 1 << 12)
    monkeypatch.setattr(optim_ops, "COMPILED_PER_THREAD", 1 << 12)


def big(rng: np.random.Generator, shape: tuple[int, ...] = BIG, dtype: Any = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# -- settings -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"BURN_NUM_THREADS": "3", "OMP_NUM_THREADS": "5"}, 3),
        ({"OMP_NUM_THREADS": "5"}, 5),
        ({"OMP_NUM_THREADS": "4,2"}, 4),  # OpenMP's nested list: the outer count
        ({"BURN_NUM_THREADS": "zero", "MKL_NUM_THREADS": "6"}, 6),
    ],
)
def test_count_from_environment(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: int) -> None:
    for var in thread_pool.ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert thread_pool._from_env() == expected


def test_default_is_every_usable_core(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in thread_pool.ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    assert thread_pool._from_env() == thread_pool._cores() >= 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_set_num_threads_rejects_non_positive_ints(bad: Any) -> None:
    with pytest.raises(ValueError, match="set_num_threads"):
        burn_ndarray.set_num_threads(bad)


def test_set_and_get(threads: Any) -> None:
    threads(3)
    assert burn_ndarray.get_num_threads() == 3
    threads(1)
    assert burn_ndarray.get_num_threads() == 1


def test_split_covers_the_range_in_order() -> None:
    assert thread_pool.split(10, 3) == [slice(0, 4), slice(4, 7), slice(7, 10)]
    assert thread_pool.split(2, 5) == [slice(0, 1), slice(1, 2)]
    assert thread_pool.split(7, 1) == [slice(0, 7)]


def test_a_failing_chunk_raises_after_all_finish(threads: Any) -> None:
    threads(3)
    done: list[int] = []

    def task(chunk: slice) -> None:
        if chunk.start == 4:
            raise RuntimeError("chunk failed")
        done.append(chunk.start)

    with pytest.raises(RuntimeError, match="chunk failed"):
        thread_pool.run(task, thread_pool.split(10, 3))
    assert sorted(done) == [0, 7]


def test_the_caller_runs_the_chunks_a_stalled_pool_thread_has_not_taken(threads: Any) -> None:
    threads(2)
    stalled, release = threading.Event(), threading.Event()
    # The pool's one thread held elsewhere, as when another process holds its core.
    blocker = thread_pool._get_pool().submit(lambda: (stalled.set(), release.wait(10)))
    assert stalled.wait(10)
    ran: list[tuple[int, str]] = []
    try:
        record = lambda c: ran.append((c.start, threading.current_thread().name))  # noqa: E731
        thread_pool.run(record, thread_pool.split(8, 4))
    finally:
        release.set()
        blocker.result()
    main = threading.current_thread().name
    assert sorted(ran) == [(0, main), (2, main), (4, main), (6, main)]  # every chunk once, no wait


# -- element-wise: the single-threaded bits at every count --------------------------------------
BINARY = {
    "float_add": np.add,
    "float_sub": np.subtract,
    "float_mul": np.multiply,
    "float_div": np.true_divide,
}
UNARY = {"float_exp": np.exp, "float_log": np.log, "float_sqrt": np.sqrt, "float_tanh": np.tanh}


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_same_bits_as_numpy(B: NdArray, rng: Any, threads: Any, count: int, dtype: Any) -> None:
    threads(count)
    a, b = big(rng, dtype=dtype), big(rng, dtype=dtype)
    pos = np.abs(a) + 0.5
    for name, ufunc in BINARY.items():
        got = getattr(B, name)(a, b)
        assert got.dtype == dtype and np.array_equal(got, ufunc(a, b)), name
    for name, ufunc in UNARY.items():
        got = getattr(B, name)(pos)
        assert got.dtype == dtype and np.array_equal(got, ufunc(pos)), name


@pytest.mark.parametrize(
    ("lhs", "rhs"),
    [(BIG, BIG[1:]), ((BIG[0], 1), (1, BIG[1])), ((1, *BIG), BIG), ((3, *BIG), (1, *BIG))],
    ids=["bias-row", "outer", "leading-one", "batch-broadcast"],
)
def test_binary_broadcasting(
    B: NdArray, rng: Any, threads: Any, lhs: tuple[int, ...], rhs: tuple[int, ...]
) -> None:
    threads(2)
    a, b = big(rng, lhs), big(rng, rhs)
    for name, ufunc in BINARY.items():
        assert np.array_equal(getattr(B, name)(a, b), ufunc(a, b)), name
        assert np.array_equal(getattr(B, name)(b, a), ufunc(b, a)), name


def test_views_and_other_dtypes_take_numpy(B: NdArray, rng: Any, threads: Any) -> None:
    threads(2)
    a = big(rng, (600, 517))
    view = a[::2]  # non-contiguous rows: chunks of a view are fine too
    assert np.array_equal(B.float_add(view, view), view + view)
    assert np.array_equal(B.float_exp(a.T), np.exp(a.T))
    half = a.astype(np.float16)
    assert B.float_mul(half, half).dtype == np.float16
    assert np.array_equal(B.float_mul(a, 2.0), a * 2.0)  # a Python scalar: the plain ufunc


def test_small_tensors_stay_on_the_caller(B: NdArray, monkeypatch: pytest.MonkeyPatch, threads: Any) -> None:
    threads(2)
    calls: list[object] = []
    monkeypatch.setattr(thread_pool, "run", lambda task, chunks: calls.append(chunks))
    a = np.ones((4, 4), np.float32)
    assert np.array_equal(B.float_add(a, a), a + a) and np.array_equal(B.float_exp(a), np.exp(a))
    assert np.array_equal(B.gelu(a), B.gelu(a)) and np.array_equal(B.softmax(a, 1), B.softmax(a, 1))
    assert calls == []


def test_split_only_when_each_thread_gets_enough(threads: Any) -> None:
    threads(4)
    assert thread_pool.parts(10_000, 4096) == 2 and thread_pool.parts(4095, 4096) == 1
    assert thread_pool.parts(1 << 30, 4096) == 4


# -- activations and softmax: row-independent, so the single-threaded bits ----------------------
@pytest.mark.parametrize("count", [1, 2, 3])
def test_activations_same_bits_as_single_threaded(B: NdArray, rng: Any, threads: Any, count: int) -> None:
    a, g = big(rng), big(rng)
    threads(1)
    expected = [
        B.relu(a), B.relu_backward(B.relu(a), g), B.gelu(a), B.gelu_backward(a, g),
        B.softmax(a, 1), B.log_softmax(a, 1), B.softmax(a, 0),
    ]  # fmt: skip
    threads(count)
    got = [
        B.relu(a), B.relu_backward(B.relu(a), g), B.gelu(a), B.gelu_backward(a, g),
        B.softmax(a, 1), B.log_softmax(a, 1), B.softmax(a, 0),
    ]  # fmt: skip
    for i, (x, y) in enumerate(zip(expected, got, strict=True)):
        assert x.dtype == y.dtype and np.array_equal(x, y), i


def test_softmax_matches_float64_reference(B: NdArray, rng: Any, threads: Any) -> None:
    threads(2)
    a = big(rng, (64, 37, 128))
    ref = np.exp(a.astype(np.float64))
    ref /= ref.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(B.softmax(a, 2), ref, rtol=1e-5, atol=1e-7)


# -- reductions -----------------------------------------------------------------------------------
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("shape", [BIG, (37, 64, 91), (2, 70000), (70000, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_and_mean_dim_close_to_float64(
    B: NdArray, rng: Any, threads: Any, count: int, shape: tuple[int, ...], dtype: Any
) -> None:
    threads(count)
    a = big(rng, shape, dtype)
    rtol = 1e-5 if dtype is np.float32 else 1e-12
    for dim in range(len(shape)):
        ref = a.astype(np.float64).sum(axis=dim, keepdims=True)
        got = B.float_sum_dim(a, dim)
        assert got.dtype == dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * np.sqrt(shape[dim]))
        mean = B.float_mean_dim(a, dim)
        assert mean.dtype == dtype
        np.testing.assert_allclose(mean, ref / shape[dim], rtol=rtol, atol=rtol)


def test_last_dim_sum_does_not_depend_on_the_thread_count(B: NdArray, rng: Any, threads: Any) -> None:
    a = big(rng)
    results = []
    for count in (1, 2, 3, 1):
        threads(count)
        results.append(B.float_sum_dim(a, 1))
    assert all(np.array_equal(results[0], r) for r in results[1:])


@pytest.mark.parametrize("count", [2, 3])
def test_inner_dim_sum_same_bits_each_time(B: NdArray, rng: Any, threads: Any, count: int) -> None:
    threads(count)
    a = big(rng, (37, 64, 91))
    first = [B.float_sum_dim(a, d) for d in (0, 1)]
    assert all(np.array_equal(x, B.float_sum_dim(a, d)) for x, d in zip(first, (0, 1), strict=True))


def test_long_rows_keep_float32_precision(B: NdArray, threads: Any) -> None:
    threads(2)
    a = np.full((2, 1 << 20), 0.1, np.float32)  # a float32 running sum would drift by ~1%
    np.testing.assert_allclose(B.float_sum_dim(a, 1), np.float64(np.float32(0.1)) * (1 << 20), rtol=1e-6)


# -- fused Adam -----------------------------------------------------------------------------------
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("in_place", [True, False], ids=["moments-in-place", "fresh-moments"])
def test_compiled_adam_same_bits_as_the_default_op(
    B: NdArray, rng: Any, threads: Any, count: int, dtype: Any, in_place: bool
) -> None:
    threads(count)
    p, g, m = big(rng, dtype=dtype), big(rng, dtype=dtype), big(rng, dtype=dtype)
    v = rng.uniform(0.1, 2.0, size=BIG).astype(dtype)
    expected = OptimOps.float_adam_step(B, p, g, m.copy(), v.copy(), *SCALARS)  # type: ignore[arg-type]
    if in_place:
        got = B.float_adam_step(p, g, m.copy(), v.copy(), *SCALARS)
    else:
        held = (m.copy(), v.copy())  # held here too: the op must not write into them
        got = B.float_adam_step(p, g, held[0], held[1], *SCALARS)
        assert np.array_equal(held[0], m) and np.array_equal(held[1], v)
    for x, y in zip(expected, got, strict=True):
        assert y.dtype == dtype and np.array_equal(x, y)


def test_adam_without_numba_takes_the_numpy_passes(
    B: NdArray, rng: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kernels, "load", lambda name: None)
    p, g, m = big(rng), big(rng), big(rng)
    v = rng.uniform(0.1, 2.0, size=BIG).astype(np.float32)
    expected = OptimOps.float_adam_step(B, p, g, m.copy(), v.copy(), *SCALARS)  # type: ignore[arg-type]
    got = B.float_adam_step(p, g, m.copy(), v.copy(), *SCALARS)
    assert all(np.array_equal(x, y) for x, y in zip(expected, got, strict=True))


def test_training_step_is_reproducible_at_a_fixed_count(threads: Any) -> None:
    """Same inputs and thread count: the same bits after a few steps of a model that takes every
    threaded path (matmul, bias add, GELU, softmax, sums, Adam)."""
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed (the ndarray env)")
    import burn
    from burn import Tensor, activation, nn, optim

    def train() -> np.ndarray:
        backend = burn.backend("autodiff(ndarray)")
        backend.seed(0)
        device = backend.default_device()
        first = nn.LinearConfig(256, 512).init(device)
        second = nn.LinearConfig(512, 10).init(device)
        rng = np.random.default_rng(0)
        x = Tensor.from_data(rng.standard_normal((300, 256)).astype(np.float32), device=device)
        y = Tensor.from_data(rng.integers(0, 10, 300), device=device)
        opt = optim.AdamConfig().init()
        loss_fn = nn.CrossEntropyLossConfig().init()
        layers = [first, second]
        for _ in range(3):
            h = activation.gelu(layers[0](x))  # [300, 512]: above the thresholds
            loss = loss_fn(layers[1](h), y) + (activation.log_softmax(h, 1) * 1e-3).mean()
            grads = loss.backward()
            for i, layer in enumerate(layers):
                layers[i] = opt.step(1e-3, layer, optim.GradientsParams.from_grads(grads, layer))
        return np.concatenate([layers[0].weight.val().to_numpy().ravel(), layers[1].bias.val().to_numpy()])

    threads(2)
    first = train()
    assert np.array_equal(first, train())


# -- recycled buffers -----------------------------------------------------------------------------
@pytest.fixture
def recycle(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`runtime.recycle` with small buffers cached and an empty cache."""
    monkeypatch.setattr(recycle_module, "MIN_BYTES", 1 << 12)
    monkeypatch.setattr(recycle_module, "_cache", [])
    yield recycle_module


def test_buffer_reused_only_once_no_view_is_alive(recycle: Any) -> None:
    a = recycle.empty((64, 32), np.float32)
    a[:] = 1.0
    buf = id(a.base)  # the id only: a reference would keep the buffer busy
    view = a[::2]
    del a
    b = recycle.empty((64, 32), np.float32)  # `view` still sees the first buffer
    assert id(b.base) != buf and np.all(view == 1.0)
    del view
    c = recycle.empty((32, 64), np.float32)  # same bytes, another shape and the buffer is free
    assert id(c.base) == buf and c.shape == (32, 64) and c.dtype == np.float32 and c.flags.c_contiguous
    assert recycle.empty((8,), np.float32).base is None  # small: a plain array


def test_capacity_drops_the_least_recently_used(recycle: Any) -> None:
    held = [recycle.empty((1024 * (i + 2),), np.float32) for i in range(recycle.CAPACITY + 1)]
    assert len(recycle._cache) == recycle.CAPACITY
    assert all(h.base is not held[0].base for h in recycle._cache)
    recycle.clear()
    assert recycle._cache == [] and held[0].size == 2048


def test_adam_new_param_reuses_the_buffer_of_a_dead_one(B: NdArray, rng: Any, recycle: Any) -> None:
    p, g, m = big(rng), big(rng), big(rng)
    v = rng.uniform(0.1, 2.0, size=BIG).astype(np.float32)
    expected = OptimOps.float_adam_step(B, p, g, m.copy(), v.copy(), *SCALARS)  # type: ignore[arg-type]
    first = B.float_adam_step(p, g, m.copy(), v.copy(), *SCALARS)[0]
    buf = id(first.base)
    assert first.base is not None and np.array_equal(first, expected[0])
    del first
    second = B.float_adam_step(p, g, m.copy(), v.copy(), *SCALARS)[0]
    assert id(second.base) == buf and np.array_equal(second, expected[0])


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_threaded_ops_work_in_a_forked_child(B: NdArray, rng: Any, threads: Any) -> None:
    import os

    threads(2)
    a = big(rng)
    expected = np.exp(a)
    assert np.array_equal(B.float_exp(a), expected)  # the parent's pool is started
    pid = os.fork()
    if pid == 0:  # child: must not wait on the parent's pool threads, which it does not have
        os._exit(0 if np.array_equal(B.float_exp(a), expected) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# -- blocked element-wise passes ----------------------------------------------------------------
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_gelu_same_bits_as_one_call(
    B: NdArray, rng: Any, threads: Any, monkeypatch: pytest.MonkeyPatch, count: int, dtype: Any
) -> None:
    """GELU and its backward pass block by block (blocks of 1000+ elements here, on `count`
    threads): the bits of one call on the whole array, the tail of odd sizes included. (float32
    takes this path only without numba: the compiled kernels are switched off here.)"""
    threads(count)
    monkeypatch.setattr(activation_ops, "BLOCK", 1000)
    monkeypatch.setattr(activation_ops, "GELU_COMPILED_MIN_SIZE", 1 << 62)
    x, g = big(rng, dtype=dtype) * 3, big(rng, dtype=dtype)
    x.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    single = activation_ops.ActivationOps
    with np.errstate(invalid="ignore"):
        expected = (single.gelu(B, x), single.gelu_backward(B, x, g))
        got = (B.gelu(x), B.gelu_backward(x, g))
    for e, o in zip(expected, got, strict=True):
        assert o.dtype == dtype and np.array_equal(e, o, equal_nan=True)


def test_blocked_passes_leave_views_and_mixed_operands_to_one_call(
    B: NdArray, rng: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(activation_ops, "BLOCK", 1000)
    monkeypatch.setattr(activation_ops, "GELU_COMPILED_MIN_SIZE", 1 << 62)  # float32's NumPy path
    calls: list[int] = []
    monkeypatch.setattr(thread_pool, "split", lambda n, parts: calls.append(n) or [slice(0, n)])
    x = big(rng)
    assert np.array_equal(B.gelu(x.T), activation_ops.ActivationOps.gelu(B, x.T))  # a transposed view
    wide = x.astype(np.float64)  # a grad of another dtype
    assert np.array_equal(B.gelu_backward(x, wide), activation_ops.ActivationOps.gelu_backward(B, x, wide))
    assert calls == []


# -- sums along an inner dim: compiled, NumPy's bits ----------------------------------------------
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inner_dim_sums_are_numpys_bits_at_every_count(
    B: NdArray, rng: Any, threads: Any, count: int, dtype: Any
) -> None:
    threads(count)
    a = big(rng, (37, 64, 91), dtype)
    for dim in (0, 1):
        got = B.float_sum_dim(a, dim)
        assert got.dtype == dtype and np.array_equal(got, np.add.reduce(a, dim, keepdims=True)), dim
    np.testing.assert_allclose(B.float_mean_dim(a, 1), a.mean(axis=1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("count", [1, 2])
def test_sums_of_a_channels_last_view(B: NdArray, rng: Any, threads: Any, count: int) -> None:
    """conv2d's gradients are [N, C, H, W] views of [N, H, W, C] memory: summed along the
    matching axis of that memory (NumPy's bits except along C, the innermost, which takes the row
    kernel), returned in the view's layout."""
    threads(count)
    x = big(rng, (16, 26, 26, 32)).transpose(0, 3, 1, 2)
    for dim in range(4):
        got = B.float_sum_dim(x, dim)
        expected = np.add.reduce(x, dim, keepdims=True)
        assert got.shape == expected.shape
        if dim == 1:
            np.testing.assert_allclose(got, x.astype(np.float64).sum(1, keepdims=True), rtol=1e-5, atol=1e-4)
        else:
            assert np.array_equal(got, expected), dim
    gappy = x[:, :, ::2]
    np.testing.assert_allclose(B.float_sum_dim(gappy, 3), gappy.sum(3, keepdims=True), rtol=1e-6)
