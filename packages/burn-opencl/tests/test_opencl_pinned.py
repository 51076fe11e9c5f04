"""burn-opencl's pinned host buffers (``"pinned_host"``) and the data loader's device side on pocl:
asynchronous uploads from a mapped ``CL_MEM_ALLOC_HOST_PTR`` buffer, the pinned ring of
``DataLoader(pin_memory=True)`` (through autodiff and fusion too), and ``device_transform=`` equal
to the NumPy pipeline."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
from burn.backend.capabilities import HostBuffer, host_buffer
from burn.data import ArrayDataset, DataLoader
from burn.data import transforms as T
from burn.data.device_transforms import apply_on_device
from burn.errors import BackendNotFoundError
from burn.foundations.data import TensorData
from burn_opencl.pinned import PinnedHostBuffer

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
CIFAR = T.Compose([T.RandomCrop(8, padding=4), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)])


def test_the_backend_declares_pinned_host_buffers(B: Any, dev: Any) -> None:
    assert B.capabilities.has("pinned_host")
    buf = B.host_buffer(4096, dev)
    assert isinstance(buf, PinnedHostBuffer) and buf.pinned and buf.array.nbytes == 4096
    assert HostBuffer.holding(buf.array[100:200]) is buf
    buf.close()
    assert HostBuffer.holding(buf.array[100:200]) is None
    with pytest.raises(ValueError, match="nbytes must be a positive int"):
        B.host_buffer(0, dev)


def test_an_upload_from_a_pinned_buffer_is_recorded_and_waited_for(B: Any, dev: Any) -> None:
    buf = B.host_buffer(1 << 20, dev)
    values = buf.array[: 1 << 20].view(np.float32)
    values[:] = np.arange(values.size, dtype=np.float32)
    x = B.float_from_data(TensorData.from_numpy(values), dev)
    assert len(buf._pending) == 1  # the copy was started, not waited for
    buf.wait()
    assert not buf.busy()
    values[:] = -1.0  # after wait, writing the buffer again must not reach the tensor
    assert np.array_equal(B.float_into_data(x).to_numpy(), np.arange(values.size, dtype=np.float32))
    plain = np.arange(4, dtype=np.float32)
    B.float_from_data(TensorData.from_numpy(plain), dev)
    assert not buf._pending  # ordinary memory: the ordinary, blocking upload
    buf.close()


def backend_or_skip(name: str) -> Any:
    """`burn.backend(name)`, or a skip naming the decorator this environment lacks (the opencl tox
    environment installs burn-opencl alone; the decorator environments run these cases)."""
    try:
        return burn.backend(name)
    except BackendNotFoundError as exc:
        pytest.skip(f"{name}: {exc}")


@pytest.mark.parametrize("name", ["autodiff(opencl)", "fusion(opencl)"])
def test_decorators_reach_the_pinned_buffers(name: str) -> None:
    b = backend_or_skip(name)
    buf = host_buffer(b, 256, b.default_device())
    assert isinstance(buf, PinnedHostBuffer)
    buf.close()


def cifar_like(n: int = 70) -> ArrayDataset:
    rng = np.random.default_rng(0)
    return ArrayDataset(rng.integers(0, 256, (n, 3, 8, 8), dtype=np.uint8), rng.integers(0, 10, n))


def as_numpy(batches: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(x.to_numpy(), y.to_numpy()) for x, y in batches]


def assert_same(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    for (xa, ya), (xb, yb) in zip(a, b, strict=True):
        assert xa.dtype == xb.dtype and np.array_equal(xa, xb) and np.array_equal(ya, yb)


@pytest.mark.parametrize("name", ["opencl", "autodiff(opencl)", "fusion(opencl)"])
def test_pin_memory_batches_equal_the_ordinary_ones(name: str) -> None:
    """A ring of one buffer and many small batches: each batch's buffer is rewritten right after
    its upload was started, so a ring that did not wait would upload the next batch's bytes."""
    device = backend_or_skip(name).default_device()
    data = cifar_like()
    plain = as_numpy(
        DataLoader(data, 5, shuffle=True, seed=1, transform=CIFAR, device=device).batches(epoch=2)
    )
    loader = DataLoader(
        data, 5, shuffle=True, seed=1, transform=CIFAR, device=device, pin_memory=True, prefetch=1
    )
    kept = list(loader.batches(epoch=2))  # every tensor held until the end, not read in between
    (ring,) = loader._rings.values()
    assert ring is not None and ring.depth == 2 and all(b is not None and b.pinned for b in ring.buffers)
    assert_same(plain, as_numpy(kept))
    loader.close()
    assert not loader._rings


def test_the_ring_waits_for_uploads_queued_behind_other_work(dev: Any) -> None:
    """The consumer queues a slow matmul after each batch: the next uploads wait behind it on the
    in-order queue while the ring comes round to their buffers. Rewriting a buffer before its
    upload ran would put a later batch's values into an earlier batch's tensor."""
    data = cifar_like(40)
    plain = as_numpy(DataLoader(data, 4, transform=CIFAR, device=dev).batches())
    slow = burn.Tensor.from_data(np.random.default_rng(0).random((384, 384), dtype=np.float32), dev)
    loader = DataLoader(data, 4, transform=CIFAR, device=dev, pin_memory=True, prefetch=1)
    kept = []
    for batch in loader.batches():
        kept.append(batch)
        slow = (slow @ slow) * 1e-3  # queued, not waited for
    assert_same(plain, as_numpy(kept))
    loader.close()


def test_pin_memory_with_thread_workers(dev: Any) -> None:
    data = cifar_like()
    plain = as_numpy(DataLoader(data, 16, shuffle=True, seed=4, transform=CIFAR, device=dev).batches(epoch=0))
    with DataLoader(
        data,
        16,
        shuffle=True,
        seed=4,
        transform=CIFAR,
        device=dev,
        pin_memory=True,
        num_workers=2,
        worker_type="thread",
    ) as loader:
        assert_same(plain, as_numpy(loader.batches(epoch=0)))


def test_pin_memory_with_process_workers(dev: Any) -> None:
    """Batches come out of the workers' shared memory, then go through the pinned ring."""
    data = cifar_like(48)
    plain = as_numpy(DataLoader(data, 8, shuffle=True, seed=5, transform=CIFAR, device=dev).batches(epoch=1))
    loader = DataLoader(
        data, 8, shuffle=True, seed=5, device=dev, pin_memory=True, num_workers=2, device_transform=CIFAR
    )
    assert_same(plain, as_numpy(loader.batches(epoch=1)))
    loader.close()


@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=["uint8", "float32"])
@pytest.mark.parametrize(
    "pipeline",
    [
        CIFAR,
        T.RandomCrop((5, 7), padding=(1, 2, 3, 0), padding_mode="reflect"),
        T.RandomCrop(8, padding=3, padding_mode="edge"),
        T.RandomCrop(12, pad_if_needed=True, fill=3),
        T.CenterCrop((4, 5)),
        T.Compose([T.ToFloat(), T.RandomVerticalFlip(p=0.3)]),
        T.RandomApply([T.RandomCrop((8, 10), padding=3), T.RandomVerticalFlip(p=1.0)], p=0.4),
        T.RandomChoice([T.RandomCrop(8, padding=2), T.CenterCrop(8)]),
    ],
    ids=repr,
)
def test_device_pipeline_equals_numpy(B: Any, dev: Any, pipeline: Any, dtype: Any) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 256, (9, 3, 8, 10), dtype=np.uint8)
    if dtype == np.float32:
        x = x.astype(np.float32) / np.float32(255.0)
    tensor = burn.Tensor.from_data(x, dev, dtype="uint8" if dtype == np.uint8 else "float32")
    draws = [np.random.default_rng([1, 0, i]) for i in range(9)]
    got = apply_on_device(pipeline, tensor, draws).to_numpy()
    want = pipeline.apply_batch(x, [np.random.default_rng([1, 0, i]) for i in range(9)])
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)  # gathers copy; pocl's float32 division is correctly rounded


@pytest.mark.parametrize("pin", [False, True], ids=["plain", "pinned"])
def test_loader_device_transform_equals_the_worker_transform(dev: Any, pin: bool) -> None:
    data = cifar_like()
    worker = as_numpy(
        DataLoader(data, 16, shuffle=True, seed=3, transform=CIFAR, device=dev).batches(epoch=1)
    )
    loader = DataLoader(data, 16, shuffle=True, seed=3, device_transform=CIFAR, device=dev, pin_memory=pin)
    assert_same(worker, as_numpy(loader.batches(epoch=1)))
    assert_same(worker[2:], as_numpy(loader.batches(epoch=1, start=2)))  # resume stays exact
    loader.close()
