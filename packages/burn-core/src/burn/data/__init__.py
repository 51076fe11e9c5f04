"""Data: datasets (in memory, mapped, concatenated, shuffled in windows, memory-mapped on disk,
Hugging Face ``datasets``) and the `DataLoader`, which batches them, transforms items with a per-item
random generator (in worker threads or processes) and turns batches into tensors; `transforms` holds
the image and sequence transforms.

Example:
    >>> import numpy as np
    >>> from burn.data import ArrayDataset, DataLoader
    >>> loader = DataLoader(ArrayDataset(np.zeros((10, 4)), np.arange(10)), batch_size=4, shuffle=True)
    >>> len(loader)
    3

See ``docs/guides/data.md`` and ``docs/guides/transforms.md``.
"""

from burn.data import transforms
from burn.data.dataset import (
    ArrayDataset,
    ConcatDataset,
    Dataset,
    MappedDataset,
    ShuffledWindowsDataset,
    check_dataset,
)
from burn.data.huggingface import HuggingFaceDataset
from burn.data.loader import Batcher, DataLoader, LoaderStats, stack_batcher
from burn.data.memmap import MemmapDataset, write_memmap
from burn.data.workers import Transform, WorkerError

__all__ = [
    "ArrayDataset",
    "Batcher",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "HuggingFaceDataset",
    "LoaderStats",
    "MappedDataset",
    "MemmapDataset",
    "ShuffledWindowsDataset",
    "Transform",
    "WorkerError",
    "check_dataset",
    "stack_batcher",
    "transforms",
    "write_memmap",
]
