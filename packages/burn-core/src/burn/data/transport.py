"""How a batch travels from a worker process to the `DataLoader`: through shared memory.

Pickling a batch of 128 float32 CIFAR images (1.5 MB) through a pipe costs a pickle, two copies
through the kernel and an unpickle. Instead the main process keeps, per worker, a few reusable
`multiprocessing.shared_memory` blocks (``prefetch`` of them: one per task the worker may have in
hand). Each task names the block the worker is to fill; the worker stacks each array field of the
batch's items straight into it (``np.stack(..., out=...)``) and sends back only a layout (offsets,
shapes, dtypes, and the fields that are not arrays). The main process copies the block's bytes
into memory of its own and only then gives the block to a next task, so no batch it hands out
ever points into a block that a worker may overwrite.

A field goes through shared memory when it is a `numpy.ndarray` of the same shape and dtype in
every item of the batch (not an object dtype); the other fields (Python ints, strings, arrays of
varying shapes) are pickled with the layout. A batch whose items are neither all tuples of one
width nor all arrays, or whose arrays do not fit the block, is pickled whole.

Blocks are sized from the first batch: tasks sent before any batch came back name no block and
their batches come back pickled, with the size they need; the blocks are made from then on (and
made again, larger, when a later batch needs more). The main process creates and unlinks every
block: at the end of a pass, when the loader is closed, and on errors; the workers only attach.
`multiprocessing`'s resource tracker unlinks what a killed main process left.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Any

import numpy as np

_ALIGN = 64  # each field starts on a cache line
_names = itertools.count()


@dataclass(frozen=True)
class Slot:
    """A block a task is to fill: its index in the worker's ring, name and size in bytes."""

    index: int
    name: str
    size: int


@dataclass
class Collated:
    """A batch whose items were split into fields: ``fields[k]`` is either one stacked array (the
    field of every item, stacked) or the list of the items' values. `width` is the tuple width of
    the items, None when the items are not tuples (one field)."""

    width: int | None
    fields: list[np.ndarray | list[Any]]
    count: int
    scalars: frozenset[int] = frozenset()  # fields of NumPy scalars (labels), stacked as 1-D arrays

    def items(self) -> list[Any]:
        """The items again: an array field's value in item ``i`` is the view ``stacked[i, ...]``,
        a NumPy scalar field's the scalar ``stacked[i]``."""
        columns = [
            (list(f) if k in self.scalars else [f[i, ...] for i in range(self.count)])
            if isinstance(f, np.ndarray)
            else f
            for k, f in enumerate(self.fields)
        ]
        if self.width is None:
            return list(columns[0])
        return [tuple(row) for row in zip(*columns, strict=True)]


def _fields(items: Sequence[Any]) -> tuple[int | None, list[list[Any]]] | None:
    first = items[0]
    if isinstance(first, tuple):
        width = len(first)
        if not all(isinstance(i, tuple) and len(i) == width for i in items):
            return None
        return width, [[i[k] for i in items] for k in range(width)]
    return None, [list(items)]


def _is_array_field(values: list[Any]) -> bool:
    """Every value an array (or every one a NumPy scalar) of one shape and dtype, not objects.
    NumPy scalars (an `ArrayDataset`'s labels) go as arrays too: pickling 128 of them costs more
    than a millisecond on each side."""
    first = values[0]
    if not isinstance(first, np.ndarray | np.generic) or first.dtype.hasobject:
        return False
    if isinstance(first, np.generic):
        return all(isinstance(v, np.generic) and v.dtype == first.dtype for v in values)
    return all(
        isinstance(v, np.ndarray) and v.dtype == first.dtype and v.shape == first.shape for v in values
    )


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def pack(
    items: list[Any] | Collated, slot: Slot | None, attached: dict[int, shared_memory.SharedMemory]
) -> tuple[Any, ...]:
    """Worker side: the message for a batch of `items`, their arrays written to `slot`'s block.

    `items` is a list of items, or a `Collated` batch (fields already stacked by a batched
    transform: each stacked array is copied into the block as it is).

    Returns ``("shm", slot index, width, layout, count, bytes used)`` where each layout entry is
    ``("array" or "scalars", offset, shape, dtype)`` or ``("list", values)``, or
    ``("items", items, need)``
    (pickled whole; `need` is the bytes the array fields would take, 0 when there are none).
    `attached` caches this worker's attachments by ring index.
    """
    fields: Sequence[np.ndarray | list[Any]]
    if isinstance(items, Collated):
        width, fields = items.width, items.fields
        count = items.count
    else:
        split = _fields(items) if items else None
        if split is None:
            return ("items", items, 0)
        width, fields = split
        count = len(items)
    layout: list[tuple[Any, ...]] = []
    arrays: list[tuple[int, np.ndarray | list[np.ndarray]]] = []
    need = 0
    for k, values in enumerate(fields):
        if isinstance(values, np.ndarray):  # stacked by a batched transform
            tag = "scalars" if isinstance(items, Collated) and k in items.scalars else "array"
            layout.append((tag, need, values.shape, values.dtype))
            arrays.append((len(layout) - 1, values))
            need = _aligned(need + values.nbytes)
        elif _is_array_field(values):
            first = values[0]
            # the dtype itself, not its string: a structured dtype keeps its fields
            tag = "array" if isinstance(first, np.ndarray) else "scalars"
            layout.append((tag, need, (len(values), *first.shape), first.dtype))
            arrays.append((len(layout) - 1, values))
            need = _aligned(need + first.nbytes * len(values))
        else:
            layout.append(("list", values))
    if not arrays or slot is None or need > slot.size:
        return ("items", items, need)
    block = attached.get(slot.index)
    if block is None or block.name != slot.name:
        if block is not None:
            block.close()
        block = attached[slot.index] = attach(slot.name)
    for k, values in arrays:
        _, offset, shape, dtype = layout[k]
        out = np.ndarray(shape, np.dtype(dtype), buffer=block.buf, offset=offset)
        if isinstance(values, np.ndarray):
            np.copyto(out, values)
        else:
            np.stack(values, out=out)
        del out  # no view may outlive the write: the block's buffer must be closable
    return ("shm", slot.index, width, layout, count, need)


def attach(name: str) -> shared_memory.SharedMemory:
    """A worker's attachment to the main process's block `name` (not registered with the resource
    tracker where Python allows: the main process owns the block and unlinks it)."""
    try:
        return shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg]
    except TypeError:  # Python < 3.13: attaching registers the name too (the tracker keeps a set)
        return shared_memory.SharedMemory(name=name)


def close_attached(attached: dict[int, shared_memory.SharedMemory]) -> None:
    for block in attached.values():
        with contextlib.suppress(BufferError, OSError):
            block.close()
    attached.clear()


class SlotRing:
    """The main process's shared-memory blocks for one worker: `depth` reusable slots.

    A slot is taken for a task (`take`) and given back once its batch was copied out (`release`).
    The blocks are created lazily, with the size the pool last learnt a batch needs.
    """

    def __init__(self, worker: int, depth: int) -> None:
        self.worker = worker
        self.blocks: list[shared_memory.SharedMemory | None] = [None] * depth
        self.free = list(range(depth))

    def take(self, need: int) -> Slot | None:
        """A free slot whose block holds `need` bytes (made or remade now), None when `need` is not
        known yet (0) or no slot is free."""
        if need <= 0 or not self.free:
            return None
        index = self.free.pop()
        block = self.blocks[index]
        if block is None or block.size < need:
            if block is not None:
                _destroy(block)
            name = f"burn-data-{os.getpid()}-{self.worker}-{next(_names)}"
            block = self.blocks[index] = shared_memory.SharedMemory(name=name, create=True, size=need)
        return Slot(index, block.name, block.size)

    def release(self, slot: Slot | None) -> None:
        if slot is not None and slot.index not in self.free:
            self.free.append(slot.index)

    def unpack(self, message: tuple[Any, ...], slot: Slot | None) -> Collated | list[Any]:
        """Main side: the batch of a worker's `message` (from `pack`), copied out of its block;
        the slot is released here, whatever happens."""
        try:
            if message[0] == "items":
                items: list[Any] = message[1]
                return items
            _, index, width, layout, count, used = message
            block = self.blocks[index]
            if slot is None or index != slot.index or block is None:
                raise RuntimeError(f"DataLoader worker {self.worker} wrote to slot {index}, not its task's")
            # one copy of the used bytes into memory of our own: after it, the block is free again
            region = np.frombuffer(block.buf, np.uint8, count=used).copy()
            fields: list[np.ndarray | list[Any]] = [
                e[1] if e[0] == "list" else np.ndarray(e[2], np.dtype(e[3]), buffer=region, offset=e[1])
                for e in layout
            ]
            return Collated(
                width, fields, count, frozenset(k for k, e in enumerate(layout) if e[0] == "scalars")
            )
        finally:
            self.release(slot)

    def close(self) -> None:
        """Unlink every block (the names go at once; the memory when the last mapping closes)."""
        for block in self.blocks:
            if block is not None:
                _destroy(block)
        self.blocks = [None] * len(self.blocks)


def _destroy(block: shared_memory.SharedMemory) -> None:
    with contextlib.suppress(FileNotFoundError):
        block.unlink()
    with contextlib.suppress(BufferError, OSError):  # a view still held: the mapping goes with it
        block.close()
