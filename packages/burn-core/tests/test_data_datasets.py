"""burn.data datasets: mapped, concatenated, shuffled in windows, the memory-mapped folder format
(round trip, atomic writes, errors, pickling as a path), and Hugging Face datasets as a source."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from _loader_transforms import arrays_batcher, crop_flip

from burn.data import (
    ArrayDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    HuggingFaceDataset,
    MappedDataset,
    MemmapDataset,
    ShuffledWindowsDataset,
    write_memmap,
)


def test_mapped_dataset_applies_the_function_per_item() -> None:
    calls = []

    def double(x: int) -> int:
        calls.append(x)
        return 2 * x

    ds = MappedDataset([1, 2, 3], double)
    assert isinstance(ds, Dataset) and len(ds) == 3 and calls == []
    assert [ds[i] for i in range(3)] == [2, 4, 6] and ds[-1] == 6 and calls == [1, 2, 3, 3]
    with pytest.raises(IndexError, match="MappedDataset index 3 out of range for 3 items"):
        ds[3]
    with pytest.raises(TypeError, match="fn must be callable"):
        MappedDataset([1], "double")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="__len__ and __getitem__"):
        MappedDataset(iter([1]), double)


def test_concat_dataset_serves_its_parts_in_order() -> None:
    ds = ConcatDataset([[0, 1], [], ArrayDataset(np.array([2, 3, 4])), (5,)])
    assert len(ds) == 6
    assert [int(ds[i]) for i in range(6)] == [0, 1, 2, 3, 4, 5]
    assert [int(ds[i]) for i in range(-6, 0)] == [0, 1, 2, 3, 4, 5]
    for bad in (6, -7):
        with pytest.raises(IndexError, match=f"ConcatDataset index {bad} out of range for 6 items"):
            ds[bad]
    with pytest.raises(TypeError, match="index must be an int"):
        ds[1.0]  # type: ignore[index]
    with pytest.raises(ValueError, match="at least one dataset"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="dataset 1"):
        ConcatDataset([[1], 5])


def test_shuffled_windows_permute_within_each_window_only() -> None:
    n, window = 23, 5
    ds = ShuffledWindowsDataset(list(range(n)), window, seed=7)
    served = [ds[i] for i in range(n)]
    assert served != list(range(n)) and sorted(served) == list(range(n))
    for start in range(0, n, window):  # each window holds exactly its own items
        assert sorted(served[start : start + window]) == list(range(start, min(start + window, n)))
    again = ShuffledWindowsDataset(list(range(n)), window, seed=7)
    assert [again[i] for i in reversed(range(n))] == served[::-1]  # random access, any order
    other = ShuffledWindowsDataset(list(range(n)), window, seed=8)
    assert [other[i] for i in range(n)] != served
    assert [ShuffledWindowsDataset(list(range(n)), 1)[i] for i in range(n)] == list(range(n))
    with pytest.raises(ValueError, match="window must be a positive int"):
        ShuffledWindowsDataset([1], 0)
    with pytest.raises(IndexError, match="out of range"):
        ds[n]


def fields(n: int = 10) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "image": rng.integers(0, 255, size=(n, 3, 4, 4)).astype(np.uint8),
        "label": np.arange(n, dtype=np.int64),
        "weight": rng.random(n).astype(np.float32),
    }


def test_memmap_round_trip_from_arrays(tmp_path: Path) -> None:
    data = fields()
    folder = write_memmap(tmp_path / "train", data)
    assert sorted(p.name for p in folder.iterdir()) == ["image.npy", "index.json", "label.npy", "weight.npy"]
    index = json.loads((folder / "index.json").read_text())
    assert index["length"] == 10 and index["fields"][0] == {
        "name": "image", "file": "image.npy", "dtype": "|u1", "shape": [3, 4, 4]
    }
    ds = MemmapDataset(folder)
    assert len(ds) == 10 and ds.fields == ("image", "label", "weight")
    for i in (0, 9, -1):
        image, label, weight = ds[i]
        assert np.array_equal(image, data["image"][i]) and image.dtype == np.uint8
        assert label == data["label"][i] and weight == data["weight"][i]
        assert type(image) is np.ndarray  # copied out of the map
    taken = ds.take([3, 1])
    assert all(np.array_equal(a, data[k][[3, 1]]) for a, k in zip(taken, data, strict=True))
    only = MemmapDataset(folder, fields=["label", "image"])
    assert only[4][0] == 4 and only[4][1].shape == (3, 4, 4)
    assert MemmapDataset(folder, fields=["label"])[5] == 5


def test_memmap_round_trip_from_a_dataset_item_by_item(tmp_path: Path) -> None:
    data = fields(7)
    source = ArrayDataset(data["image"], data["label"])
    ds = MemmapDataset(write_memmap(tmp_path / "d", source, fields=["x", "y"]))
    assert ds.fields == ("x", "y") and len(ds) == 7
    assert all(np.array_equal(ds[i][0], source[i][0]) and ds[i][1] == i for i in range(7))
    single = MemmapDataset(write_memmap(tmp_path / "s", [np.full(2, k, np.float64) for k in range(3)]))
    assert single.fields == ("field0",) and single[2].tolist() == [2.0, 2.0]


def test_memmap_pickles_as_its_path_and_feeds_worker_processes(tmp_path: Path) -> None:
    data = fields(200)
    ds = MemmapDataset(write_memmap(tmp_path / "d", {"image": data["image"], "label": data["label"]}))
    blob = pickle.dumps(ds)
    assert len(blob) < 1000 < data["image"].nbytes
    assert np.array_equal(pickle.loads(blob)[17][0], data["image"][17])
    make = lambda workers: DataLoader(  # noqa: E731
        ds, 16, shuffle=True, transform=crop_flip, batcher=arrays_batcher, num_workers=workers
    )
    for (x0, y0), (x2, y2) in zip(make(0).batches(epoch=1), make(2).batches(epoch=1), strict=True):
        assert np.array_equal(x0, x2) and np.array_equal(y0, y2)


def test_memmap_writes_are_atomic(tmp_path: Path) -> None:
    target = tmp_path / "d"
    write_memmap(target, fields(4))
    with pytest.raises(FileExistsError, match="already exists.*overwrite=True"):
        write_memmap(target, fields(5))

    class FailsAtItem3:
        def __len__(self) -> int:
            return 5

        def __getitem__(self, i: int) -> np.ndarray:
            if i == 3:
                raise OSError("disk read failed")
            return np.zeros(2)

    with pytest.raises(OSError, match="disk read failed"):
        write_memmap(target, FailsAtItem3(), overwrite=True)
    assert len(MemmapDataset(target)) == 4  # the old dataset is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]  # no staging folder left
    write_memmap(target, fields(6), overwrite=True)
    assert len(MemmapDataset(target)) == 6 and sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_memmap_write_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="same number of rows"):
        write_memmap(tmp_path / "a", {"x": np.zeros((3, 2)), "y": np.zeros(4)})
    with pytest.raises(ValueError, match="field 'x' is a scalar"):
        write_memmap(tmp_path / "a", {"x": np.float32(1)})
    with pytest.raises(ValueError, match="field 'x' of item 2 has shape \\[3\\], item 0's has \\[2\\]"):
        write_memmap(tmp_path / "a", [np.zeros(2), np.zeros(2), np.zeros(3)], fields=["x"])
    with pytest.raises(ValueError, match="2 field names for items of 1 fields"):
        write_memmap(tmp_path / "a", [np.zeros(2)], fields=["x", "y"])
    with pytest.raises(ValueError, match="cannot be a file name"):
        write_memmap(tmp_path / "a", {"../x": np.zeros(2)})
    with pytest.raises(TypeError, match="only plain numbers"):
        write_memmap(tmp_path / "a", {"x": np.array([{}, {}], dtype=object)})
    with pytest.raises(ValueError, match="dataset is empty"):
        write_memmap(tmp_path / "a", [])
    assert list(tmp_path.iterdir()) == []


def test_bad_memmap_folders_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        MemmapDataset(tmp_path / "nothing")
    with pytest.raises(FileNotFoundError, match="has no index.json"):
        MemmapDataset(tmp_path)
    folder = write_memmap(tmp_path / "d", fields(3))
    index = folder / "index.json"
    good = index.read_text()
    with pytest.raises(ValueError, match="has no field 'colour'"):
        MemmapDataset(folder, fields=["colour"])
    (folder / "label.npy").rename(folder / "moved.npy")
    with pytest.raises(FileNotFoundError, match="field 'label'.*label.npy is missing"):
        MemmapDataset(folder)
    (folder / "moved.npy").rename(folder / "label.npy")
    index.write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON"):
        MemmapDataset(folder)
    index.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="is not a burn-memmap index"):
        MemmapDataset(folder)
    index.write_text(good.replace('"length": 3', '"length": 4'))
    wrong = "field 'image'.*holds uint8\\[3, 3, 4, 4\\], the index says uint8\\[4, 3, 4, 4\\]"
    with pytest.raises(ValueError, match=wrong):
        MemmapDataset(folder)
    index.write_text(good.replace('"file": "label.npy"', '"file": "../label.npy"'))
    with pytest.raises(ValueError, match="names a file outside"):
        MemmapDataset(folder)
    index.write_text(good)
    (folder / "weight.npy").write_bytes(b"not an npy file")
    with pytest.raises(ValueError, match="field 'weight'.*is not a .npy array"):
        MemmapDataset(folder)


def test_hugging_face_datasets_as_a_source() -> None:
    datasets = pytest.importorskip("datasets", reason="the datasets library is not installed")
    rng = np.random.default_rng(2)
    pixels = rng.integers(0, 255, size=(12, 3, 4, 4)).astype(np.uint8)
    features = datasets.Features(
        {
            "image": datasets.Array3D(shape=(3, 4, 4), dtype="uint8"),
            "label": datasets.Value("int64"),
            "weight": datasets.Value("float64"),
        }
    )
    weights = rng.random(12)
    hf = datasets.Dataset.from_dict(
        {"image": pixels, "label": list(range(12)), "weight": weights.tolist()}, features=features
    )
    ds = HuggingFaceDataset(hf, columns=["image", "label"])
    assert len(ds) == 12 and ds.columns == ("image", "label")
    image, label = ds[5]
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and np.array_equal(image, pixels[5])
    assert label == 5 and ds[-1][1] == 11
    assert HuggingFaceDataset(hf, columns=["label"])[3] == 3
    weight = HuggingFaceDataset(hf, columns=["weight"])[4]
    assert weight.dtype == np.float64 and weight == weights[4]  # not narrowed to float32
    assert HuggingFaceDataset(hf).columns == ("image", "label", "weight")
    batches = list(DataLoader(ds, 5, shuffle=True, transform=crop_flip, batcher=arrays_batcher).batches())
    workers = DataLoader(
        ds, 5, shuffle=True, transform=crop_flip, batcher=arrays_batcher, num_workers=2, worker_type="thread"
    )
    for (x0, y0), (x2, y2) in zip(batches, workers.batches(), strict=True):
        assert np.array_equal(x0, x2) and np.array_equal(y0, y2)
    assert sorted(np.concatenate([y for _, y in batches]).tolist()) == list(range(12))
    with pytest.raises(ValueError, match="no column 'colour'; the dataset has \\['image', 'label', 'weight'"):
        HuggingFaceDataset(hf, columns=["colour"])
    with pytest.raises(TypeError, match="columns must be a list of names"):
        HuggingFaceDataset(hf, columns="label")
    with pytest.raises(TypeError, match="must be a datasets.Dataset, got IterableDataset.*no random access"):
        HuggingFaceDataset(hf.to_iterable_dataset())
    with pytest.raises(IndexError, match="out of range"):
        ds[12]
