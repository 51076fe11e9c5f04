"""Datasets: anything with ``__len__`` and ``__getitem__``, plus `ArrayDataset` over NumPy arrays."""

from __future__ import annotations

from collections.abc import Sequence
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
