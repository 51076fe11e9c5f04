"""`HuggingFaceDataset`: a Hugging Face ``datasets.Dataset`` (Arrow tables, memory-mapped from disk,
larger than memory) as a burn dataset of NumPy items. Needs ``pip install 'burn-core[datasets]'``."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from burn.data.dataset import _position


def _datasets_module() -> Any:
    try:
        return importlib.import_module("datasets")
    except ImportError:
        raise ImportError(
            "HuggingFaceDataset needs the Hugging Face datasets library: pip install 'burn-core[datasets]'"
        ) from None


class HuggingFaceDataset:
    """The rows of a ``datasets.Dataset``, each as the tuple of its `columns` as NumPy values of the
    columns' own dtypes (a ``uint8`` ``Array3D`` column gives ``uint8`` arrays).

    Rows are read from the Arrow table one at a time (the table's NumPy format), so a dataset
    loaded from disk with ``datasets.load_dataset`` or ``load_from_disk`` is never read whole.
    With worker processes, a dataset backed by Arrow files on disk pickles as their paths.

    Args:
        dataset: a ``datasets.Dataset`` (random access; an ``IterableDataset`` has none).
        columns: the columns each item holds, in this order (default: all of them). One column
            gives items that are that column's value alone.

    Example:
        >>> import datasets  # doctest: +SKIP
        >>> hf = datasets.Dataset.from_dict({"x": [[1.0, 2.0], [3.0, 4.0]], "y": [0, 1]})  # doctest: +SKIP
        >>> ds = HuggingFaceDataset(hf, columns=["x", "y"])  # doctest: +SKIP
        >>> ds[1]  # doctest: +SKIP
        (array([3., 4.]), np.int64(1))
    """

    def __init__(self, dataset: Any, columns: Sequence[str] | None = None) -> None:
        hf = _datasets_module()
        if not isinstance(dataset, hf.Dataset):
            kind = type(dataset).__name__
            hint = (
                " (an IterableDataset has no random access; load it as a Dataset)"
                if "Iterable" in kind
                else ""
            )
            raise TypeError(f"HuggingFaceDataset: dataset must be a datasets.Dataset, got {kind}{hint}")
        available = list(dataset.column_names)
        if isinstance(columns, str):
            raise TypeError(
                f"HuggingFaceDataset: columns must be a list of names, got the string {columns!r}"
            )
        names = available if columns is None else list(columns)
        missing = [c for c in names if c not in available]
        if missing:
            raise ValueError(f"HuggingFaceDataset: no column {missing[0]!r}; the dataset has {available}")
        if not names:
            raise ValueError("HuggingFaceDataset: columns is empty")
        self.columns: tuple[str, ...] = tuple(names)
        # dtype=None: the stored dtypes (datasets' NumPy format otherwise widens every integer to
        # int64 and narrows every float to float32: 8x the memory of uint8 images, float64 lost)
        self.dataset = dataset.with_format("numpy", columns=list(names), dtype=None)

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        row = self.dataset[_position(index, len(self), "HuggingFaceDataset")]
        if len(self.columns) == 1:
            return row[self.columns[0]]
        return tuple(row[c] for c in self.columns)

    def __repr__(self) -> str:
        return f"HuggingFaceDataset({len(self)} rows, columns={list(self.columns)})"
