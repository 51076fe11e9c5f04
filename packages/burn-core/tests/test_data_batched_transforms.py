"""burn.data.transforms on whole batches: ``apply_batch(images, rngs)`` must equal the per-image
calls stacked, bit for bit, for every transform and composition, and the loader's batched path
(`load_batch`) must give the items `load_items` gives, whatever the workers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.data import ArrayDataset, DataLoader
from burn.data import transforms as T
from burn.data.transport import Collated
from burn.data.workers import load_batch, load_items

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
CIFAR = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)])


def batch(
    n: int = 9, shape: tuple[int, ...] = (3, 8, 10), dtype: Any = np.uint8, seed: int = 0
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=(n, *shape), dtype=np.uint8)
    return rng.random((n, *shape), dtype=np.float32)


def rngs(n: int, epoch: int = 0) -> list[np.random.Generator]:
    return [np.random.default_rng([5, epoch, i]) for i in range(n)]


def per_image(t: Any, images: np.ndarray, epoch: int = 0) -> np.ndarray:
    return np.stack([t(images[k], g) for k, g in enumerate(rngs(len(images), epoch))])


BATCHED = [
    T.RandomCrop(6, padding=2),
    T.RandomCrop((5, 7), padding=(1, 2, 3, 0), padding_mode="reflect"),
    T.RandomCrop(9, padding=1, padding_mode="edge", pad_if_needed=True),
    T.RandomCrop(12, pad_if_needed=True, fill=7),
    T.CenterCrop((3, 4)),
    T.Resize(5),
    T.Resize((8, 10)),
    T.RandomResizedCrop((5, 4)),
    T.RandomHorizontalFlip(),
    T.RandomHorizontalFlip(p=1.0),
    T.RandomHorizontalFlip(p=0.0),
    T.RandomVerticalFlip(p=0.3),
    T.ToFloat(),
    T.Normalize(MEAN, STD),
    T.Normalize([0.5], [0.25]),
    T.ColorJitter(0.4, 0.4, 0.4, 0.1),
    T.RandomErasing(p=0.7),
    T.RandAugment(num_ops=3),
    T.RandomApply(T.ColorJitter(0.5), p=0.5),
    T.RandomApply([T.RandomHorizontalFlip(p=1.0), T.RandomVerticalFlip(p=1.0)], p=1.0),
    T.RandomChoice([T.RandomHorizontalFlip(p=1.0), T.RandomErasing(p=1.0), T.RandomCrop((8, 10), padding=1)]),
    T.Compose([T.RandomCrop(8, padding=2), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)]),
    T.Compose([T.RandomApply(T.RandomCrop(6, padding=1), p=1.0), T.ToFloat(), T.RandomErasing(p=0.5)]),
]


@pytest.mark.parametrize(
    "t", BATCHED, ids=lambda t: repr(t)[:40] if isinstance(t, T.Compose) else type(t).__name__
)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_a_batch_equals_the_images_one_by_one(t: Any, dtype: Any) -> None:
    images = batch(dtype=dtype)
    before = images.copy()
    assert T.supports_batch(t)
    for epoch in range(3):
        want = per_image(t, images, epoch)
        got = t.apply_batch(images, rngs(len(images), epoch))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(images, before)  # never in place


def test_the_cifar_pipeline_on_a_batch_of_128() -> None:
    images = batch(128, (3, 32, 32))
    got = CIFAR.apply_batch(images, rngs(128))
    assert got.dtype == np.float32 and got.tobytes() == per_image(CIFAR, images).tobytes()
    # the draws really differ from image to image: some flipped, various crops
    flipped = T.RandomHorizontalFlip().apply_batch(images, rngs(128))
    same = [np.array_equal(flipped[k], images[k]) for k in range(128)]
    assert 30 < sum(same) < 98


def test_supports_batch() -> None:
    assert T.supports_batch(CIFAR) and T.supports_batch(T.RandomApply([T.ToFloat()]))
    assert not T.supports_batch(T.Lambda(lambda x: x))
    assert not T.supports_batch(T.Compose([T.ToFloat(), T.Lambda(lambda x: x)]))
    assert not T.supports_batch(T.RandomChoice([T.ToFloat(), T.Lambda(lambda x: x)]))
    assert not T.supports_batch(T.RandomSubsequence(3))
    assert not T.supports_batch(print)


def test_apply_batch_errors() -> None:
    with pytest.raises(
        ValueError, match=r"RandomCrop: expected an \(N, C, H, W\) batch .* shape \(3, 8, 10\)"
    ):
        T.RandomCrop(4).apply_batch(batch()[0], rngs(3))
    with pytest.raises(ValueError, match="Normalize: 2 generators for a batch of 9 images"):
        T.Normalize([0.5], [0.2]).apply_batch(batch(), rngs(2))
    with pytest.raises(ValueError, match="Normalize: 2 mean/std values for an image of 3 channels"):
        T.Normalize([0.5, 0.4], [0.2, 0.2]).apply_batch(batch(), rngs(9))
    with pytest.raises(ValueError, match=r"RandomCrop: size \(12, 12\) is larger than the padded image"):
        T.RandomCrop(12).apply_batch(batch(), rngs(9))
    with pytest.raises(TypeError, match="does not transform batches"):
        T.Compose([T.Lambda(lambda x: x)]).apply_batch(batch(), rngs(9))
    # results of different shapes from one image to the next do not stack
    with pytest.raises(T.Unbatchable):
        T.RandomApply(T.Resize((4, 4)), p=0.5).apply_batch(batch(), rngs(9))


def dataset(n: int = 40, shape: tuple[int, ...] = (3, 32, 32)) -> ArrayDataset:
    return ArrayDataset(batch(n, shape, seed=1), np.arange(n))


def test_load_batch_is_load_items_collated() -> None:
    ds, indices = dataset(), [7, 3, 19, 0, 33]
    want = load_items(ds, CIFAR, 5, 2, indices)
    got = load_batch(ds, CIFAR, 5, 2, indices)
    assert isinstance(got, Collated) and got.width == 2 and got.count == 5
    for (gx, gy), (wx, wy) in zip(got.items(), want, strict=True):
        assert gx.dtype == wx.dtype and np.array_equal(gx, wx) and gy == wy
    # bare images (not tuples) too
    bare = ArrayDataset(batch(6, (3, 32, 32)))
    got = load_batch(bare, CIFAR, 5, 2, [1, 4])
    assert isinstance(got, Collated) and got.width is None
    np.testing.assert_array_equal(np.stack(got.items()), np.stack(load_items(bare, CIFAR, 5, 2, [1, 4])))


def test_load_batch_falls_back_to_items_when_a_batch_cannot_be_made() -> None:
    ds = dataset()
    mixed = T.RandomApply(T.Resize((4, 4)), p=0.5)  # images of two sizes: no stacked batch
    got = load_batch(ds, mixed, 0, 0, list(range(10)))
    assert isinstance(got, list) and {x.shape for x, _ in got} == {(3, 4, 4), (3, 32, 32)}
    assert all(
        np.array_equal(g[0], w[0])
        for g, w in zip(got, load_items(ds, mixed, 0, 0, list(range(10))), strict=True)
    )
    ragged = [(np.zeros((3, 4, 4), np.uint8), 0), (np.zeros((3, 5, 4), np.uint8), 1)]
    assert isinstance(load_batch(ragged, T.ToFloat(), 0, 0, [0, 1]), list)
    # an item that is not an image: the item-by-item path raises with its index
    from burn.data.workers import ItemFailed

    with pytest.raises(ItemFailed) as failed:
        load_batch([(np.zeros((3, 4, 4), np.uint8), 0), ("text", 1)], T.ToFloat(), 0, 0, [0, 1])
    assert failed.value.index == 1 and "expected a (C, H, W) NumPy array" in str(failed.value.error)


def arrays(items: list[Any], device: Any) -> tuple[np.ndarray, np.ndarray]:
    return np.stack([i[0] for i in items]), np.array([int(i[1]) for i in items])


@pytest.mark.parametrize(("num_workers", "worker_type"), [(0, "process"), (2, "process"), (2, "thread")])
def test_the_loader_with_library_transforms_matches_item_by_item(num_workers: int, worker_type: str) -> None:
    ds = dataset()
    loader = DataLoader(
        ds,
        6,
        shuffle=True,
        seed=5,
        transform=CIFAR,
        batcher=arrays,
        num_workers=num_workers,
        worker_type=worker_type,
    )
    for epoch in (0, 1):
        got = list(loader.batches(epoch=epoch))
        for (x, y), indices in zip(got, loader.index_batches(epoch), strict=True):
            want = load_items(ds, CIFAR, 5, epoch, [int(i) for i in indices])
            assert y.tolist() == [int(i) for i in indices]
            assert x.dtype == np.float32 and x.tobytes() == np.stack([w[0] for w in want]).tobytes()
    resumed = list(loader.batches(epoch=1, start=4))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(resumed, got[4:], strict=True))
    loader.close()
