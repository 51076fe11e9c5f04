"""Datasets: anything with ``__len__`` and ``__getitem__``; `ArrayDataset` over NumPy arrays and the
views built on other datasets (`MappedDataset`, `ConcatDataset`, `ShuffledWindowsDataset`)."""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Dataset(Protocol):
    """What a `DataLoader` reads: ``len(dataset)`` items, ``dataset[i]`` for ``0 <= i < len``.

    Lists, tuples and `ArrayDataset` all qualify.

    Example:
        >>> isinstance([(0.0, 1), (1.0, 0)], Dataset)
        True
    """

    def __len__(self) -> int: ...

    def __getitem__(self, index: int, /) -> Any: ...


class ArrayDataset:
    """Rows of equally long NumPy arrays: item ``i`` is ``(a[i], b[i], ...)``, or ``a[i]`` for one array.

    Args:
        *arrays: arrays (or anything `numpy.asarray` takes) with the same first dimension.

    Example:
        >>> import numpy as np
        >>> ds = ArrayDataset(np.zeros((3, 2)), np.array([0, 1, 2]))
        >>> len(ds), ds[2][1]
        (3, np.int64(2))
    """

    def __init__(self, *arrays: Any) -> None:
        if not arrays:
            raise ValueError("ArrayDataset needs at least one array")
        converted = [np.asarray(a) for a in arrays]
        for position, array in enumerate(converted):
            if array.ndim == 0:
                raise ValueError(f"ArrayDataset: array {position} is a scalar; every array needs rows")
        lengths = [len(a) for a in converted]
        if len(set(lengths)) != 1:
            raise ValueError(f"ArrayDataset: arrays must have the same number of rows, got {lengths}")
        self.arrays: tuple[np.ndarray, ...] = tuple(converted)

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, index: int) -> Any:
        if not -len(self) <= index < len(self):
            raise IndexError(f"ArrayDataset index {index} out of range for {len(self)} items")
        if len(self.arrays) == 1:
            return self.arrays[0][index]
        return tuple(a[index] for a in self.arrays)

    def take(self, indices: Sequence[int] | np.ndarray) -> tuple[np.ndarray, ...]:
        """The rows at `indices`, one stacked array per column (what a batcher usually wants)."""
        index = np.asarray(indices, dtype=np.int64)
        return tuple(a[index] for a in self.arrays)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.arrays)
        return f"ArrayDataset({shapes})"


def check_dataset(dataset: Any, what: str = "dataset") -> Dataset:
    """`dataset` if it has ``__len__`` and ``__getitem__``, else a TypeError naming `what`."""
    if not isinstance(dataset, Dataset):
        raise TypeError(
            f"{what} must have __len__ and __getitem__ (a list, an ArrayDataset...), "
            f"got {type(dataset).__name__}"
        )
    return dataset


def _position(index: Any, length: int, what: str) -> int:
    """`index` as a position in ``[0, length)`` (negative ones count from the end), else IndexError."""
    try:
        position = operator.index(index)
    except TypeError:
        raise TypeError(f"{what} index must be an int, got {type(index).__name__}") from None
    if not -length <= position < length:
        raise IndexError(f"{what} index {position} out of range for {length} items")
    return position + length if position < 0 else position


class MappedDataset:
    """`fn` applied to every item of `dataset` when it is read (nothing is computed ahead).

    For a deterministic function of the item (decoding, a fixed resize); random augmentation
    belongs in the `DataLoader`'s ``transform=``, which gets a per-item random generator.

    Args:
        dataset: the source dataset.
        fn: ``fn(item) -> item``.

    Example:
        >>> ds = MappedDataset([1, 2, 3], lambda x: 10 * x)
        >>> len(ds), ds[2]
        (3, 30)
    """

    def __init__(self, dataset: Any, fn: Callable[[Any], Any]) -> None:
        self.dataset = check_dataset(dataset, "MappedDataset: dataset")
        if not callable(fn):
            raise TypeError(f"MappedDataset: fn must be callable, got {type(fn).__name__}")
        self.fn = fn

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        return self.fn(self.dataset[_position(index, len(self), "MappedDataset")])

    def __repr__(self) -> str:
        return f"MappedDataset({self.dataset!r}, {getattr(self.fn, '__name__', self.fn)!r})"


class ConcatDataset:
    """Datasets one after the other: the items of the first, then those of the second...

    Args:
        datasets: the datasets, in order (at least one).

    Example:
        >>> ds = ConcatDataset([[0, 1], [2, 3, 4]])
        >>> len(ds), ds[2], ds[-1]
        (5, 2, 4)
    """

    def __init__(self, datasets: Sequence[Any]) -> None:
        self.datasets = [check_dataset(d, f"ConcatDataset: dataset {k}") for k, d in enumerate(datasets)]
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset")
        # ends[k]: the number of items in datasets 0..k; bisect finds the dataset of an index.
        self.ends: list[int] = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.ends.append(total)

    def __len__(self) -> int:
        return self.ends[-1]

    def __getitem__(self, index: int) -> Any:
        position = _position(index, len(self), "ConcatDataset")
        k = bisect.bisect_right(self.ends, position)
        return self.datasets[k][position - (self.ends[k - 1] if k else 0)]

    def __repr__(self) -> str:
        return f"ConcatDataset({len(self.datasets)} datasets, {len(self)} items)"


class ShuffledWindowsDataset:
    """`dataset` with its items shuffled within consecutive windows of `window` items.

    Reading this view in order reads the source one window at a time, so data stored sequentially
    (a file read front to back, a memory-mapped array bigger than the page cache) is still read
    mostly sequentially while neighbouring items get mixed. Window ``w`` (items ``w * window`` to
    ``(w + 1) * window``, the last one possibly shorter) is permuted by
    ``numpy.random.default_rng([seed, w])``: the view is the same in every process and run.

    Args:
        dataset: the source dataset.
        window: items per window (1 keeps the source order).
        seed: the shuffling seed.

    Example:
        >>> ds = ShuffledWindowsDataset(list(range(6)), window=3, seed=0)
        >>> sorted(ds[i] for i in range(3)), sorted(ds[i] for i in range(3, 6))
        ([0, 1, 2], [3, 4, 5])
    """

    def __init__(self, dataset: Any, window: int, *, seed: int = 0) -> None:
        self.dataset = check_dataset(dataset, "ShuffledWindowsDataset: dataset")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"ShuffledWindowsDataset: window must be a positive int, got {window!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"ShuffledWindowsDataset: seed must be an int, got {seed!r}")
        self.window, self.seed = window, seed
        self._cached: tuple[int, np.ndarray] | None = None  # the last window's permutation

    def permutation(self, w: int) -> np.ndarray:
        """The source positions of window `w`, in the order this view serves them."""
        if self._cached is not None and self._cached[0] == w:
            return self._cached[1]
        start = w * self.window
        size = min(self.window, len(self.dataset) - start)
        order = start + np.random.default_rng([self.seed, w]).permutation(size)
        self._cached = (w, order)
        return order

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        position = _position(index, len(self), "ShuffledWindowsDataset")
        w, offset = divmod(position, self.window)
        return self.dataset[int(self.permutation(w)[offset])]

    def __repr__(self) -> str:
        return f"ShuffledWindowsDataset({self.dataset!r}, window={self.window}, seed={self.seed})"
