"""Page-locked host buffers (the ``"pinned_host"`` capability): staging memory uploads read
asynchronously.

A buffer is ``cupyx.empty_pinned`` memory (``cudaHostAlloc``): the GPU's copy engine reads it by
DMA, so a host-to-device copy from it is asynchronous (``cudaMemcpyAsync``) and runs at full bus
speed, where one from pageable memory is first staged by the driver and blocks the calling thread.
An upload of data inside a buffer is queued on the device's current stream (the stream every op
of the backend runs on, so later kernels see the data), and an event recorded after it on the
buffer; the writer calls `wait` (the event's ``synchronize``) before filling the buffer again.
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import cupyx
import numpy as np

from burn.backend.capabilities import HostBuffer
from burn_cuda._dtypes import BF16


class PinnedHostBuffer(HostBuffer):
    """`nbytes` of page-locked host memory, uploaded from asynchronously on device `ordinal`.

    Example:
        >>> import burn
        >>> b = burn.backend("cuda")  # doctest: +SKIP
        >>> buf = b.host_buffer(1024, b.default_device())  # doctest: +SKIP
        >>> buf.pinned  # doctest: +SKIP
        True
    """

    pinned = True

    def __init__(self, nbytes: int, ordinal: int) -> None:
        self.ordinal = ordinal
        try:
            with cp.cuda.Device(ordinal):
                memory = cupyx.empty_pinned((int(nbytes),), np.uint8)
        except cp.cuda.runtime.CUDARuntimeError as exc:
            raise MemoryError(
                f"cuda:{ordinal}: cannot allocate {nbytes} bytes of pinned host memory: {exc}"
            ) from exc
        super().__init__(nbytes, memory)

    def upload(self, array: np.ndarray) -> Any:
        """A new CuPy array on this buffer's device with `array`'s values (C-contiguous, inside
        this buffer), its copy queued on the current stream and recorded, not waited for."""
        with cp.cuda.Device(self.ordinal):
            out = cp.empty(array.shape, array.dtype)
            stream = cp.cuda.get_current_stream()
            out.set(array, stream=stream)  # cudaMemcpyAsync: pinned source, no staging
            event = cp.cuda.Event(block=False, disable_timing=True)
            event.record(stream)
        self.pending(event)
        return out

    def _wait_copy(self, copy: Any) -> None:
        copy.synchronize()

    def _copy_done(self, copy: Any) -> bool:
        return bool(copy.done)


def upload(array: np.ndarray, ordinal: int) -> Any:
    """`array` on device `ordinal`: asynchronous from a pinned buffer of that device, else
    CuPy's ordinary copy (blocking, through the driver's staging buffer)."""
    staged = HostBuffer.holding(array)
    if (
        isinstance(staged, PinnedHostBuffer)
        and staged.ordinal == ordinal
        and array.flags.c_contiguous
        and array.dtype != BF16  # CuPy before 14 has no bfloat16 arrays to copy into
    ):
        return staged.upload(array)
    with cp.cuda.Device(ordinal):
        return cp.asarray(array)
