"""``DataLoader(device_transform=...)`` and `burn.data.device_transforms` on ndarray: the device
pipeline must give the NumPy pipeline's batches (same host draws, same pixels), keep resume
exact, and refuse what it cannot run. burn-opencl's tests run the same checks on pocl."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
from burn.data import ArrayDataset, DataLoader
from burn.data import transforms as T
from burn.data.device_transforms import apply_on_device, supports_device

pytest.importorskip("burn_ndarray")  # every case runs on ndarray; the core env has no backend

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
CIFAR = T.Compose([T.RandomCrop(8, padding=4), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)])

PIPELINES = [
    T.RandomCrop(6, padding=2),
    T.RandomCrop((5, 7), padding=(1, 2, 3, 0), padding_mode="reflect"),
    T.RandomCrop(8, padding=3, padding_mode="edge"),
    T.RandomCrop(7, padding=1, fill=9),
    T.RandomCrop(14, padding=1, padding_mode="reflect", pad_if_needed=True),
    T.RandomCrop(12, pad_if_needed=True, fill=3),
    T.CenterCrop((4, 5)),
    T.RandomHorizontalFlip(),
    T.RandomVerticalFlip(p=0.3),
    T.RandomHorizontalFlip(p=1.0),
    T.ToFloat(),
    T.Normalize(MEAN, STD),
    T.Normalize([0.5], [0.25]),
    CIFAR,
    T.Compose([T.ToFloat(), T.RandomCrop(8, padding=2, padding_mode="edge"), T.RandomVerticalFlip()]),
    T.RandomApply([T.RandomCrop((8, 10), padding=3), T.RandomVerticalFlip(p=1.0)], p=0.4),
    T.RandomApply(T.RandomHorizontalFlip(p=1.0), p=0.0),
    T.RandomChoice([T.RandomCrop(8, padding=2), T.CenterCrop(8), T.RandomCrop(8, padding_mode="edge")]),
    T.Compose(
        [T.RandomChoice([T.RandomHorizontalFlip(p=1.0), T.RandomVerticalFlip()], p=[0.3, 0.7]), T.ToFloat()]
    ),
]


def images(n: int = 9, dtype: Any = np.uint8, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=(n, 3, 8, 10), dtype=np.uint8)
    return rng.random((n, 3, 8, 10), dtype=np.float32)


def rngs(n: int) -> list[np.random.Generator]:
    return [np.random.default_rng([4, 1, i]) for i in range(n)]


@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=["uint8", "float32"])
@pytest.mark.parametrize("pipeline", PIPELINES, ids=repr)
def test_device_pipeline_equals_numpy(pipeline: Any, dtype: Any) -> None:
    b = burn.backend("ndarray")
    x = images(dtype=dtype)
    tensor = burn.Tensor.from_data(x, dtype="uint8" if dtype == np.uint8 else "float32", backend=b)
    got = apply_on_device(pipeline, tensor, rngs(len(x))).to_numpy()
    want = pipeline.apply_batch(x, rngs(len(x)))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)


def dataset(n: int = 40) -> ArrayDataset:
    rng = np.random.default_rng(3)
    return ArrayDataset(rng.integers(0, 256, (n, 3, 8, 8), dtype=np.uint8), rng.integers(0, 10, n))


def as_numpy(batches: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(x.to_numpy(), y.to_numpy()) for x, y in batches]


def assert_same(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    for (xa, ya), (xb, yb) in zip(a, b, strict=True):
        assert xa.dtype == xb.dtype and np.array_equal(xa, xb) and np.array_equal(ya, yb)


@pytest.mark.parametrize(
    "options",
    [{}, {"num_workers": 2, "worker_type": "thread"}, {"pin_memory": True}],
    ids=["0", "threads", "pin"],
)
def test_loader_device_transform_equals_the_worker_transform(options: dict[str, Any]) -> None:
    data = dataset()
    worker = as_numpy(DataLoader(data, 16, shuffle=True, seed=7, transform=CIFAR).batches(epoch=3))
    device = as_numpy(
        DataLoader(data, 16, shuffle=True, seed=7, device_transform=CIFAR, **options).batches(epoch=3)
    )
    assert_same(worker, device)
    other_epoch = as_numpy(
        DataLoader(data, 16, shuffle=True, seed=7, device_transform=CIFAR).batches(epoch=4)
    )
    assert not np.array_equal(other_epoch[0][0], device[0][0])


def test_device_transform_resume_is_exact() -> None:
    loader = DataLoader(dataset(), 8, shuffle=True, seed=1, device_transform=CIFAR)
    whole = as_numpy(loader.batches(epoch=2))
    resumed = as_numpy(loader.batches(epoch=2, start=3))
    assert_same(whole[3:], resumed)


def test_uint8_images_stay_uint8_without_a_float_transform() -> None:
    crop = T.RandomCrop(8, padding=2)
    x, y = next(iter(DataLoader(dataset(), 8, device_transform=crop).batches()))
    assert x.dtype == burn.uint8 and y.dtype == burn.backend("ndarray").int_dtype
    worker_x, _ = next(iter(DataLoader(dataset(), 8, transform=crop).batches()))
    assert np.array_equal(x.to_numpy(), worker_x.to_numpy())


def test_a_worker_transform_and_a_device_transform_draw_from_separate_streams() -> None:
    data = dataset(16)
    flip = T.RandomHorizontalFlip()
    x, _ = next(iter(DataLoader(data, 16, transform=flip, device_transform=CIFAR, seed=5).batches(epoch=1)))
    raw = np.stack([data[i][0] for i in range(16)])
    flipped = flip.apply_batch(raw, [np.random.default_rng([5, 1, i]) for i in range(16)])
    want = CIFAR.apply_batch(flipped, [np.random.default_rng([5, 1, i, 1]) for i in range(16)])
    assert np.array_equal(x.to_numpy(), want)


def test_device_transform_with_a_custom_batcher_transforms_its_first_tensor() -> None:
    data = dataset(8)

    def batcher(items: list[Any], device: Any) -> list[Any]:
        xs = np.stack([i[0] for i in items]).astype(np.float32) / np.float32(255.0)
        return [burn.Tensor.from_data(xs, device), [int(i[1]) for i in items]]

    batch = next(iter(DataLoader(data, 8, batcher=batcher, device_transform=T.RandomCrop(4)).batches()))
    assert isinstance(batch, list) and batch[0].shape == (8, 3, 4, 4) and len(batch[1]) == 8


def test_unsupported_transforms_and_bad_batches_are_refused() -> None:
    assert supports_device(CIFAR) and not supports_device(T.Compose([T.ColorJitter(0.2)]))
    with pytest.raises(TypeError, match="ColorJitter.*has no device form.*transform="):
        DataLoader(dataset(), 8, device_transform=T.Compose([T.RandomCrop(8), T.ColorJitter(brightness=0.2)]))
    b = burn.backend("ndarray")
    flat = burn.Tensor.from_data(np.zeros((2, 8), np.float32), backend=b)
    with pytest.raises(ValueError, match=r"expected an \(N, C, H, W\) batch"):
        apply_on_device(CIFAR, flat, rngs(2))
    square = burn.Tensor.from_data(np.zeros((2, 3, 4, 4), np.float32), backend=b)
    with pytest.raises(ValueError, match="2 images but 3 generators"):
        apply_on_device(CIFAR, square, rngs(3))
    with pytest.raises(ValueError, match="larger than the padded image"):
        apply_on_device(T.RandomCrop(9), square, rngs(2))
    with pytest.raises(ValueError, match="3 mean/std values for an image of 2 channels"):
        apply_on_device(T.Normalize(MEAN, STD), square[:, :2], rngs(2))
    uint8 = burn.Tensor.from_data(images(n=8), dtype="uint8", backend=b)
    with pytest.raises(ValueError, match="RandomApply: the transformed and untouched images differ"):
        apply_on_device(T.RandomApply(T.ToFloat(), p=0.5), uint8, rngs(8))
