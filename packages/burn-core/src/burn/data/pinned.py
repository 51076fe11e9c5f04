"""``DataLoader(..., pin_memory=True)``: batches collated into a ring of page-locked host buffers
and uploaded from there asynchronously.

On a backend that declares ``"pinned_host"`` (burn-opencl, burn-cuda; through decorators such as
autodiff), each batch's fields are written once, already in the dtypes of the tensors they become,
into the next buffer of a small ring (`PinnedRing`), and each field's tensor is made from its view
of the buffer: the backend starts the copy to the device and returns, so the calling thread goes
on with the next batch while the copy runs. The ordinary path makes a private copy of every field
first (``Tensor.from_data`` copies, so that a later write to the caller's array cannot show
through) and, on the GPU backends, uploads from pageable memory, which blocks.

A buffer is written again only after `HostBuffer.wait`: the copies of the batch it held `depth`
batches ago are done, so no batch is ever uploaded from bytes that a later batch overwrote.
Backends without the capability get the ordinary path (pinning is about host-to-device copies;
ndarray has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.capabilities import HostBuffer, host_buffer, pinned_backend
from burn.data.transport import Collated, _fields, _is_array_field

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device
    from burn.foundations.dtype import DType
    from burn.foundations.kind import Kind

_ALIGN = 64


class PinnedRing:
    """`depth` host buffers of one device, handed out in turn, each waited for before reuse.

    A buffer too small for a batch is replaced (its copies waited for first) by one with room to
    spare, so a ring settles after the first batch.

    Example:
        >>> import burn
        >>> b = burn.backend("opencl")  # doctest: +SKIP
        >>> ring = PinnedRing(b, b.default_device(), depth=2)  # doctest: +SKIP
        >>> first, second, third = ring.take(1024), ring.take(1024), ring.take(1024)  # doctest: +SKIP
        >>> third is first  # doctest: +SKIP
        True
    """

    def __init__(self, backend: Backend, device: Device, depth: int = 2) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"PinnedRing: depth must be an int >= 1, got {depth!r}")
        self.backend, self.device, self.depth = backend, device, depth
        self.buffers: list[HostBuffer | None] = [None] * depth
        self.turn = 0

    def take(self, nbytes: int) -> HostBuffer:
        """The next buffer, of at least `nbytes`, with no copy out of it still running."""
        index = self.turn
        self.turn = (self.turn + 1) % self.depth
        buf = self.buffers[index]
        if buf is not None and buf.nbytes < nbytes:
            buf.close()
            buf = None
        if buf is None:
            # a quarter more than asked: a later batch a little larger does not remake it
            size = max(_ALIGN, nbytes + nbytes // 4)
            buf = self.buffers[index] = host_buffer(self.backend, size, self.device)
        buf.wait()
        return buf

    def close(self) -> None:
        """Wait for every copy and free the buffers."""
        for buf in self.buffers:
            if buf is not None:
                buf.close()
        self.buffers = [None] * self.depth


def pinnable(backend: Backend) -> bool:
    """Whether `backend` (or the one its decorators wrap) declares ``"pinned_host"``."""
    return pinned_backend(backend) is not None


def _kind(backend: Backend, dtype: np.dtype, field: int | None, keep: bool) -> tuple[Kind, DType]:
    """The kind and dtype `stack_batcher` gives a field of NumPy `dtype`; with `keep`, an integer
    field keeps its own dtype where the backend declares it (uint8 images for a device transform)."""
    from burn.foundations.dtype import DType
    from burn.foundations.kind import Bool, Float, Int

    if dtype == np.bool_:
        return Bool, DType.BOOL
    if np.issubdtype(dtype, np.integer):
        own = DType.from_any(dtype.name)
        return Int, own if keep and backend.capabilities.supports(own) else backend.int_dtype
    if np.issubdtype(dtype, np.floating):
        return Float, backend.float_dtype
    where = "items" if field is None else f"field {field} of the items"
    raise TypeError(f"stack_batcher: {where} have dtype {dtype}, not a number or bool")


def stage_batch(
    batch: Collated | list[Any], backend: Backend, device: Device, ring: PinnedRing, keep_first: bool = False
) -> Any:
    """The tensors `stack_batcher` makes of `batch`, through the next buffer of `ring`.

    Args:
        batch: a worker's `Collated` batch or a list of items.
        backend: the backend of `device` (the tensors' backend; a decorator is fine).
        device: where the tensors go.
        ring: the pinned buffers of `device`.
        keep_first: upload the first field in its own integer dtype when the backend has it.

    Returns:
        One tensor, or a tuple of one per field when the items are tuples.
    """
    from burn.foundations.data import TensorData
    from burn.foundations.kind import Float, Int
    from burn.tensor._base import wrap

    fields: Sequence[np.ndarray | list[Any]]
    if isinstance(batch, Collated):
        width, fields, count = batch.width, batch.fields, batch.count
    else:
        if not batch:
            raise ValueError("stack_batcher: cannot batch an empty list of items")
        split = _fields(batch)
        if split is None:
            raise ValueError(f"stack_batcher: every item must be a tuple of {len(batch[0])} fields")
        width, fields = split
        count = len(batch)
    plans: list[tuple[Sequence[Any] | np.ndarray, tuple[int, ...], Kind, DType, int]] = []
    offset = 0
    for k, values in enumerate(fields):
        if isinstance(values, np.ndarray):
            source: Sequence[Any] | np.ndarray = values
            shape, dtype = values.shape, values.dtype
        elif _is_array_field(values):  # stacked straight into the buffer below
            first = np.asarray(values[0])
            source, shape, dtype = values, (count, *first.shape), first.dtype
        else:
            source = np.stack([np.asarray(v) for v in values])  # Python numbers: as stack_batcher does
            shape, dtype = source.shape, source.dtype
        kind, target = _kind(backend, np.dtype(dtype), None if width is None else k, keep_first and k == 0)
        plans.append((source, tuple(shape), kind, target, offset))
        size = int(np.prod(shape, dtype=np.int64)) * target.numpy.itemsize
        offset += -(-size // _ALIGN) * _ALIGN
    buf = ring.take(max(offset, _ALIGN))
    tensors = []
    for source, shape, kind, target, start in plans:
        size = int(np.prod(shape, dtype=np.int64)) * target.numpy.itemsize
        view = buf.array[start : start + size].view(target.numpy).reshape(shape)
        if isinstance(source, np.ndarray):
            np.copyto(view, source, casting="unsafe")  # the conversion Tensor.from_data makes
        else:
            np.stack(source, out=view, casting="unsafe")
        data = TensorData.__new__(TensorData)
        data.array, data.dtype = view, target
        if kind is Float:
            tensors.append(wrap(backend.float_from_data(data, device), backend, Float))
        elif kind is Int:
            tensors.append(wrap(backend.int_from_data(data, device), backend, Int))
        else:
            from burn.foundations.kind import Bool

            tensors.append(wrap(backend.bool_from_data(data, device), backend, Bool))
    return tensors[0] if width is None else tuple(tensors)
