"""`DataLoader`: batches of a dataset, shuffled reproducibly, items transformed (in worker threads or
processes), turned into tensors by a batcher in the calling thread."""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.data.dataset import check_dataset
from burn.data.pinned import PinnedRing, pinnable, stage_batch
from burn.data.transport import Collated
from burn.data.workers import ItemFailed, Transform, WorkerPool, load_batch

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
    return _stack_items(items, device, False)


def _stack_items(items: list[Any], device: Device | None, keep_first: bool) -> Any:
    """`stack_batcher`; with `keep_first`, the first field's integers in their own dtype."""
    if not items:
        raise ValueError("stack_batcher: cannot batch an empty list of items")
    first = items[0]
    if isinstance(first, tuple):
        width = len(first)
        for item in items:
            if not isinstance(item, tuple) or len(item) != width:
                raise ValueError(f"stack_batcher: every item must be a tuple of {width} fields, got {item!r}")
        return tuple(
            _to_tensor([item[k] for item in items], device, k, keep_first and k == 0) for k in range(width)
        )
    return _to_tensor(items, device, None, keep_first)


def _to_tensor(values: list[Any], device: Device | None, field: int | None, keep: bool = False) -> Any:
    return _array_tensor(np.stack([np.asarray(v) for v in values]), device, field, keep)


def _array_tensor(array: np.ndarray, device: Device | None, field: int | None, keep: bool = False) -> Any:
    """The tensor of a stacked field; with `keep`, an integer field in its own dtype where the
    backend declares it (uint8 images uploaded as they are, for a device transform)."""
    from burn.foundations.dtype import DType
    from burn.foundations.kind import Bool, Float, Int
    from burn.tensor._creation import resolve_backend
    from burn.tensor.tensor import Tensor

    if keep and np.issubdtype(array.dtype, np.integer):
        own = DType.from_any(array.dtype.name)
        if resolve_backend("stack_batcher", device, None)[0].capabilities.supports(own):
            return Tensor.from_data(array, device=device, dtype=own)
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


def _stack_collated(batch: Collated, device: Device | None, keep_first: bool = False) -> Any:
    """`stack_batcher` of a batch a worker already stacked field by field (the same tensors)."""
    tensors = [
        _array_tensor(f, device, k, keep_first and k == 0)
        if isinstance(f, np.ndarray)
        else _to_tensor(f, device, k, keep_first and k == 0)
        for k, f in enumerate(batch.fields)
    ]
    return tensors[0] if batch.width is None else tuple(tensors)


@dataclass
class LoaderStats:
    """Where the time of a `DataLoader` pass went, seen from the loop that consumes it.

    Attributes:
        epoch: the epoch of the pass.
        num_workers: the workers that served it (0: the calling thread read the items).
        wait_s: per batch, the seconds the calling thread waited for the batch's items: blocked
            on a worker, or, without workers, reading and transforming them itself.
        batch_s: per batch, the seconds spent turning the items into the batch in the calling
            thread (the copy out of shared memory and the batcher).
        ready: per batch, whether a worker had it done before the calling thread asked for it
            (always False without workers). A ready batch's wait is only the time to read it,
            plus whatever the OS scheduler adds on a busy machine.

    Example:
        >>> import numpy as np
        >>> from burn.data import ArrayDataset, DataLoader
        >>> loader = DataLoader(ArrayDataset(np.zeros((8, 2))), 4, batcher=lambda items, device: items)
        >>> _ = list(loader.batches())
        >>> stats = loader.stats()
        >>> len(stats.wait_s), stats.waited(skip=1) <= stats.waited()
        (2, True)
    """

    epoch: int
    num_workers: int
    wait_s: list[float] = field(default_factory=list)
    batch_s: list[float] = field(default_factory=list)
    ready: list[bool] = field(default_factory=list)

    def waited(self, skip: int = 0) -> float:
        """The seconds waited for items, over the batches after the first `skip` (the warm-up)."""
        return float(sum(self.wait_s[skip:]))

    def starved(self, skip: int = 0) -> int:
        """How many batches after the first `skip` were not ready when asked for."""
        return sum(not r for r in self.ready[skip:])

    def __repr__(self) -> str:
        n = len(self.wait_s)
        return (
            f"LoaderStats(epoch {self.epoch}, {n} batches, {self.num_workers} workers, waited "
            f"{self.waited():.3f} s, {self.starved()} not ready, batching {sum(self.batch_s):.3f} s)"
        )


def _record_wait(began_ns: int, waited_ns: int | None = None) -> float:
    """Seconds waited from `began_ns` (for `waited_ns`, else until now), recorded as a
    ``"data.wait"`` span in the profiles open in this thread."""
    from burn.profiler import record_span

    if waited_ns is None:
        waited_ns = time.perf_counter_ns() - began_ns
    record_span("data.wait", began_ns, waited_ns)
    return waited_ns / 1e9


class DataLoader:
    """Iterates a dataset in batches, optionally transforming items in worker threads or processes.

    Shuffling is reproducible and stateless: the order of epoch ``e`` depends only on
    ``(seed, e)``, so a resumed run sees exactly the batches an uninterrupted one would. The
    `transform` of item ``index`` in epoch ``e`` gets ``numpy.random.default_rng([seed, e, index])``,
    so random augmentation too is the same whatever the number of workers, and on resume. Batches
    come out in order whatever `num_workers`; the batcher always runs in the calling thread.

    Worker processes are started (by ``forkserver`` on Linux, see `burn.data.workers`) at the
    start of each pass over the data and stopped at its end, when the loop is left early
    (``break``) or when a worker fails; with ``persistent_workers=True`` they start on the first
    pass and serve every later one until `close` (or the loader's garbage collection, or the
    interpreter's exit). A worker's exception is raised again in the calling thread, with a note
    naming the item's dataset index and the worker's traceback.

    Process workers stack each batch's array fields into shared memory that the loader reuses
    (`burn.data.transport`); only a small layout goes through the pipe. `stats` tells how long the
    calling thread waited for items in the last pass, and an open `burn.profile` records each
    wait as a ``"data.wait"`` span.

    Args:
        dataset: anything with ``__len__`` and ``__getitem__`` (see `burn.data.Dataset`).
        batch_size: items per batch (the last one may be smaller unless `drop_last`).
        batcher: ``batcher(items, device) -> batch``; default `stack_batcher`.
        shuffle: a new permutation every epoch.
        seed: the seed of the shuffling and of the transforms' generators (``>= 0``).
        drop_last: skip a last batch smaller than `batch_size`.
        device: where plain iteration (``for batch in loader``) puts batches.
        transform: ``transform(item, rng) -> item``, applied to every item after reading it.
        num_workers: 0 reads and transforms items in the calling thread; N > 0 in N workers.
        worker_type: ``"process"`` (the dataset and transform must pickle) or ``"thread"`` (for
            work that releases the GIL: NumPy on large arrays, file reads, decoding).
        prefetch: batches each worker has in hand (queued or being made) ahead of the one being
            consumed; each process worker gets as many shared-memory blocks.
        persistent_workers: keep the workers (and their copy of the dataset and transform)
            between passes. Each task carries its epoch, so the batches are the same as without.
            The workers keep the dataset and transform they started with: `close` the loader
            after changing either.
        start_method: the multiprocessing start method of process workers (default: forkserver
            where available, else spawn; ``"fork"`` is faster to start and unsafe with threads).
        pin_memory: collate each batch into a ring of page-locked host buffers and upload it from
            there asynchronously, where the device's backend declares ``"pinned_host"``
            (burn-opencl, burn-cuda; see `burn.data.pinned`); elsewhere batches take the ordinary
            path. Needs the default batcher.
        device_transform: a `burn.data.transforms` pipeline of crops, flips, `ToFloat`,
            `Normalize` and their compositions (see `burn.data.device_transforms`) run as tensor
            ops on each batch's first tensor after the batcher, on the batch's device. Image
            ``index`` draws from ``numpy.random.default_rng([seed, epoch, index])``, as
            `transform` would: the batches equal those of ``transform=`` the same pipeline. With
            a `transform` as well, the device one draws from ``default_rng([seed, epoch, index,
            1])``, a stream of its own. With the default batcher, uint8 images are uploaded as
            uint8 where the backend declares it.

    Example:
        >>> import numpy as np
        >>> from burn.data import ArrayDataset, DataLoader
        >>> def flip(item, rng):
        ...     return item[::-1] if rng.random() < 0.5 else item
        >>> loader = DataLoader(ArrayDataset(np.arange(10.0).reshape(5, 2)), batch_size=2, shuffle=True,
        ...                     seed=1, transform=flip, batcher=lambda items, device: np.stack(items))
        >>> len(loader), [b.shape for b in loader.batches(epoch=0)]
        (3, [(2, 2), (2, 2), (1, 2)])
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
        transform: Transform | None = None,
        num_workers: int = 0,
        worker_type: str = "process",
        prefetch: int = 2,
        start_method: str | None = None,
        persistent_workers: bool = False,
        pin_memory: bool = False,
        device_transform: Any = None,
    ) -> None:
        self.dataset = check_dataset(dataset)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if batcher is not None and not callable(batcher):
            raise TypeError(f"DataLoader: batcher must be callable, got {type(batcher).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"DataLoader: seed must be an int, got {seed!r}")
        if seed < 0:
            raise ValueError(f"DataLoader: seed must be >= 0 (it seeds numpy.random.default_rng), got {seed}")
        if transform is not None and not callable(transform):
            raise TypeError(f"DataLoader: transform must be callable, got {type(transform).__name__}")
        for name, value, least in (("num_workers", num_workers, 0), ("prefetch", prefetch, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"DataLoader: {name} must be an int >= {least}, got {value!r}")
        if worker_type not in ("process", "thread"):
            raise ValueError(f"DataLoader: worker_type must be 'process' or 'thread', got {worker_type!r}")
        if start_method is not None:
            import multiprocessing

            if start_method not in multiprocessing.get_all_start_methods():
                raise ValueError(
                    f"DataLoader: start_method {start_method!r} is not one of this platform's "
                    f"{multiprocessing.get_all_start_methods()}"
                )
        self.batch_size = batch_size
        self.batcher: Batcher = batcher if batcher is not None else stack_batcher
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.device = device
        self.transform = transform
        self.num_workers = num_workers
        self.worker_type = worker_type
        self.prefetch = prefetch
        self.start_method = start_method
        if not isinstance(persistent_workers, bool):
            raise TypeError(f"DataLoader: persistent_workers must be a bool, got {persistent_workers!r}")
        self.persistent_workers = persistent_workers
        if not isinstance(pin_memory, bool):
            raise TypeError(f"DataLoader: pin_memory must be a bool, got {pin_memory!r}")
        if pin_memory and batcher is not None:
            raise ValueError(
                "DataLoader: pin_memory=True stages batches for the default batcher (stack_batcher); "
                "a custom batcher makes its own tensors: drop batcher= or pin_memory"
            )
        self.pin_memory = pin_memory
        if device_transform is not None:
            from burn.data.device_transforms import check_device_transform

            check_device_transform(device_transform)
        self.device_transform = device_transform
        self._rings: dict[Device, PinnedRing] = {}
        self._pool: WorkerPool | None = None
        self._closer: weakref.finalize | None = None
        self._need = 0  # bytes of a batch's array fields, learnt by the first pass's workers
        self._stats: LoaderStats | None = None
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
        (the ones before are skipped without being loaded: a mid-epoch resume gives the same
        batches, transforms included, as the uninterrupted epoch)."""
        if isinstance(epoch, bool) or not isinstance(epoch, int | np.integer) or epoch < 0:
            raise ValueError(f"DataLoader.batches: epoch must be an int >= 0, got {epoch!r}")
        target = device if device is not None else self.device
        if self.pin_memory and target is None:
            from burn.tensor._creation import resolve_backend

            target = resolve_backend("DataLoader.batches", None, None)[1]
        tasks = [[int(i) for i in indices] for indices in self.index_batches(int(epoch))[start:]]
        self._stats = stats = LoaderStats(int(epoch), self.num_workers if tasks else 0)
        if self.num_workers == 0 or not tasks:
            for indices in tasks:
                began = time.perf_counter_ns()
                items = self._items(indices, int(epoch))
                stats.wait_s.append(_record_wait(began))
                stats.ready.append(False)
                began = time.perf_counter_ns()
                batch = self._batch(items, target, indices, int(epoch))
                stats.batch_s.append((time.perf_counter_ns() - began) / 1e9)
                yield batch
        else:
            yield from self._worker_batches(tasks, int(epoch), target, stats)

    def _batch(
        self, items: Collated | list[Any], target: Device | None, indices: Sequence[int], epoch: int
    ) -> Any:
        """The batcher's batch of `items` (a `Collated` batch goes to the default batcher as it is),
        through the pinned ring with `pin_memory`, then the device transform."""
        keep = self.device_transform is not None
        ring = self._ring(target) if self.pin_memory and target is not None else None
        if ring is not None:
            assert target is not None and target.owner is not None
            batch = stage_batch(items, target.owner, target, ring, keep_first=keep)
        elif isinstance(items, Collated):
            if self.batcher is stack_batcher:
                batch = _stack_collated(items, target, keep)
            else:
                batch = self.batcher(items.items(), target)
        elif self.batcher is stack_batcher:
            batch = _stack_items(items, target, keep)
        else:
            batch = self.batcher(items, target)
        return batch if self.device_transform is None else self._on_device(batch, indices, epoch)

    def _ring(self, target: Device) -> PinnedRing | None:
        """The pinned ring of `target`, None where its backend has no pinned host buffers."""
        ring = self._rings.get(target)
        if ring is None and target not in self._rings:
            backend = target.owner
            if backend is None or not pinnable(backend):
                self._rings[target] = None  # type: ignore[assignment]
                return None
            ring = self._rings[target] = PinnedRing(backend, target, depth=self.prefetch + 1)
        return ring

    def _on_device(self, batch: Any, indices: Sequence[int], epoch: int) -> Any:
        """`device_transform` on the batch's first tensor, each image with its own generator."""
        from burn.data.device_transforms import apply_on_device

        # a stream of its own when a worker transform draws from [seed, epoch, index] already
        extra = [] if self.transform is None else [1]
        rngs = [np.random.default_rng([self.seed, epoch, index, *extra]) for index in indices]
        if isinstance(batch, tuple | list) and batch:
            return type(batch)([apply_on_device(self.device_transform, batch[0], rngs), *batch[1:]])
        return apply_on_device(self.device_transform, batch, rngs)

    def _items(self, indices: Sequence[int], epoch: int = 0) -> Collated | list[Any]:
        try:
            return load_batch(self.dataset, self.transform, self.seed, epoch, indices)
        except ItemFailed as failed:
            failed.error.add_note(f"raised while loading item {failed.index} of the dataset (epoch {epoch})")
            raise failed.error from None

    def _worker_batches(
        self, tasks: list[list[int]], epoch: int, target: Device | None, stats: LoaderStats
    ) -> Iterator[Any]:
        starting = time.perf_counter_ns()  # starting workers is waiting too: counted in batch 0's wait
        pool, owned = self._take_pool(len(tasks))
        run = pool.run(tasks, epoch)
        try:
            for (items, began, waited, ready), indices in zip(run, tasks, strict=False):
                if starting:
                    waited += began - starting
                    began, starting = starting, 0
                stats.wait_s.append(_record_wait(began, waited))
                stats.ready.append(ready)
                began = time.perf_counter_ns()
                batch = self._batch(items, target, indices, epoch)
                stats.batch_s.append((time.perf_counter_ns() - began) / 1e9)
                yield batch
        finally:  # also on break (the generator is closed) and on errors
            run.close()
            self._need = max(self._need, pool.need)
            if owned:
                pool.close()

    def _take_pool(self, count: int) -> tuple[WorkerPool, bool]:
        """The pool of this pass and whether the pass owns it (closes it at its end)."""

        def start(workers: int) -> WorkerPool:
            return WorkerPool(
                workers,
                self.dataset,
                self.transform,
                self.seed,
                worker_type=self.worker_type,
                prefetch=self.prefetch,
                start_method=self.start_method,
                need=self._need,
            )

        if not self.persistent_workers:
            return start(min(self.num_workers, count)), True
        if self._pool is not None and self._pool.closed:  # a pass failed: start afresh
            self.close()
        if self._pool is None:
            self._pool = start(self.num_workers)
            self._closer = weakref.finalize(self, WorkerPool.close, self._pool)
        if self._pool.busy:  # another pass of this loader is still open: this one gets its own
            return start(min(self.num_workers, count)), True
        return self._pool, False

    def stats(self) -> LoaderStats | None:
        """What the calling thread waited for in the last (or current) pass; None before any.

        With workers that keep up, every batch after the first few (the workers' start and first
        batches) is ready when asked for (``stats().starved(skip=k) == 0``) and
        `LoaderStats.waited` after them is near 0: the step never waits on data.
        """
        return self._stats

    def close(self) -> None:
        """Stop persistent workers and free their shared memory (a later pass starts new ones),
        and free the pinned host buffers (after their uploads)."""
        if self._closer is not None:
            self._closer()  # runs WorkerPool.close once, and no more at exit
        self._pool, self._closer = None, None
        for ring in self._rings.values():
            if ring is not None:
                ring.close()
        self._rings = {}

    def __enter__(self) -> DataLoader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        # workers belong to this process: a copy (pickled, deep-copied) starts its own
        state = dict(self.__dict__)
        state.update(_pool=None, _closer=None, _stats=None, _rings={})
        return state

    def __iter__(self) -> Iterator[Any]:
        epoch, self._epoch = self._epoch, self._epoch + 1
        return self.batches(self.device, epoch)

    def __repr__(self) -> str:
        workers = f", num_workers={self.num_workers} ({self.worker_type})" if self.num_workers else ""
        if self.num_workers and self.persistent_workers:
            workers += ", persistent"
        if self.pin_memory:
            workers += ", pin_memory"
        if self.device_transform is not None:
            workers += f", device_transform={self.device_transform!r}"
        return (
            f"DataLoader({len(self.dataset)} items, batch_size={self.batch_size}, shuffle={self.shuffle}, "
            f"drop_last={self.drop_last}, {len(self)} batches{workers})"
        )
