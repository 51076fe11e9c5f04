"""burn.data.DataLoader with transforms and workers: the same batches whatever the workers, exact
mid-epoch resume, worker errors raised in the caller with the item's index, clean shutdown."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from _loader_transforms import (
    NeedsTwoArgs,
    arrays_batcher,
    crop_flip,
    exit_on_5,
    fail_on_13,
    fail_unpicklable_on_7,
)

from burn.data import ArrayDataset, DataLoader, WorkerError

WORKERS = [(0, "process"), (1, "process"), (2, "process"), (1, "thread"), (2, "thread"), (3, "thread")]


def images(n: int = 40) -> ArrayDataset:
    rng = np.random.default_rng(0)
    return ArrayDataset(rng.integers(0, 255, size=(n, 3, 6, 6)).astype(np.uint8), np.arange(n))


def loader(num_workers: int = 0, worker_type: str = "process", transform=crop_flip, **kwargs) -> DataLoader:  # noqa: ANN001
    return DataLoader(
        images(),
        batch_size=6,
        shuffle=True,
        seed=5,
        transform=transform,
        batcher=arrays_batcher,
        num_workers=num_workers,
        worker_type=worker_type,
        **kwargs,
    )


def assert_same_batches(got: list, want: list) -> None:
    assert len(got) == len(want)
    for (gx, gy), (wx, wy) in zip(got, want, strict=True):
        assert gx.dtype == wx.dtype and np.array_equal(gx, wx) and np.array_equal(gy, wy)


def our_children() -> list:
    return [p for p in multiprocessing.active_children() if p.name.startswith("burn-data-")]


def our_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("burn-data-")]


@pytest.mark.parametrize(("num_workers", "worker_type"), WORKERS)
def test_batches_are_bit_identical_whatever_the_workers(num_workers: int, worker_type: str) -> None:
    reference = list(loader().batches(epoch=3))
    got = list(loader(num_workers, worker_type, prefetch=1 + num_workers).batches(epoch=3))
    assert_same_batches(got, reference)
    # the transform really is random per item and per epoch, and each item is served once
    assert not np.array_equal(reference[0][0], list(loader().batches(epoch=4))[0][0])
    assert sorted(np.concatenate([y for _, y in got]).tolist()) == list(range(40))
    assert our_children() == [] and our_threads() == []


def test_each_item_gets_the_generator_of_seed_epoch_and_index() -> None:
    x, y = next(loader().batches(epoch=2))
    ds = images()
    for row, index in enumerate(y.tolist()):
        want, _ = crop_flip(ds[index], np.random.default_rng([5, 2, index]))
        assert np.array_equal(x[row], want)


@pytest.mark.parametrize(("num_workers", "worker_type"), [(0, "process"), (2, "process"), (2, "thread")])
def test_resume_from_batch_k_gives_the_rest_of_the_epoch(num_workers: int, worker_type: str) -> None:
    uninterrupted = list(loader().batches(epoch=1))
    for start in (1, 4, len(uninterrupted) - 1):
        resumed = list(loader(num_workers, worker_type).batches(epoch=1, start=start))
        assert_same_batches(resumed, uninterrupted[start:])
    assert list(loader(num_workers, worker_type).batches(epoch=1, start=len(uninterrupted))) == []


def test_plain_iteration_advances_the_epoch_with_workers() -> None:
    first, second = loader(2, "thread"), loader()
    assert_same_batches(list(first), list(second.batches(epoch=0)))
    assert_same_batches(list(first), list(second.batches(epoch=1)))


@pytest.mark.parametrize(("num_workers", "worker_type"), [(0, "process"), (2, "process"), (2, "thread")])
def test_a_transform_error_is_raised_with_the_item_index(num_workers: int, worker_type: str) -> None:
    with pytest.raises(ValueError, match="item thirteen is bad") as caught:
        list(loader(num_workers, worker_type, transform=fail_on_13).batches())
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "item 13 of the dataset" in notes
    if worker_type == "process" and num_workers:
        # the worker's own traceback text, down to the line that raised
        assert "fail_on_13" in notes and "_loader_transforms.py" in notes and "worker" in notes
    assert our_children() == [] and our_threads() == []


def test_an_exception_that_does_not_unpickle_becomes_a_worker_error() -> None:
    assert NeedsTwoArgs("x", 1).args == ("x (code 1)",)
    with pytest.raises(WorkerError, match=r"item 7 .*NeedsTwoArgs: a custom failure \(code 42\)") as caught:
        list(loader(2, transform=fail_unpicklable_on_7).batches())
    assert caught.value.index == 7 and "fail_unpicklable_on_7" in caught.value.worker_traceback
    assert our_children() == []


def test_a_worker_that_dies_is_reported_and_the_others_stopped() -> None:
    with pytest.raises(WorkerError, match=r"exited unexpectedly \(exit code 3\)"):
        list(loader(2, transform=exit_on_5).batches())
    assert our_children() == []


def test_a_dataset_error_is_raised_too() -> None:
    data = DataLoader([1, 2, 3], 2, batcher=lambda items, _: items, num_workers=2, worker_type="thread")
    assert list(data.batches()) == [[1, 2], [3]]

    class Missing:
        def __len__(self) -> int:
            return 3

        def __getitem__(self, index: int) -> int:
            return {0: 10, 1: 11}[index]  # item 2 is missing

    broken = DataLoader(
        Missing(), batch_size=2, num_workers=1, worker_type="thread", batcher=lambda items, _: items
    )
    with pytest.raises(KeyError, match="2") as caught:
        list(broken.batches())
    assert "item 2 of the dataset" in "\n".join(caught.value.__notes__)


@pytest.mark.parametrize("worker_type", ["process", "thread"])
def test_breaking_out_of_the_loop_stops_the_workers(worker_type: str) -> None:
    batches = loader(2, worker_type, prefetch=3)
    for k, _ in enumerate(batches):
        assert our_children() or our_threads()
        if k == 1:
            break
    assert our_children() == [] and our_threads() == []


def test_unpicklable_transforms_need_thread_workers() -> None:
    with pytest.raises(TypeError, match="do not pickle.*worker_type='thread'"):
        list(loader(1, transform=lambda item, rng: item).batches())
    assert len(list(loader(1, "thread", transform=lambda item, rng: item).batches())) == 7


def test_the_interpreter_exits_with_an_unfinished_loop(tmp_path: Path) -> None:
    script = tmp_path / "unfinished.py"
    script.write_text(
        textwrap.dedent(
            """
            import numpy as np
            from burn.data import ArrayDataset, DataLoader

            if __name__ == "__main__":
                for kind in ("process", "thread"):
                    loader = DataLoader(ArrayDataset(np.zeros((1000, 8))), batch_size=4, num_workers=2,
                                        worker_type=kind, batcher=lambda items, device: len(items))
                    globals()["left_open_" + kind] = loader.batches()
                    assert next(globals()["left_open_" + kind]) == 4
                print("leaving")
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "leaving"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_workers": -1}, ValueError, "num_workers must be an int >= 0"),
        ({"num_workers": 1.0}, ValueError, "num_workers must be an int >= 0"),
        ({"prefetch": 0}, ValueError, "prefetch must be an int >= 1"),
        ({"worker_type": "gpu"}, ValueError, "worker_type must be 'process' or 'thread'"),
        ({"start_method": "teleport"}, ValueError, "start_method 'teleport' is not one of"),
        ({"transform": "flip"}, TypeError, "transform must be callable"),
        ({"seed": -1}, ValueError, "seed must be >= 0"),
    ],
)
def test_bad_worker_arguments(kwargs, error, match) -> None:  # noqa: ANN001
    with pytest.raises(error, match=match):
        DataLoader(list(range(10)), **kwargs)


def test_bad_epoch() -> None:
    with pytest.raises(ValueError, match="epoch must be an int >= 0"):
        next(loader().batches(epoch=-1))
