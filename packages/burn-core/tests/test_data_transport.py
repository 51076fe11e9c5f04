"""DataLoader process workers: batches through shared memory, persistent workers, wait statistics.

The batches must be bit-identical to the calling thread's (0 workers) whatever the transport,
the number of workers and whether they persist; no shared-memory block may outlive its loader
(normal end, break, worker error, dead worker, Ctrl-C, a killed main process).

A hang must fail rather than block the run: every test runs under a faulthandler watchdog that
dumps the stacks and exits the test process after `WATCHDOG_S`.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _loader_transforms import arrays_batcher, crop_flip, exit_on_5, fail_on_13, slow_on_0

import burn
from burn.data import ArrayDataset, DataLoader, LoaderStats, WorkerError
from burn.data.transport import Collated, SlotRing, close_attached, pack

WATCHDOG_S = 240


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def images(n: int = 40) -> ArrayDataset:
    rng = np.random.default_rng(0)
    return ArrayDataset(rng.integers(0, 255, size=(n, 3, 6, 6)).astype(np.uint8), np.arange(n))


def loader(num_workers: int = 0, **kwargs: Any) -> DataLoader:
    kwargs.setdefault("transform", crop_flip)
    kwargs.setdefault("batcher", arrays_batcher)
    return DataLoader(images(), batch_size=6, shuffle=True, seed=5, num_workers=num_workers, **kwargs)


def same(got: list, want: list) -> bool:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    return True


def our_children() -> list:
    return [p for p in multiprocessing.active_children() if p.name.startswith("burn-data-")]


def our_blocks(pid: int | None = None) -> list[str]:
    prefix = f"burn-data-{os.getpid() if pid is None else pid}-"
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith(prefix))


# -- the transport itself ------------------------------------------------------------------------
def test_pack_and_unpack_give_the_items_back_through_shared_memory() -> None:
    rng = np.random.default_rng(1)
    items = [(rng.normal(size=(3, 4)).astype(np.float32), i, rng.integers(0, 9, size=2)) for i in range(5)]
    ring = SlotRing(0, depth=2)
    attached: dict[int, Any] = {}
    try:
        first = pack(items, None, attached)  # no block yet: pickled, with the size it needs
        assert first[0] == "items" and first[2] >= 5 * 3 * 4 * 4 + 5 * 2 * 8
        slot = ring.take(first[2])
        assert slot is not None and len(our_blocks()) == 1
        message = pack(items, slot, attached)
        assert message[0] == "shm" and message[3][1] == ("list", [0, 1, 2, 3, 4])  # ints are pickled
        batch = ring.unpack(message, slot)
        assert isinstance(batch, Collated) and sorted(ring.free) == [0, 1]
        # the copy is ours: overwriting the block does not change the batch
        block = ring.blocks[slot.index]
        assert block is not None
        np.frombuffer(block.buf, np.uint8)[:] = 0
        assert np.array_equal(batch.fields[0], np.stack([i[0] for i in items]))
        for got, want in zip(batch.items(), items, strict=True):
            assert got[1] == want[1] and type(got[1]) is int
            assert np.array_equal(got[0], want[0]) and got[0].dtype == want[0].dtype
            assert np.array_equal(got[2], want[2]) and got[2].shape == want[2].shape
    finally:
        close_attached(attached)
        ring.close()
    assert our_blocks() == []


def test_numpy_scalars_travel_as_arrays_and_come_back_as_scalars() -> None:
    items = [(np.full(2, i, np.float32), np.int64(i), np.float16(i / 2)) for i in range(4)]
    ring = SlotRing(0, depth=1)
    attached: dict[int, Any] = {}
    try:
        slot = ring.take(1 << 12)
        message = pack(items, slot, attached)
        assert message[0] == "shm" and [e[0] for e in message[3]] == ["array", "scalars", "scalars"]
        batch = ring.unpack(message, slot)
        assert isinstance(batch, Collated) and batch.fields[1].tolist() == [0, 1, 2, 3]
        for got, want in zip(batch.items(), items, strict=True):
            assert type(got[1]) is np.int64 and got[1] == want[1]
            assert type(got[2]) is np.float16 and got[2] == want[2]
        # mixed scalar dtypes are not one field: pickled
        mixed = [(np.zeros(2), np.int64(1)), (np.zeros(2), np.int32(2))]
        assert pack(mixed, slot, attached)[3][1] == ("list", [np.int64(1), np.int32(2)])
    finally:
        close_attached(attached)
        ring.close()


def test_structured_and_big_endian_arrays_keep_their_dtype() -> None:
    pairs = np.dtype([("x", "<f4"), ("n", "<i2")])
    items = [(np.zeros(3, pairs), (np.arange(2) + i).astype(">i4")) for i in range(3)]
    ring = SlotRing(0, depth=1)
    attached: dict[int, Any] = {}
    try:
        slot = ring.take(1 << 12)
        batch = ring.unpack(pack(items, slot, attached), slot)
        assert isinstance(batch, Collated)
        assert batch.fields[0].dtype == pairs and batch.fields[1].dtype == np.dtype(">i4")
        assert np.array_equal(batch.fields[1], np.stack([i[1] for i in items]))
    finally:
        close_attached(attached)
        ring.close()


@pytest.mark.parametrize(
    "items",
    [
        [np.zeros(3), np.zeros(4)],  # shapes differ
        [(np.zeros(2),), (np.zeros(2), 1)],  # tuple widths differ
        [{"x": np.zeros(2)}, {"x": np.ones(2)}],  # not tuples nor arrays
        [(1, "a"), (2, "b")],  # no array field
        [np.array([None, 1]), np.array([2, None])],  # object arrays
    ],
)
def test_batches_that_are_not_fixed_shape_arrays_are_pickled(items: list) -> None:
    ring = SlotRing(0, depth=1)
    try:
        slot = ring.take(1 << 12)
        message = pack(items, slot, {})
        assert message[0] == "items" and message[1] is items
        assert ring.unpack(message, slot) is items and ring.free == [0]
    finally:
        ring.close()


def test_a_batch_larger_than_its_block_is_pickled_and_the_block_grows() -> None:
    ring = SlotRing(0, depth=1)
    attached: dict[int, Any] = {}
    try:
        small = ring.take(64)
        assert small is not None
        big = [np.arange(100.0)] * 4
        message = pack(big, small, attached)
        assert message[0] == "items" and message[2] == 3200
        ring.unpack(message, small)
        larger = ring.take(message[2])
        assert larger is not None and larger.size >= 3200 and larger.name != small.name
        assert len(our_blocks()) == 1  # the small block was unlinked
        batch = ring.unpack(pack(big, larger, attached), larger)
        assert isinstance(batch, Collated) and np.array_equal(batch.fields[0], np.stack(big))
    finally:
        close_attached(attached)
        ring.close()
    assert our_blocks() == []


# -- the loader ----------------------------------------------------------------------------------
@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_batches_are_bit_identical_across_workers_and_persistence(num_workers: int, persistent: bool) -> None:
    want = {epoch: list(loader().batches(epoch=epoch)) for epoch in (0, 3)}
    with loader(num_workers, persistent_workers=persistent, prefetch=2) as data:
        for epoch in (0, 3, 0):
            assert same(list(data.batches(epoch=epoch)), want[epoch])
        assert bool(our_children()) == persistent
    assert our_children() == [] and our_blocks() == []


def test_the_default_batcher_makes_the_same_tensors_from_shared_memory() -> None:
    pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
    device = burn.backend("ndarray").default_device()

    def tensors(num_workers: int) -> list:
        data = loader(num_workers, batcher=None)
        return [tuple(t.to_data().array for t in b) for b in data.batches(device, epoch=2)]

    assert same(tensors(2), tensors(0))


def test_items_of_varying_shapes_still_arrive() -> None:
    # item i is a sequence of length 1 + i // 6: each batch needs more bytes than the one before
    data = ArrayDataset(np.arange(36))

    def run(num_workers: int) -> list:
        lengths = DataLoader(
            data,
            batch_size=6,
            transform=grow,
            num_workers=num_workers,
            batcher=concat_batcher,
            persistent_workers=True,
        )
        with lengths:
            return [list(lengths.batches(epoch=e)) for e in (0, 1)]

    got, want = run(2), run(0)
    for g, w in zip(got, want, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(g, w, strict=True))
    assert our_blocks() == []


def grow(item: Any, rng: np.random.Generator) -> np.ndarray:
    return np.full(1 + int(item) // 6, float(item)) + rng.random()


def concat_batcher(items: list, device: Any) -> np.ndarray:
    return np.concatenate(items)


def test_a_late_batch_does_not_hold_up_the_other_workers() -> None:
    data = DataLoader(
        images(), batch_size=6, transform=slow_on_0, batcher=arrays_batcher, num_workers=2, prefetch=1
    )
    got = list(data.batches())
    assert same(got, list(DataLoader(images(), batch_size=6, batcher=arrays_batcher).batches()))
    stats = data.stats()
    assert stats is not None
    # while batch 0 took its second, worker 1 made batch 1 and, given its next task at once, batch 3
    assert stats.ready[1] and stats.ready[3]
    assert stats.wait_s[0] >= 0.9


def test_persistent_workers_live_across_epochs_and_stop_on_close() -> None:
    with loader(2, persistent_workers=True) as data:
        list(data.batches(epoch=0))
        pids = sorted(p.pid for p in our_children())
        # the first tasks (sent before any batch told the size) came back pickled
        assert len(pids) == 2 and 0 < len(our_blocks()) <= 2 * data.prefetch
        list(data.batches(epoch=1))
        blocks = our_blocks()
        assert len(blocks) == 2 * data.prefetch
        list(data.batches(epoch=2))
        assert sorted(p.pid for p in our_children()) == pids and our_blocks() == blocks
        assert "persistent" in repr(data)
        data.close()
        assert our_children() == [] and our_blocks() == []
        data.close()  # twice is fine
        assert same(list(data.batches(epoch=1)), list(loader().batches(epoch=1)))  # new workers
        assert len(our_children()) == 2
    assert our_children() == [] and our_blocks() == []


@pytest.mark.parametrize("persistent", [False, True])
def test_resume_mid_epoch_is_bit_identical(persistent: bool) -> None:
    want = list(loader().batches(epoch=2))
    with loader(2, persistent_workers=persistent) as data:
        for start in (1, 4, len(want) - 1):
            assert same(list(data.batches(epoch=2, start=start)), want[start:])


def test_breaking_out_keeps_persistent_workers_and_the_next_pass_is_exact() -> None:
    want = list(loader().batches(epoch=1))
    with loader(2, persistent_workers=True, prefetch=3) as data:
        pids = None
        for k, _ in enumerate(data.batches(epoch=1)):
            pids = sorted(p.pid for p in our_children())
            if k == 1:
                break
        # the results in flight are dropped by the next pass, which starts from batch 2 (a resume)
        assert sorted(p.pid for p in our_children()) == pids
        assert same(list(data.batches(epoch=1, start=2)), want[2:])
    assert our_children() == [] and our_blocks() == []


def test_breaking_out_of_a_pass_leaves_no_shared_memory() -> None:
    for k, _ in enumerate(loader(2, prefetch=3).batches()):
        assert our_blocks()
        if k == 1:
            break
    assert our_children() == [] and our_blocks() == []


def test_two_open_passes_of_a_persistent_loader() -> None:
    want = list(loader().batches(epoch=0)), list(loader().batches(epoch=1))
    with loader(2, persistent_workers=True) as data:
        got = list(zip(data.batches(epoch=0), data.batches(epoch=1), strict=True))
        assert same([g[0] for g in got], want[0]) and same([g[1] for g in got], want[1])


@pytest.mark.parametrize("persistent", [False, True])
def test_a_worker_error_frees_everything_and_the_loader_recovers(persistent: bool) -> None:
    data = loader(2, transform=fail_on_13, persistent_workers=persistent)
    with pytest.raises(ValueError, match="item thirteen is bad") as caught:
        list(data.batches())
    assert "item 13 of the dataset" in "\n".join(caught.value.__notes__)
    assert our_children() == [] and our_blocks() == []
    data.transform = crop_flip
    assert same(list(data.batches(epoch=1)), list(loader().batches(epoch=1)))
    data.close()
    assert our_children() == [] and our_blocks() == []


def test_a_dead_worker_frees_everything() -> None:
    with pytest.raises(WorkerError, match="exited unexpectedly"), loader(2, transform=exit_on_5) as data:
        list(data.batches())
    assert our_children() == [] and our_blocks() == []


def test_stats_and_the_profiler_see_the_waits() -> None:
    data = loader(2, persistent_workers=True)
    assert data.stats() is None
    with data, burn.profile() as prof:
        batches = list(data.batches(epoch=0))
    stats = data.stats()
    assert isinstance(stats, LoaderStats) and stats.epoch == 0 and stats.num_workers == 2
    assert len(stats.wait_s) == len(stats.batch_s) == len(stats.ready) == len(batches) == 7
    assert all(w >= 0 for w in stats.wait_s) and stats.waited(skip=2) <= stats.waited()
    waits = prof.stats_by_name()["data.wait"]
    assert waits.calls == 7 and abs(waits.total_ns / 1e9 - stats.waited()) < 1e-6
    list(loader().batches())  # without workers the wait is the time reading and transforming


def test_a_slow_consumer_finds_every_batch_ready_after_the_first() -> None:
    with loader(2, persistent_workers=True) as data:
        for _ in data.batches():
            time.sleep(0.5)  # a training step far slower than the workers
        stats = data.stats()
        assert stats is not None and len(stats.ready) == 7 and not stats.ready[0]
        assert stats.starved(skip=2) == 0
    data = loader()
    list(data.batches())
    stats = data.stats()
    assert stats is not None and stats.starved() == 7  # without workers no batch is made ahead


def test_bad_persistent_workers() -> None:
    with pytest.raises(TypeError, match="persistent_workers must be a bool"):
        loader(2, persistent_workers=1)


def test_a_copied_loader_starts_its_own_workers() -> None:
    import copy

    with loader(1, persistent_workers=True) as data:
        list(data.batches())
        twin = copy.deepcopy(data)
        assert twin._pool is None and twin.stats() is None
        assert same(list(twin.batches()), list(data.batches()))
        twin.close()


# -- the process ending --------------------------------------------------------------------------
SCRIPT = """
import os, signal, sys, time
import numpy as np
from burn.data import ArrayDataset, DataLoader

def slow(item, rng):
    time.sleep(0.01)
    return item.astype(np.float32) + rng.random()

if __name__ == "__main__":
    loader = DataLoader(ArrayDataset(np.zeros((400, 64))), batch_size=8, num_workers=2,
                        transform=slow, persistent_workers=True, batcher=lambda items, device: items)
    for k, _ in enumerate(loader.batches()):
        if k == 3:
            print(os.getpid(), flush=True)
            names = [n for n in os.listdir("/dev/shm") if n.startswith(f"burn-data-{os.getpid()}-")]
            assert names, "no shared memory in use"
            if sys.argv[1] == "interrupt":
                raise KeyboardInterrupt
            if sys.argv[1] == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            break
    print("leaving", flush=True)
"""

WAITING = """
import multiprocessing, os, signal, threading, time
import numpy as np
from burn.data import ArrayDataset, DataLoader

def slow(item, rng):
    time.sleep(0.5 if item[0] >= 8 else 0)
    return item.astype(np.float32)

if __name__ == "__main__":
    # a background job of a non-interactive shell starts with SIGINT ignored (POSIX), and Python
    # then installs no handler: Ctrl-C must raise KeyboardInterrupt here whatever ran the tests
    signal.signal(signal.SIGINT, signal.default_int_handler)
    loader = DataLoader(ArrayDataset(np.arange(64.0).reshape(16, 4)), batch_size=4, num_workers=2,
                        transform=slow, persistent_workers=True, batcher=lambda items, device: items)
    batches = loader.batches()
    next(batches)  # the pool is up and its blocks made
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        for _ in batches:  # blocked on a slow worker when Ctrl-C comes
            pass
    except KeyboardInterrupt:
        names = [n for n in os.listdir("/dev/shm") if n.startswith(f"burn-data-{os.getpid()}-")]
        alive = [p.name for p in multiprocessing.active_children() if p.name.startswith("burn-data-")]
        print("interrupted", names, alive, flush=True)
"""


def test_ctrl_c_while_waiting_on_a_worker_stops_the_pool(tmp_path: Path) -> None:
    script = tmp_path / "waiting.py"
    script.write_text(textwrap.dedent(WAITING))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "interrupted [] []"


@pytest.mark.parametrize("how", ["exit", "interrupt", "kill"])
def test_no_shared_memory_outlives_the_process(tmp_path: Path, how: str) -> None:
    script = tmp_path / "ending.py"
    script.write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True, timeout=120)
    pid = int(done.stdout.split()[0])
    if how == "exit":
        assert done.returncode == 0 and done.stdout.split()[1] == "leaving", done.stderr
    elif how == "interrupt":
        # an uncaught KeyboardInterrupt ends Python by SIGINT (so the shell sees an interrupt)
        assert done.returncode == -signal.SIGINT and "KeyboardInterrupt" in done.stderr
    else:
        assert done.returncode == -signal.SIGKILL
    # a killed process's blocks are unlinked by multiprocessing's resource tracker, a moment later
    deadline = time.monotonic() + (30 if how == "kill" else 0)
    while our_blocks(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert our_blocks(pid) == []
