"""Random draws and threads: one generator per backend shared by every thread (the default), and
the calling thread's own after ``B.seed(n, thread=True)``, with which two models trained at once on
two threads (lazy initialization, dropout) get the parameters of the same runs made one by one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import burn
from burn import Tensor, nn, optim
from burn.module import Module

pytest.importorskip("burn_ndarray")
pytest.importorskip("burn_autodiff")

X = np.linspace(-1.0, 1.0, 8 * 6).reshape(8, 6)
Y = np.sin(X.sum(axis=1, keepdims=True))


class Net(Module):
    l1: nn.Linear
    drop: nn.Dropout
    l2: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        return self.l2(self.drop(burn.activation.relu(self.l1(x))))


@pytest.fixture
def B() -> Any:
    return burn.backend("autodiff(ndarray)", float_dtype="float64")


def train(B: Any, step_done: Callable[[], None] = lambda: None, steps: int = 4) -> list[np.ndarray]:
    """A small model with lazy params (initialized at the first forward) and dropout, trained with
    SGD; `step_done` runs after each step (the threaded runs meet there, so that they interleave)."""
    device = B.default_device()
    model = Net(
        nn.LinearConfig(6, 16).init(device), nn.DropoutConfig(0.5).init(), nn.LinearConfig(16, 1).init(device)
    )
    assert not model.l1.weight.is_initialized  # drawn during training, on the training thread
    optimizer = optim.SgdConfig().init()
    x, y = Tensor.from_data(X, device=device), Tensor.from_data(Y, device=device)
    for _ in range(steps):
        loss = nn.MseLoss()(model(x), y)
        model = optimizer.step(0.1, model, optim.GradientsParams.from_grads(loss.backward(), model))
        step_done()
    return [p.val().to_numpy() for _, p in model.named_params()]


def in_lockstep(bodies: list[Callable[[Callable[[], None]], Any]]) -> list[Any]:
    """Run each body on its own thread; they meet after every step, so their draws interleave."""
    barrier = threading.Barrier(len(bodies), timeout=30)
    results: list[Any] = [None] * len(bodies)

    def one(i: int) -> None:
        try:
            results[i] = bodies[i](barrier.wait)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            barrier.abort()
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def test_thread_seeded_runs_at_once_equal_the_runs_one_by_one(B: Any) -> None:
    expected = []
    for seed in (11, 22):
        B.seed(seed)
        expected.append(train(B))

    def run(seed: int) -> Callable[[Callable[[], None]], Any]:
        def body(step_done: Callable[[], None]) -> Any:
            B.seed(seed, thread=True)
            return train(B, step_done)

        return body

    B.seed(0)
    shared_before = B.rng.bit_generator.state
    got = in_lockstep([run(11), run(22)])
    for params, want in zip(got, expected, strict=True):
        for p, w in zip(params, want, strict=True):
            np.testing.assert_array_equal(p, w)  # bit for bit
    assert B.rng.bit_generator.state == shared_before  # the threads left the shared generator alone


def test_runs_on_the_shared_generator_interleave(B: Any) -> None:
    # the default, documented: both threads draw from one generator, so neither run is the run
    # it would be alone (as with PyTorch's global generator)
    B.seed(11)
    alone = train(B)

    def body(step_done: Callable[[], None]) -> Any:
        return train(B, step_done)

    B.seed(11)
    got = in_lockstep([body, body])
    assert all(any(not np.array_equal(p, w) for p, w in zip(run, alone, strict=True)) for run in got)


def test_the_shared_generator_is_one_stream_for_every_thread(B: Any) -> None:
    nd = B.inner
    B.seed(7)
    first, second = Tensor.random((3,), backend=B).to_numpy(), Tensor.random((3,), backend=B).to_numpy()
    B.seed(7)
    drawn: list[np.ndarray] = []
    t = threading.Thread(target=lambda: drawn.append(Tensor.random((3,), backend=B).to_numpy()))
    t.start()
    t.join()
    np.testing.assert_array_equal(drawn[0], first)  # a thread that did not seed draws the shared stream
    np.testing.assert_array_equal(Tensor.random((3,), backend=B).to_numpy(), second)
    assert B.rng is nd.rng and B.current_random() is nd.current_random()


def test_a_thread_generator_is_the_threads_alone_until_dropped(B: Any) -> None:
    B.seed(5)
    alone = [Tensor.random((4,), backend=B).to_numpy() for _ in range(2)]
    B.seed(7)
    shared_first = Tensor.random((4,), backend=B).to_numpy()
    B.seed(7)
    seen: dict[str, Any] = {}

    def body() -> None:
        B.seed(5, thread=True)  # through the autodiff decorator, on the inner backend
        seen["own"] = [Tensor.random((4,), backend=B).to_numpy() for _ in range(2)]
        seen["inner is thread's"] = B.inner.current_random() is B.current_random()
        B.seed(None, thread=True)  # back to the shared generator
        seen["after drop"] = Tensor.random((4,), backend=B).to_numpy()

    t = threading.Thread(target=body)
    t.start()
    t.join()
    for got, want in zip(seen["own"], alone, strict=True):
        np.testing.assert_array_equal(got, want)  # the same values as after a global seed(5)
    assert seen["inner is thread's"]
    np.testing.assert_array_equal(seen["after drop"], shared_first)  # the shared stream, unadvanced before
    assert not np.array_equal(Tensor.random((4,), backend=B).to_numpy(), shared_first)


def test_thread_seeding_reaches_a_device_generator_backend() -> None:
    # OpenCL draws from a Philox key and counter, not from the host generator: its state is
    # per thread too, through the same shared code
    pytest.importorskip("burn_opencl")
    try:
        C = burn.backend("opencl")
    except burn.errors.BackendUnavailableError as exc:
        pytest.skip(str(exc))
    C.seed(3)
    want = Tensor.random((5,), backend=C).to_numpy()
    C.seed(9)
    shared = Tensor.random((5,), backend=C).to_numpy()
    C.seed(9)
    got: list[np.ndarray] = []

    def body() -> None:
        C.seed(3, thread=True)
        got.append(Tensor.random((5,), backend=C).to_numpy())

    t = threading.Thread(target=body)
    t.start()
    t.join()
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(Tensor.random((5,), backend=C).to_numpy(), shared)
