"""Page-locked host buffers (the ``"pinned_host"`` capability): staging memory uploads read
asynchronously.

A buffer is an OpenCL buffer made with ``CL_MEM_ALLOC_HOST_PTR`` (the driver allocates host
memory it can DMA from: page-locked on GPU drivers) and mapped once into a NumPy array for its
whole life. An upload of data inside it is a non-blocking ``clEnqueueWriteBuffer`` from the mapped
pointer into a new device buffer: the call returns at once, the in-order queue runs every later
kernel after the copy, and the copy's event is recorded on the buffer, whose `wait` the writer
calls before filling it again (NVIDIA's OpenCL guide recommends this pattern for fast transfers;
on pocl's CPU devices it makes the copy asynchronous, run by pocl's threads).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyopencl as cl

from burn.backend.capabilities import HostBuffer
from burn_opencl.runtime import Runtime

# pyopencl's stubs type the flags' "|" as int; the call takes the flag value itself
_READ_WRITE: Any = cl.map_flags.READ | cl.map_flags.WRITE


class PinnedHostBuffer(HostBuffer):
    """`nbytes` of page-locked host memory of one OpenCL context, mapped as `array`.

    Example:
        >>> import burn
        >>> b = burn.backend("opencl")  # doctest: +SKIP
        >>> buf = b.host_buffer(1024, b.default_device())  # doctest: +SKIP
        >>> values = buf.array[:16].view(np.float32)  # doctest: +SKIP
        >>> values[:] = 1.0  # doctest: +SKIP
        >>> x = b.float_from_data(TensorData.from_numpy(values), b.default_device())  # doctest: +SKIP
        >>> buf.wait()  # the copy is done: the bytes may be written again  # doctest: +SKIP
    """

    pinned = True

    def __init__(self, rt: Runtime, nbytes: int) -> None:
        self.rt = rt
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
        try:
            self.buffer = cl.Buffer(rt.ctx, flags, size=max(int(nbytes), 8))
            with rt.lock:
                mapped, _ = cl.enqueue_map_buffer(
                    rt.queue, self.buffer, _READ_WRITE, 0, (nbytes,), np.dtype(np.uint8)
                )
        except cl.Error as exc:
            raise MemoryError(
                f"{rt.device}: cannot allocate {nbytes} bytes of pinned host memory: {exc}"
            ) from exc
        self._map = mapped.base  # pyopencl's MemoryMap: unmapped by `close`
        super().__init__(nbytes, mapped)

    def upload(self, array: np.ndarray) -> Any:
        """A new device buffer with the bytes of `array` (C-contiguous, inside this buffer), its
        copy started and recorded, not waited for."""
        buf = self.rt.alloc(array.nbytes, f"a pinned upload of shape {array.shape} {array.dtype}")
        with self.rt.lock:
            event = cl.enqueue_copy(self.rt.queue, buf, array, is_blocking=False)
        self.pending(event)
        return buf

    def _wait_copy(self, copy: Any) -> None:
        copy.wait()

    def _copy_done(self, copy: Any) -> bool:
        return bool(copy.command_execution_status == cl.command_execution_status.COMPLETE)

    def close(self) -> None:
        """Wait for the copies, then unmap (`array` must no longer be used)."""
        super().close()
        if self._map is not None:
            with self.rt.lock:
                self._map.release(self.rt.queue)
                self.rt.queue.finish()
            self._map = None


def upload(rt: Runtime, array: np.ndarray) -> Any:
    """A device buffer with `array`'s bytes: asynchronous from a pinned buffer of `rt`'s context,
    else the runtime's ordinary (blocking) upload."""
    staged = HostBuffer.holding(array)
    if isinstance(staged, PinnedHostBuffer) and staged.rt.ctx == rt.ctx and staged._map is not None:
        return staged.upload(array)
    return rt.upload(array)
