"""burn.distributed without MPI: a world of one (the local engine), the engine registry (discovery,
isolation, strict mode), and the collectives' checks (mismatch, timeout, async) on an in-process
engine whose ranks are threads. burn-mpi's tests run the same API under mpiexec."""

from __future__ import annotations

import logging
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import numpy as np
import pytest

import burn.distributed as dist
import burn.distributed.collectives as coll
import burn.plugins as bp
from burn.cli import main as burn_main
from burn.distributed.engine import CollectiveEngine, EngineOp, Request
from burn.distributed.registry import EngineRegistry
from burn.errors import PluginError
from burn.plugins.specs import EngineSpec

ndarray = pytest.importorskip("burn_ndarray")


@pytest.fixture(autouse=True)
def fresh_group(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (
        "RANK",
        "WORLD_SIZE",
        "LOCAL_RANK",
        "PMI_RANK",
        "PMI_SIZE",
        "PMIX_RANK",
        "OMPI_COMM_WORLD_RANK",
    ):
        monkeypatch.delenv(name, raising=False)
    dist.shutdown()
    yield
    dist.shutdown()


@pytest.fixture
def B() -> Any:
    import burn

    return burn.backend("ndarray", float_dtype="float64")


def tensor(B: Any, values: Any, dtype: str | None = None) -> Any:
    from burn import Tensor

    return Tensor.from_data(np.asarray(values), backend=B, dtype=dtype)


# -- a world of one -------------------------------------------------------------------------------
def test_a_world_of_one_needs_no_engine(B: Any) -> None:
    ctx = dist.init()
    assert (ctx.rank, ctx.world_size, ctx.local_rank, ctx.engine.name) == (0, 1, 0, "local")
    assert dist.rank() == 0 and dist.world_size() == 1 and dist.local_rank() == 0
    t = tensor(B, [[1.0, 2.0], [3.0, 4.0]])
    for op in ("sum", "mean", "max", "min"):
        assert dist.all_reduce(t, op).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert dist.broadcast(t, 0).tolist() == t.tolist()
    assert dist.all_gather(t, 1).shape == (2, 2)
    assert dist.reduce_scatter(t).tolist() == t.tolist()
    assert dist.all_reduce(t, async_op=True).resolve().tolist() == t.tolist()
    assert dist.barrier() is None and dist.barrier(async_op=True).wait() is None
    assert dist.init() is ctx  # once per process


def test_collective_argument_errors(B: Any) -> None:
    dist.init()
    with pytest.raises(ValueError, match="op must be one of"):
        dist.all_reduce(tensor(B, [1.0]), "prod")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="'mean' needs a Float tensor, got Int"):
        dist.all_reduce(tensor(B, [1, 2]), "mean")
    with pytest.raises(ValueError, match=r"src must be a rank in \[0, 1\), got 3"):
        dist.broadcast(tensor(B, [1.0]), 3)
    with pytest.raises(ValueError, match="dim 2 is out of range for shape"):
        dist.all_gather(tensor(B, [[1.0]]), 2)


def test_several_processes_without_a_launcher_say_how_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setattr(dist.registry, "REGISTRY", EngineRegistry(entry_points=lambda: []))
    with pytest.raises(dist.DistributedError, match=r"a world of 4 processes.*mpiexec -n N"):
        dist.init()
    with pytest.raises(dist.DistributedError, match="no collective engine named 'mpi'.*burn-mpi"):
        dist.init("mpi")


# -- engines as plugins ---------------------------------------------------------------------------
def engine_plugin(*specs: EngineSpec) -> types.ModuleType:
    mod = types.ModuleType("fake_engines")
    mod.burn_collective_engines = bp.hookimpl(lambda: list(specs))  # type: ignore[attr-defined]
    return mod


class EP:
    def __init__(self, name: str, target: object, package: str) -> None:
        self.name, self.value, self._target = name, f"{package}.plugin", target
        self.dist = types.SimpleNamespace(name=package, version="9.9")

    def load(self) -> object:
        if isinstance(self._target, BaseException):
            raise self._target
        return self._target


def test_engines_are_listed_and_a_broken_plugin_stays_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BURN_STRICT_PLUGINS", raising=False)
    good = engine_plugin(
        EngineSpec("fine", factory=lambda: None, package="burn-fine"),
        EngineSpec("nogpu", factory=lambda: None, probe=lambda: "no GPU here", package="burn-fine"),
    )
    reg = EngineRegistry(
        entry_points=lambda: [EP("fine", good, "burn-fine"), EP("broken", ImportError("no libmpi"), "burn-x")]
    )
    rows = {r.name: r for r in reg.engines()}
    assert rows["fine"].status == "available" and rows["fine"].kind == "engine"
    assert rows["nogpu"].status == "unavailable" and rows["nogpu"].reason == "no GPU here"
    assert rows["broken"].status == "failed" and "ImportError: no libmpi" in rows["broken"].reason
    with pytest.raises(dist.DistributedError, match="cannot run here: no GPU here"):
        reg.find("nogpu")
    with pytest.raises(PluginError, match="could not be loaded.*no libmpi"):
        reg.find("broken")
    monkeypatch.setenv("BURN_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="BURN_STRICT_PLUGINS is set and a plugin failed"):
        reg.engines()


def test_a_plugin_of_the_wrong_group_is_refused() -> None:
    reg = EngineRegistry(entry_points=lambda: [])
    backend_only = types.ModuleType("backend_only")
    backend_only.burn_backends = bp.hookimpl(lambda: [])  # type: ignore[attr-defined]
    with pytest.raises(PluginError, match="unknown hook.*burn_collective_engines"):
        reg.register(backend_only)
    assert reg.engines() == []


def test_burn_engines_command(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BURN_STRICT_PLUGINS", raising=False)
    fake = EngineRegistry(
        entry_points=lambda: [EP("fine", engine_plugin(EngineSpec("fine", factory=print)), "burn-f")]
    )
    monkeypatch.setattr(dist.registry, "REGISTRY", fake)
    assert burn_main(["engines"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["NAME", "KIND", "PACKAGE", "VERSION", "STATUS"]
    assert out.splitlines()[1].split() == ["fine", "engine", "burn-f", "9.9", "available"]


# -- an engine whose ranks are threads: the checks of burn-core, without MPI -----------------------
class _World:
    """The shared state of a thread world: each collective completes when every rank posted."""

    def __init__(self, size: int) -> None:
        self.size, self.lock, self.calls = size, threading.Lock(), [[] for _ in range(size)]
        self.notices: dict[int, int] = {}  # rank -> the collective it last said it waits in

    def post(
        self, rank: int, kind: str, send: np.ndarray | None, recv: np.ndarray | None, arg: Any
    ) -> Request:
        with self.lock:
            self.calls[rank].append((kind, send, recv, arg))
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
    if kind == "all_reduce":
        np.copyto(recv, {"sum": np.sum, "max": np.max, "min": np.min}[arg](np.stack(sends), axis=0))
    elif kind == "all_gather":
        np.copyto(recv, np.concatenate(sends))
    elif kind == "broadcast":
        np.copyto(recv, sends[arg])


class ThreadEngine(CollectiveEngine):
    name = "threads"

    def __init__(self, world: _World, rank: int) -> None:
        self.world, self.rank, self.world_size, self.local_rank = world, rank, world.size, rank

    def iall_reduce(self, send: np.ndarray, recv: np.ndarray, op: EngineOp) -> Request:
        return self.world.post(self.rank, "all_reduce", send.copy(), recv, op)

    def ibroadcast(self, buffer: np.ndarray, root: int) -> Request:
        return self.world.post(self.rank, "broadcast", buffer.copy(), buffer, root)

    def iall_gather(self, send: np.ndarray, recv: np.ndarray) -> Request:
        return self.world.post(self.rank, "all_gather", send.copy(), recv, None)

    def ireduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: EngineOp) -> Request:
        raise NotImplementedError

    def ibarrier(self) -> Request:
        return self.world.post(self.rank, "barrier", None, None, None)

    def abort(self, code: int) -> NoReturn:
        raise SystemExit(code)

    def notify_waiting(self, collective: int) -> None:
        with self.world.lock:
            self.world.notices[self.rank] = collective

    def waiting_ranks(self) -> dict[int, int]:
        with self.world.lock:
            return {r: n for r, n in self.world.notices.items() if r != self.rank}


class MuteEngine(ThreadEngine):
    """A thread engine that keeps the contract's default: it cannot tell who is waiting."""

    name = "mute"

    def notify_waiting(self, collective: int) -> None:
        pass

    def waiting_ranks(self) -> None:  # type: ignore[override]
        return None


def run_ranks(
    size: int,
    body: Callable[[int], Any],
    timeout: float = 2.0,
    stall_report_s: float | None = None,
    engine: type[ThreadEngine] = ThreadEngine,
) -> list[Any]:
    """Run `body(rank)` on `size` threads, each with its own context on a ThreadEngine."""
    world, results = _World(size), [None] * size

    def one(rank: int) -> None:
        ctx = dist.DistributedContext(engine(world, rank), rank, size, rank, timeout, True, stall_report_s)
        local.ctx = ctx
        try:
            results[rank] = body(rank)
        except Exception as exc:
            results[rank] = exc

    local = threading.local()
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


def test_thread_world_collectives_match_numpy(B: Any) -> None:
    def body(rank: int) -> Any:
        t = tensor(B, [float(rank), 10.0 * rank])
        pending = dist.all_reduce(t, "mean", async_op=True)
        gathered = dist.all_gather(t)
        return pending.wait().tolist(), gathered.tolist(), dist.broadcast(t, 2).tolist()

    for result in run_ranks(3, body):
        assert result == ([1.0, 10.0], [0.0, 0.0, 1.0, 10.0, 2.0, 20.0], [2.0, 20.0])


def test_mismatched_shapes_name_every_rank(B: Any) -> None:
    results = run_ranks(2, lambda rank: dist.all_reduce(tensor(B, np.zeros((2, 3) if rank == 0 else (3, 2)))))
    for exc in results:
        assert isinstance(exc, dist.CollectiveMismatchError)
        assert (
            "rank 0: all_reduce('sum') on float64 (2, 3); rank 1: all_reduce('sum') on float64 (3, 2)"
            in str(exc)
        )


def test_mismatched_dtypes_and_ops_name_every_rank(B: Any) -> None:
    def body(rank: int) -> Any:
        if rank == 0:
            return dist.all_reduce(tensor(B, [1.0, 2.0]), "max")
        return dist.broadcast(tensor(B, [1, 2]), 0)

    message = str(run_ranks(2, body)[1])
    assert "rank 0: all_reduce('max') on float64 (2,); rank 1: broadcast(src=0) on int64 (2,)" in message


def test_a_rank_that_never_comes_is_a_timeout_that_says_so(B: Any) -> None:
    results = run_ranks(2, lambda rank: dist.barrier() if rank == 0 else None, timeout=0.5)
    assert isinstance(results[0], dist.CollectiveTimeoutError)
    assert "did not complete within the timeout of 0.5 s" in str(results[0])


@pytest.mark.parametrize(
    ("shape0", "shape1"),
    [
        ((1,) * 9 + (2, 3), (1,) * 9 + (3, 2)),  # 11 dims: they differ past the dims the row carries
        ((1,) * 10 + (2, 3), (1,) * 10 + (3, 2)),  # 12 dims: past the ten dims once compared at all
    ],
)
def test_shapes_differing_past_the_tenth_dim_are_a_mismatch(B: Any, shape0: tuple, shape1: tuple) -> None:
    assert np.prod(shape0) == np.prod(shape1)
    results = run_ranks(2, lambda rank: dist.all_reduce(tensor(B, np.zeros(shape0 if rank == 0 else shape1))))
    for rank, exc in enumerate(results):
        assert isinstance(exc, dist.CollectiveMismatchError), exc
        message = str(exc)
        assert f"({len(shape0)} dims, 6 elements, signature " in message
        # the rows differ in the signature, so the message shows two signatures
        signatures = [part.split("signature ")[1][:16] for part in message.split("; rank ")[:2]]
        assert signatures[0] != signatures[1]
        assert f"this rank's full shape: {shape0 if rank == 0 else shape1}" in message


def test_equal_high_rank_calls_pass_and_dtype_is_in_the_signature(B: Any) -> None:
    shape = (1,) * 10 + (2, 3)
    out = run_ranks(2, lambda rank: dist.all_reduce(tensor(B, np.full(shape, rank + 1.0))).shape)
    assert out == [shape, shape]
    assert coll._signature(coll.DType.F32, shape) != coll._signature(coll.DType.F64, shape)
    assert coll._signature(coll.DType.F32, shape) != coll._signature(coll.DType.F32, shape[::-1])
    assert 0 <= coll._signature(coll.DType.F64, shape) < 2**63


def test_a_waiting_rank_reports_the_stall_naming_who_is_missing(
    B: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def body(rank: int) -> Any:
        if rank == 1:
            time.sleep(1.0)  # late: rank 0 and 2 wait for it, and say so every 0.2 s
        return dist.all_reduce(tensor(B, [1.0]), "sum").tolist()

    with caplog.at_level(logging.WARNING, logger="burn.distributed"):
        results = run_ranks(3, body, timeout=10.0, stall_report_s=0.2)
    assert results == [[3.0]] * 3  # the late rank came: the collective completed everywhere
    reports = [r.getMessage() for r in caplog.records if r.name == "burn.distributed"]
    mine = [m for m in reports if m.startswith("burn.distributed: rank 0 of 3 has waited ")]
    assert len(mine) >= 2, reports  # one every interval, not once
    assert all("the check before all_reduce of float64 (1,) (collective #1)" in m for m in mine)
    assert all("not arrived: rank 1 (no word from it)" in m for m in mine)
    # rank 2 said it waits in collective #1 (by the last report, however slowly its thread ran)
    assert "not arrived: rank 1 (no word from it); the timeout ends the wait in " in mine[-1]
    assert "init(stall_report_s=...) or BURN_DISTRIBUTED_STALL_REPORT" in mine[0]
    assert not any(m.startswith("burn.distributed: rank 1 ") for m in reports)


def test_a_rank_last_heard_in_an_earlier_collective_and_an_engine_that_cannot_tell(
    B: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def body(rank: int) -> Any:
        time.sleep(0.5 if rank == 0 else 0.0)  # rank 1 waits in #1 long enough to say so
        dist.barrier()
        time.sleep(0.0 if rank == 0 else 0.7)  # then rank 0 waits in #2 while rank 1 computes
        return dist.barrier()

    with caplog.at_level(logging.WARNING, logger="burn.distributed"):
        assert run_ranks(2, body, timeout=10.0, stall_report_s=0.2) == [None, None]
    reports = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("burn.distributed: rank 1 of 2") and "(collective #1)" in m for m in reports)
    assert any(
        m.startswith("burn.distributed: rank 0 of 2")
        and "(collective #2); not arrived: rank 1 (last heard waiting in collective #1)" in m
        for m in reports
    ), reports
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="burn.distributed"):
        run_ranks(2, lambda rank: dist.barrier() if rank == 0 else None, 0.5, 0.2, MuteEngine)
    assert "the 'mute' engine cannot tell which ranks have not arrived" in caplog.text


def test_no_stall_report_when_off_or_quick(B: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="burn.distributed"):
        run_ranks(2, lambda rank: dist.barrier() if rank == 0 else None, timeout=0.5, stall_report_s=None)
        run_ranks(2, lambda rank: dist.barrier(), timeout=5.0, stall_report_s=0.2)
    assert caplog.records == []


def test_init_takes_the_stall_interval_from_the_argument_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert dist.init().stall_report_s == dist.DEFAULT_STALL_REPORT == 30.0
    dist.shutdown()
    monkeypatch.setenv("BURN_DISTRIBUTED_STALL_REPORT", "5")
    assert dist.init().stall_report_s == 5.0
    dist.shutdown()
    assert dist.init(stall_report_s=0).stall_report_s is None
    dist.shutdown()
    monkeypatch.setenv("BURN_DISTRIBUTED_STALL_REPORT", "soon")
    with pytest.raises(dist.DistributedError, match="BURN_DISTRIBUTED_STALL_REPORT='soon' is not a number"):
        dist.init()
    with pytest.raises(ValueError, match="stall_report_s must be a number of seconds >= 0 or None"):
        dist.init(stall_report_s=-2.0)
