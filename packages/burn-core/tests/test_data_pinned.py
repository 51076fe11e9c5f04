"""Pinned host staging (``DataLoader(pin_memory=True)``, `burn.data.pinned`) and the
``"pinned_host"`` capability's shared parts (`burn.backend.capabilities.HostBuffer`), on a fake
pinned backend whose copies finish only when waited for: the ring must never hand out a buffer
with a copy still pending, and must replace one that is too small only after its copies."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import burn
from burn.backend.capabilities import FEATURES, Capabilities, HostBuffer, host_buffer, pinned_backend
from burn.data import ArrayDataset, DataLoader
from burn.data.pinned import PinnedRing, stage_batch
from burn.foundations.dtype import DType


class FakeCopy:
    def __init__(self) -> None:
        self.done = False


class FakePinned(HostBuffer):
    """Pinned in name: a copy recorded on it stays pending until `wait`."""

    pinned = True

    def __init__(self, nbytes: int) -> None:
        super().__init__(nbytes)
        self.waited = 0
        self.closed = False

    def _wait_copy(self, copy: Any) -> None:
        copy.done = True
        self.waited += 1

    def _copy_done(self, copy: Any) -> bool:
        return bool(copy.done)

    def close(self) -> None:
        super().close()
        self.closed = True


def fake_backend() -> Any:
    made: list[FakePinned] = []

    def make(nbytes: int, device: Any) -> FakePinned:
        made.append(FakePinned(nbytes))
        return made[-1]

    backend = SimpleNamespace(
        capabilities=Capabilities(frozenset({DType.F32}), frozenset({"pinned_host"})),
        host_buffer=make,
        made=made,
    )
    backend.inner = backend
    return backend


def device_of(backend: Any) -> Any:
    return SimpleNamespace(with_owner=lambda owner: "dev")


def test_the_capability_is_declared_and_plain_memory_is_the_default() -> None:
    pytest.importorskip("burn_ndarray")  # the core env has no backend
    assert "pinned_host" in FEATURES
    b = burn.backend("ndarray")
    buf = host_buffer(b, 1000, b.default_device())
    assert type(buf) is HostBuffer and not buf.pinned and buf.array.nbytes == 1000
    assert buf.array.ctypes.data % 64 == 0
    assert pinned_backend(b) is None
    assert HostBuffer.holding(buf.array) is None  # plain buffers are not looked up
    buf.wait()  # nothing pending
    with pytest.raises(ValueError, match="nbytes must be a positive int"):
        HostBuffer(0)


def test_a_decorator_over_a_plain_backend_has_no_pinned_buffers() -> None:
    pytest.importorskip("burn_ndarray")
    pytest.importorskip("burn_autodiff")
    assert pinned_backend(burn.backend("autodiff(ndarray)")) is None


def test_holding_finds_the_pinned_buffer_of_a_view_and_forgets_it_when_closed() -> None:
    buf = FakePinned(4096)
    view = buf.array[128:256].view(np.float32)
    assert HostBuffer.holding(view) is buf
    assert HostBuffer.holding(buf.array[4000:]) is buf
    assert HostBuffer.holding(np.zeros(8)) is None
    assert HostBuffer.holding(buf.array[:0]) is None  # nothing to copy
    buf.close()
    assert HostBuffer.holding(view) is None


def test_busy_and_wait_follow_the_recorded_copies() -> None:
    buf = FakePinned(64)
    copy = FakeCopy()
    buf.pending(copy)
    assert buf.busy()
    buf.wait()
    assert copy.done and not buf.busy() and buf.waited == 1


def test_the_ring_waits_for_a_buffers_copies_before_handing_it_out_again() -> None:
    backend = fake_backend()
    ring = PinnedRing(backend, device_of(backend), depth=2)
    first, second = ring.take(100), ring.take(100)
    assert first is not second and len(backend.made) == 2
    copies = [FakeCopy(), FakeCopy()]
    first.pending(copies[0])
    second.pending(copies[1])
    again = ring.take(100)
    assert again is first and copies[0].done and not first.busy()
    assert not copies[1].done  # the other buffer's copy is not waited for before its turn
    assert ring.take(100) is second and copies[1].done


def test_the_ring_replaces_a_small_buffer_after_its_copies() -> None:
    backend = fake_backend()
    ring = PinnedRing(backend, device_of(backend), depth=1)
    small = ring.take(100)
    copy = FakeCopy()
    small.pending(copy)
    large = ring.take(1000)
    assert large is not small and large.nbytes >= 1000
    assert copy.done and small.closed  # waited for, then freed
    assert ring.take(1100) is large  # room to spare: no remake for a slightly larger batch
    ring.close()
    assert large.closed
    with pytest.raises(ValueError, match="depth"):
        PinnedRing(backend, device_of(backend), depth=0)


def test_stage_batch_gives_the_tensors_of_stack_batcher() -> None:
    """Through a ring of plain buffers on ndarray (whose from_data copies): the same kinds,
    dtypes and values as the default batcher, for tuples, scalars and Python numbers."""
    pytest.importorskip("burn_ndarray")  # the core env has no backend
    b = burn.backend("ndarray")
    device = b.default_device()
    ring = PinnedRing(b, device, depth=2)
    rng = np.random.default_rng(0)
    items = [(rng.random((2, 3)), np.int32(i), i % 2 == 0, float(i)) for i in range(5)]
    got = stage_batch(items, b, device, ring)
    want = burn.data.stack_batcher(items, device)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.kind is w.kind and np.array_equal(g.to_numpy(), w.to_numpy())
    images = rng.integers(0, 256, (4, 3, 2, 2), dtype=np.uint8)
    kept = stage_batch(list(images), b, device, ring, keep_first=True)
    assert kept.dtype == burn.uint8 and np.array_equal(kept.to_numpy(), images)
    with pytest.raises(TypeError, match="not a number or bool"):
        stage_batch([("a",), ("b",)], b, device, ring)


def test_pin_memory_on_a_backend_without_pinned_memory_is_the_ordinary_path() -> None:
    pytest.importorskip("burn_ndarray")  # the core env has no backend
    rng = np.random.default_rng(1)
    data = ArrayDataset(rng.random((20, 4), dtype=np.float32), rng.integers(0, 3, 20))
    plain = list(DataLoader(data, 6, shuffle=True, seed=2).batches(epoch=1))
    loader = DataLoader(data, 6, shuffle=True, seed=2, pin_memory=True)
    pinned = list(loader.batches(epoch=1))
    assert len(pinned) == len(plain) == 4
    for (x0, y0), (x1, y1) in zip(plain, pinned, strict=True):
        assert np.array_equal(x0.to_numpy(), x1.to_numpy()) and np.array_equal(y0.to_numpy(), y1.to_numpy())
    assert [r for r in loader._rings.values() if r is not None] == []
    assert "pin_memory" in repr(loader)


def test_pin_memory_arguments_are_checked() -> None:
    data = ArrayDataset(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="pin_memory=True stages batches for the default batcher"):
        DataLoader(data, 2, pin_memory=True, batcher=lambda items, device: items)
    with pytest.raises(TypeError, match="pin_memory must be a bool"):
        DataLoader(data, 2, pin_memory=1)  # type: ignore[arg-type]
