"""burn.data loaders: batching, reproducible shuffling, drop_last, the default batcher; burn.train's names."""

from __future__ import annotations

import numpy as np
import pytest

from burn.data import ArrayDataset, DataLoader, Dataset, stack_batcher


def ids(items, device):  # noqa: ANN001, ANN201
    """A batcher that keeps item values, to check which items each batch holds."""
    return [int(np.asarray(item).reshape(-1)[0]) for item in items]


def test_array_dataset_items_and_errors() -> None:
    ds = ArrayDataset(np.arange(6.0).reshape(3, 2), np.array([7, 8, 9]))
    assert len(ds) == 3 and isinstance(ds, Dataset)
    x, y = ds[1]
    assert x.tolist() == [2.0, 3.0] and y == 8
    assert ArrayDataset(np.arange(3))[2] == 2
    assert [a.tolist() for a in ds.take([2, 0])] == [[[4.0, 5.0], [0.0, 1.0]], [9, 7]]
    with pytest.raises(IndexError, match="out of range"):
        ds[3]
    with pytest.raises(ValueError, match="same number of rows"):
        ArrayDataset(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="at least one array"):
        ArrayDataset()
    with pytest.raises(ValueError, match="scalar"):
        ArrayDataset(np.float32(1.0))


def test_batches_cover_the_dataset_in_order_without_shuffle() -> None:
    loader = DataLoader(list(range(10)), batch_size=4, batcher=ids)
    assert len(loader) == 3
    assert list(loader.batches()) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    dropping = DataLoader(list(range(10)), batch_size=4, batcher=ids, drop_last=True)
    assert len(dropping) == 2 and list(dropping.batches()) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_shuffle_depends_only_on_seed_and_epoch() -> None:
    a = DataLoader(list(range(50)), batch_size=8, batcher=ids, shuffle=True, seed=3)
    b = DataLoader(list(range(50)), batch_size=8, batcher=ids, shuffle=True, seed=3)
    epoch2 = list(a.batches(epoch=2))
    list(b.batches(epoch=0))  # what ran before does not matter
    assert list(b.batches(epoch=2)) == epoch2
    assert sorted(sum(epoch2, [])) == list(range(50))
    assert list(a.batches(epoch=1)) != epoch2
    other_seed = DataLoader(list(range(50)), batch_size=8, batcher=ids, shuffle=True, seed=4)
    assert list(other_seed.batches(epoch=2)) != epoch2
    # plain iteration advances the epoch
    assert list(iter(b)) == list(a.batches(epoch=0)) and list(iter(b)) == list(a.batches(epoch=1))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"batch_size": 0}, ValueError, "batch_size must be a positive int"),
        ({"batch_size": 2.0}, ValueError, "batch_size must be a positive int"),
        ({"batcher": "stack"}, TypeError, "batcher must be callable"),
        ({"seed": 1.5}, TypeError, "seed must be an int"),
        ({"batch_size": 20, "drop_last": True}, ValueError, "make no batch"),
    ],
)
def test_bad_loader_arguments(kwargs, error, match) -> None:  # noqa: ANN001
    with pytest.raises(error, match=match):
        DataLoader(list(range(10)), **kwargs)


def test_dataset_must_have_len_and_getitem() -> None:
    with pytest.raises(TypeError, match="__len__ and __getitem__"):
        DataLoader(iter(range(3)))


def test_stack_batcher_makes_float_int_and_bool_tensors() -> None:
    nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
    import burn

    device = nd.NdArray().default_device()
    x, y, m = stack_batcher([(np.ones(3), 1, True), (np.zeros(3), 2, False)], device)
    assert x.shape == (2, 3) and x.kind is burn.Float and x.dtype is burn.float32
    assert y.kind is burn.Int and y.tolist() == [1, 2]
    assert m.kind is burn.Bool and m.tolist() == [True, False]
    single = stack_batcher([np.ones(2), np.zeros(2)], device)
    assert single.shape == (2, 2)
    with pytest.raises(ValueError, match="tuple of 2 fields"):
        stack_batcher([(1.0, 2), (1.0,)], device)
    with pytest.raises(TypeError, match="not a number or bool"):
        stack_batcher(["a", "b"], device)
    with pytest.raises(ValueError, match="empty"):
        stack_batcher([], device)


def test_the_burn_train_names_are_the_burn_data_objects() -> None:
    import burn.data
    import burn.train
    import burn.train.dataset
    import burn.train.loader

    for name in ("ArrayDataset", "Dataset", "DataLoader", "stack_batcher", "Batcher"):
        assert getattr(burn.train, name) is getattr(burn.data, name)
    assert burn.train.loader.DataLoader is DataLoader and burn.train.dataset.ArrayDataset is ArrayDataset
    assert burn.train.dataset.check_dataset is burn.data.check_dataset
