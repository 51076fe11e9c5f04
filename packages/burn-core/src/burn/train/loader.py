"""`DataLoader`: batches of a dataset, shuffled reproducibly, turned into tensors by a batcher."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.train.dataset import check_dataset

if TYPE_CHECKING:
    from burn.backend.device import Device

Batcher = Callable[[list[Any], "Device | None"], Any]
"""Turns a list of dataset items into a batch (usually tensors) on a device."""


def stack_batcher(items: list[Any], device: Device | None) -> Any:
    """The default batcher: stacks items field by field into tensors on `device`.

    Items that are tuples give a tuple of tensors (one per field), other items one tensor.
    Float fields become Float tensors (in the backend's float dtype), integer fields Int tensors,
    bool fields Bool tensors.

    Example:
        >>> import burn, numpy as np
        >>> device = burn.backend("ndarray").default_device()  # doctest: +SKIP
        >>> x, y = stack_batcher([(np.ones(2), 1), (np.zeros(2), 0)], device)  # doctest: +SKIP
        >>> x.shape, y.kind  # doctest: +SKIP
        ((2, 2), burn.Int)
    """
    if not items:
        raise ValueError("stack_batcher: cannot batch an empty list of items")
    first = items[0]
    if isinstance(first, tuple):
        width = len(first)
        for item in items:
            if not isinstance(item, tuple) or len(item) != width:
                raise ValueError(f"stack_batcher: every item must be a tuple of {width} fields, got {item!r}")
        return tuple(_to_tensor([item[k] for item in items], device, k) for k in range(width))
    return _to_tensor(items, device, None)


def _to_tensor(values: list[Any], device: Device | None, field: int | None) -> Any:
    from burn.foundations.kind import Bool, Float, Int
    from burn.tensor.tensor import Tensor

    array = np.stack([np.asarray(v) for v in values])
    if array.dtype == np.bool_:
        kind = Bool
    elif np.issubdtype(array.dtype, np.integer):
        kind = Int
    elif np.issubdtype(array.dtype, np.floating):
        kind = Float
    else:
        where = "items" if field is None else f"field {field} of the items"
        raise TypeError(f"stack_batcher: {where} have dtype {array.dtype}, not a number or bool")
    return Tensor.from_data(array, device=device, kind=kind)


class DataLoader:
    """Iterates a dataset in batches.

    Shuffling is reproducible and stateless: the order of epoch ``e`` depends only on
    ``(seed, e)``, so a resumed run sees exactly the batches an uninterrupted one would.

    Args:
        dataset: anything with ``__len__`` and ``__getitem__`` (see `burn.train.Dataset`).
        batch_size: items per batch (the last one may be smaller unless `drop_last`).
        batcher: ``batcher(items, device) -> batch``; default `stack_batcher`.
        shuffle: a new permutation every epoch.
        seed: the shuffling seed.
        drop_last: skip a last batch smaller than `batch_size`.
        device: where plain iteration (``for batch in loader``) puts batches.

    Example:
        >>> import numpy as np
        >>> from burn.train import ArrayDataset, DataLoader
        >>> loader = DataLoader(ArrayDataset(np.arange(5.0)), batch_size=2, shuffle=True, seed=1,
        ...                     batcher=lambda items, device: [float(i) for i in items])
        >>> len(loader), sorted(sum(loader.batches(epoch=0), []))
        (3, [0.0, 1.0, 2.0, 3.0, 4.0])
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int = 32,
        *,
        batcher: Batcher | None = None,
        shuffle: bool = False,
        seed: int = 0,
        drop_last: bool = False,
        device: Device | None = None,
    ) -> None:
        self.dataset = check_dataset(dataset)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if batcher is not None and not callable(batcher):
            raise TypeError(f"DataLoader: batcher must be callable, got {type(batcher).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"DataLoader: seed must be an int, got {seed!r}")
        self.batch_size = batch_size
        self.batcher: Batcher = batcher if batcher is not None else stack_batcher
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.device = device
        self._epoch = 0  # advanced by plain iteration only
        if len(self) == 0:
            raise ValueError(
                f"DataLoader: {len(self.dataset)} items make no batch of {batch_size}"
                + (" with drop_last=True" if drop_last else "")
            )

    def __len__(self) -> int:
        """The number of batches per epoch."""
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    @property
    def num_items(self) -> int:
        return len(self.dataset)

    def order(self, epoch: int = 0) -> np.ndarray:
        """The item indices of `epoch`, in the order they are served."""
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        # Seeding with (seed, epoch) makes each epoch's order independent of what ran before.
        return np.random.default_rng([self.seed, epoch]).permutation(n)

    def index_batches(self, epoch: int = 0) -> list[np.ndarray]:
        """The indices of every batch of `epoch`."""
        order = self.order(epoch)
        return [
            order[i : i + self.batch_size] for i in range(0, self.batch_size * len(self), self.batch_size)
        ]

    def batches(self, device: Device | None = None, epoch: int = 0, start: int = 0) -> Iterator[Any]:
        """The batches of `epoch` on `device` (default: the loader's device), from batch `start`
        (the ones before are skipped without being loaded: a mid-epoch resume)."""
        target = device if device is not None else self.device
        for indices in self.index_batches(epoch)[start:]:
            yield self.batcher(self._items(indices), target)

    def _items(self, indices: Sequence[int] | np.ndarray) -> list[Any]:
        return [self.dataset[int(i)] for i in indices]

    def __iter__(self) -> Iterator[Any]:
        epoch, self._epoch = self._epoch, self._epoch + 1
        return self.batches(self.device, epoch)

    def __repr__(self) -> str:
        return (
            f"DataLoader({len(self.dataset)} items, batch_size={self.batch_size}, shuffle={self.shuffle}, "
            f"drop_last={self.drop_last}, {len(self)} batches)"
        )
