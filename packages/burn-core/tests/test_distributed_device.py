"""The device-buffer side of the engine contract (`DeviceCollectiveEngine`, what NCCL implements),
without a GPU: a fake device engine whose "device arrays" are the NumPy arrays of burn-ndarray, on
a world whose ranks are threads. It proves that collectives hand an adopted backend's primitive
arrays to the engine and adopt its results without a host copy, that other backends are staged
through `to_device` / `to_host`, and that the checks (mismatch, timeout) still work."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import numpy as np
import pytest

import burn
import burn.distributed as dist
import burn.distributed.collectives as coll
from burn import Tensor
from burn.backend.base import Backend
from burn.distributed.engine import DeviceCollectiveEngine, EngineOp, Request

pytest.importorskip("burn_ndarray")


@pytest.fixture(autouse=True)
def fresh_group() -> Iterator[None]:
    dist.shutdown()
    yield
    dist.shutdown()


class _World:
    """Ranks are threads; a collective completes on a rank once every rank posted it."""

    def __init__(self, size: int) -> None:
        self.size, self.lock = size, threading.Lock()
        self.calls: list[list[tuple[str, Any, Any, Any]]] = [[] for _ in range(size)]

    def post(self, rank: int, kind: str, send: Any, recv: Any, arg: Any) -> Request:
        with self.lock:
            self.calls[rank].append((kind, None if send is None else send.copy(), recv, arg))
            n = len(self.calls[rank])
        world = self

        class Pending:
            def test(self) -> bool:
                with world.lock:
                    if any(len(c) < n for c in world.calls):
                        return False
                    posted = [c[n - 1] for c in world.calls]
                _complete(posted, rank)
                return True

        return Pending()


def _complete(posted: list[tuple[str, Any, Any, Any]], rank: int) -> None:
    kind, _, recv, arg = posted[rank]
    sends = [p[1] for p in posted]
    reduce = {"sum": np.sum, "max": np.max, "min": np.min}
    if kind == "all_reduce":
        np.copyto(recv, reduce[arg](np.stack(sends), axis=0))
    elif kind == "reduce_scatter":
        n = recv.size
        np.copyto(recv, reduce[arg](np.stack(sends), axis=0)[rank * n : (rank + 1) * n])
    elif kind == "all_gather":
        np.copyto(recv, np.concatenate(sends))
    elif kind == "broadcast":
        np.copyto(recv, sends[arg])


class FakeDeviceEngine(DeviceCollectiveEngine):
    """A device engine whose device arrays are NumPy arrays: it adopts burn-ndarray's primitives
    (or none, `adopt=False`) and records every buffer it is handed and every staging copy."""

    name = "fake-device"
    xp = np

    def __init__(self, world: _World, rank: int, adopt: bool = True) -> None:
        self.world, self.rank, self.world_size, self.local_rank = world, rank, world.size, rank
        self.adopt = adopt
        self.sends: list[np.ndarray] = []
        self.recvs: list[np.ndarray] = []
        self.staged_in = self.staged_out = 0

    def adopts(self, backend: Backend) -> bool:
        return self.adopt and backend.name == "ndarray"

    def to_device(self, array: np.ndarray) -> Any:
        self.staged_in += 1
        return array.copy()

    def to_host(self, array: Any) -> np.ndarray:
        self.staged_out += 1
        return np.array(array, copy=True)

    def _post(self, kind: str, send: Any, recv: Any, arg: Any) -> Request:
        if send is not None:
            self.sends.append(send)
        if recv is not None:
            self.recvs.append(recv)
        return self.world.post(self.rank, kind, send, recv, arg)

    def iall_reduce(self, send: Any, recv: Any, op: EngineOp) -> Request:
        return self._post("all_reduce", send, recv, op)

    def ireduce_scatter(self, send: Any, recv: Any, op: EngineOp) -> Request:
        return self._post("reduce_scatter", send, recv, op)

    def ibroadcast(self, buffer: Any, root: int) -> Request:
        return self._post("broadcast", buffer, buffer, root)

    def iall_gather(self, send: Any, recv: Any) -> Request:
        return self._post("all_gather", send, recv, None)

    def ibarrier(self) -> Request:
        return self.world.post(self.rank, "barrier", None, None, None)

    def abort(self, code: int) -> NoReturn:
        raise SystemExit(code)


def run_ranks(
    size: int, body: Callable[[int, FakeDeviceEngine], Any], adopt: bool = True, timeout: float = 5.0
) -> list[Any]:
    """Run `body(rank, engine)` on `size` threads, each with its own context on a FakeDeviceEngine."""
    world, results = _World(size), [None] * size
    local = threading.local()

    def one(rank: int) -> None:
        engine = FakeDeviceEngine(world, rank, adopt)
        local.ctx = dist.DistributedContext(engine, rank, size, rank, timeout, True)
        try:
            results[rank] = body(rank, engine)
        except Exception as exc:
            results[rank] = exc

    original = coll.context
    threads = [threading.Thread(target=one, args=(r,)) for r in range(size)]
    coll.context = lambda: local.ctx  # type: ignore[assignment]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        coll.context = original  # type: ignore[assignment]
    return results


def _primitive(t: Tensor) -> np.ndarray:
    while t.backend.inner is not t.backend:
        t = t.inner()
    p = t._p
    assert isinstance(p, np.ndarray)
    return p


def test_adopted_primitives_reach_the_engine_without_a_host_copy() -> None:
    B = burn.backend("ndarray", float_dtype="float32")

    def body(rank: int, engine: FakeDeviceEngine) -> Any:
        t = Tensor.from_data(np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * rank, backend=B)
        staged = engine.staged_in, engine.staged_out
        summed = dist.all_reduce(t, "sum")
        # the check before it went through the engine (one staged copy each way), the data did not
        assert (engine.staged_in, engine.staged_out) == (staged[0] + 1, staged[1] + 1)
        assert np.shares_memory(engine.sends[-1], _primitive(t))  # the tensor's own memory, sent
        assert np.shares_memory(_primitive(summed), engine.recvs[-1])  # the result adopts recv
        gathered = dist.all_gather(t, 1)
        assert np.shares_memory(engine.sends[-1], _primitive(t))
        scattered = dist.reduce_scatter(t, "max")
        assert np.shares_memory(_primitive(scattered), engine.recvs[-1])
        broadcast = dist.broadcast(t, 1)
        if rank == 1:
            assert broadcast is t and np.shares_memory(engine.sends[-1], _primitive(t))
        else:
            assert np.shares_memory(_primitive(broadcast), engine.recvs[-1])
        dist.barrier()
        mean = dist.all_reduce(t, "mean", async_op=True).wait()
        return summed, gathered, scattered, broadcast, mean

    for rank, result in enumerate(run_ranks(2, body)):
        assert not isinstance(result, Exception), result
        summed, gathered, scattered, broadcast, mean = result
        base = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(summed.to_numpy(), 2 * base + 10)
        np.testing.assert_array_equal(gathered.to_numpy(), np.concatenate([base, base + 10], 1))
        np.testing.assert_array_equal(scattered.to_numpy(), (base + 10)[rank : rank + 1])
        np.testing.assert_array_equal(broadcast.to_numpy(), base + 10)
        np.testing.assert_allclose(mean.to_numpy(), base + 5)
        assert summed.backend is B and summed.dtype is burn.DType.F32 and summed.shape == (2, 3)


@pytest.mark.parametrize("dtype", ["float16", "int16", "bool"])
def test_adopted_dtypes_the_engine_does_not_reduce(dtype: str) -> None:
    B = burn.backend("ndarray")

    def body(rank: int, engine: FakeDeviceEngine) -> Any:
        values = np.array([[rank, 1], [0, rank]]).astype(dtype)
        t = Tensor.from_data(values, backend=B, dtype=dtype)
        out = dist.all_reduce(t, "max")
        assert engine.sends[-1].dtype in dist.REDUCE_DTYPES
        return out

    for result in run_ranks(2, body):
        assert not isinstance(result, Exception), result
        assert result.dtype.value == dtype
        np.testing.assert_array_equal(result.to_numpy(), np.array([[1, 1], [0, 1]]).astype(dtype))


def test_autodiff_tensors_come_back_on_autodiff() -> None:
    pytest.importorskip("burn_autodiff")
    A = burn.backend("autodiff(ndarray)")

    def body(rank: int, engine: FakeDeviceEngine) -> Any:
        t = Tensor.from_data(np.full((2,), float(rank + 1)), backend=A)
        out = dist.all_reduce(t, "sum")
        assert np.shares_memory(engine.sends[-1], _primitive(t))
        return out

    for result in run_ranks(2, body):
        assert not isinstance(result, Exception), result
        assert result.backend.name == "autodiff(ndarray)"
        assert result.tolist() == [3.0, 3.0]


def test_other_backends_are_staged_through_the_engine() -> None:
    B = burn.backend("ndarray", float_dtype="float64")

    def body(rank: int, engine: FakeDeviceEngine) -> Any:
        t = Tensor.from_data(np.array([1.0, 2.0]) * (rank + 1), backend=B)
        out = dist.all_gather(t)
        assert not np.shares_memory(engine.sends[-1], _primitive(t))
        # the check and the data: two copies in, two out
        assert (engine.staged_in, engine.staged_out) == (2, 2)
        return out

    for result in run_ranks(2, body, adopt=False):
        assert not isinstance(result, Exception), result
        assert result.tolist() == [1.0, 2.0, 2.0, 4.0]


def test_checks_still_name_every_rank_and_time_out() -> None:
    B = burn.backend("ndarray")

    def mismatch(rank: int, engine: FakeDeviceEngine) -> Any:
        return dist.all_reduce(Tensor.zeros((2, 3) if rank == 0 else (3, 2), backend=B))

    for exc in run_ranks(2, mismatch):
        assert isinstance(exc, dist.CollectiveMismatchError)
        assert "rank 0: all_reduce('sum') on float32 (2, 3); rank 1: all_reduce('sum') on float32 (3, 2)" in (
            str(exc)
        )
    results = run_ranks(2, lambda rank, engine: dist.barrier() if rank == 0 else None, timeout=0.3)
    assert isinstance(results[0], dist.CollectiveTimeoutError)
    assert "did not complete within the timeout of 0.3 s" in str(results[0])
