"""burn-cuda's pinned host buffers (``"pinned_host"``): ``cupyx.empty_pinned`` memory uploaded
from asynchronously on the current stream, and ``DataLoader(pin_memory=True)`` on a GPU. Skipped,
with the probe's reason, without CuPy or a CUDA device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
from burn.backend.capabilities import HostBuffer
from burn.data import ArrayDataset, DataLoader
from burn.data import transforms as T
from burn.foundations.data import TensorData

CIFAR = T.Compose([T.RandomCrop(8, padding=4), T.RandomHorizontalFlip(), T.Normalize([0.5], [0.25])])


def test_the_backend_declares_pinned_host_buffers(B: Any, dev: Any) -> None:
    from burn_cuda.pinned import PinnedHostBuffer

    assert B.capabilities.has("pinned_host")
    buf = B.host_buffer(4096, dev)
    assert isinstance(buf, PinnedHostBuffer) and buf.pinned
    assert HostBuffer.holding(buf.array[8:64]) is buf
    buf.close()
    with pytest.raises(ValueError, match="nbytes must be a positive int"):
        B.host_buffer(-1, dev)


def test_an_upload_from_a_pinned_buffer_is_recorded_and_waited_for(B: Any, dev: Any) -> None:
    buf = B.host_buffer(1 << 22, dev)
    values = buf.array.view(np.float32)
    values[:] = np.arange(values.size, dtype=np.float32)
    x = B.float_from_data(TensorData.from_numpy(values), dev)
    assert len(buf._pending) == 1
    buf.wait()
    values[:] = -1.0
    assert np.array_equal(B.float_into_data(x).to_numpy(), np.arange(values.size, dtype=np.float32))
    buf.close()


def test_pin_memory_batches_equal_the_ordinary_ones(dev: Any) -> None:
    rng = np.random.default_rng(0)
    data = ArrayDataset(rng.integers(0, 256, (64, 3, 8, 8), dtype=np.uint8), rng.integers(0, 10, 64))
    plain = [
        (x.to_numpy(), y.to_numpy()) for x, y in DataLoader(data, 4, transform=CIFAR, device=dev).batches()
    ]
    slow = burn.Tensor.from_data(rng.random((2048, 2048), dtype=np.float32), dev)
    loader = DataLoader(data, 4, transform=CIFAR, device=dev, pin_memory=True, prefetch=1)
    kept = []
    for batch in loader.batches():
        kept.append(batch)
        slow = (slow @ slow) * 1e-3  # later uploads queue behind it while the ring comes round
    for (xa, ya), (xb, yb) in zip(plain, kept, strict=True):
        assert np.array_equal(xa, xb.to_numpy()) and np.array_equal(ya, yb.to_numpy())
    loader.close()


def test_device_transform_equals_the_worker_transform(dev: Any) -> None:
    rng = np.random.default_rng(1)
    data = ArrayDataset(rng.integers(0, 256, (32, 3, 8, 8), dtype=np.uint8), rng.integers(0, 10, 32))
    worker = DataLoader(data, 8, shuffle=True, seed=2, transform=CIFAR, device=dev)
    device = DataLoader(data, 8, shuffle=True, seed=2, device_transform=CIFAR, device=dev, pin_memory=True)
    for (xa, _), (xb, _) in zip(worker.batches(epoch=1), device.batches(epoch=1), strict=True):
        # CUDA's float32 division is correctly rounded (no fast-math in CuPy's kernels)
        assert np.array_equal(xa.to_numpy(), xb.to_numpy())
