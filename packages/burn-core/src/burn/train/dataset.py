"""Moved to `burn.data.dataset`; this path keeps importing (``burn.train.dataset.X is burn.data.X``)."""

from burn.data.dataset import ArrayDataset, Dataset, check_dataset

__all__ = ["ArrayDataset", "Dataset", "check_dataset"]
