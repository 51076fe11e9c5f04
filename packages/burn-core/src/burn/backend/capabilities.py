"""Declared capabilities: what a backend (and each of its devices) can do."""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from burn.foundations.dtype import DType


@dataclass(frozen=True)
class Capabilities:
    """What a backend declares it supports. The conformance suite reads this and skips,
    with the capability's name as the reason, whatever is not declared.

    Attributes:
        dtypes: every element type tensors of this backend may carry.
        features: optional op families or behaviours, by name (see `FEATURES`).

    Example:
        >>> caps = Capabilities(dtypes=frozenset({DType.F32, DType.I64, DType.BOOL}))
        >>> caps.supports(DType.F64)
        False
    """

    dtypes: frozenset[DType]
    features: frozenset[str] = field(default_factory=frozenset)

    def supports(self, dtype: DType) -> bool:
        return dtype in self.dtypes

    def has(self, feature: str) -> bool:
        return feature in self.features

    @property
    def float_dtypes(self) -> tuple[DType, ...]:
        return tuple(d for d in DType if d in self.dtypes and d.is_float)

    @property
    def int_dtypes(self) -> tuple[DType, ...]:
        return tuple(d for d in DType if d in self.dtypes and d.is_int)


# Optional features a backend may declare.
FEATURES = {
    "dlpack": "tensors export and import through DLPack",
    "autodiff": "the backend records gradients (Autodiff decorator)",
    "async": "ops are queued; sync() waits for them",
    "multi_device": "more than one device may exist at once",
    "buffer_reuse": "the backend overrides the *_owned ops and may reuse a buffer it proves unshared",
    "pinned_host": (
        "page-locked host buffers (`HostBuffer`, from the backend's `host_buffer(nbytes, device)`) "
        "that the device copies from asynchronously: *_from_data of data inside one starts the copy "
        "and returns, and `HostBuffer.wait` tells when the buffer may be written again"
    ),
}


class HostBuffer:
    """Host memory a device uploads from: `array` is its bytes (1-D uint8, 64-byte aligned).

    The base class is the default of backends that do not declare ``"pinned_host"``: plain NumPy
    memory, uploads from it copied synchronously, nothing ever pending. A backend declaring
    ``"pinned_host"`` returns a subclass from ``host_buffer(nbytes, device)`` whose memory is
    page-locked; its ``*_from_data`` finds the buffer holding the data (`holding`), starts an
    asynchronous copy and records it with `pending`. Whoever writes into the buffer again calls
    `wait` first: a copy still reading the old bytes would upload the new ones.

    Attributes:
        array: the buffer's bytes; views of it (``array[o:o + n].view(dtype)``) are what gets
            uploaded.
        pinned: whether the memory is page-locked with asynchronous uploads (False here).

    Example:
        >>> buf = HostBuffer(256)
        >>> buf.array.nbytes, buf.pinned, HostBuffer.holding(buf.array[64:128]) is None
        (256, False, True)
        >>> buf.wait()  # nothing pending: returns at once
    """

    pinned = False
    _live: weakref.WeakSet[HostBuffer] = weakref.WeakSet()  # the pinned buffers alive, for `holding`
    _lock = threading.Lock()

    def __init__(self, nbytes: int, array: np.ndarray | None = None) -> None:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
            raise ValueError(f"HostBuffer: nbytes must be a positive int, got {nbytes!r}")
        if array is None:
            # 64 bytes more, to start on a cache line (and at a DMA-friendly address)
            raw = np.empty(nbytes + 64, np.uint8)
            skip = -raw.ctypes.data % 64
            array = raw[skip : skip + nbytes]
        if array.dtype != np.uint8 or array.ndim != 1 or array.nbytes < nbytes:
            got = f"{array.dtype} {array.shape}"
            raise ValueError(f"HostBuffer: array must be 1-D uint8 of >= {nbytes} bytes, got {got}")
        self.array = array[:nbytes]
        self.nbytes = nbytes
        self._pending: list[Any] = []
        start = int(self.array.ctypes.data)
        self.span = (start, start + nbytes)
        if self.pinned:
            with HostBuffer._lock:
                HostBuffer._live.add(self)

    @staticmethod
    def holding(array: np.ndarray) -> HostBuffer | None:
        """The live pinned buffer whose memory holds all of `array`, None when none does
        (the check backends' ``*_from_data`` make; cheap when no pinned buffer exists)."""
        if not HostBuffer._live or not isinstance(array, np.ndarray) or not array.nbytes:
            return None
        start = int(array.ctypes.data)
        end = start + array.nbytes
        with HostBuffer._lock:
            for buf in HostBuffer._live:
                if buf.span[0] <= start and end <= buf.span[1]:
                    return buf
        return None

    def pending(self, copy: Any) -> None:
        """Record an asynchronous copy out of this buffer (an event `_wait_copy` can wait for)."""
        self._pending.append(copy)

    def busy(self) -> bool:
        """Whether a copy out of this buffer may still be running."""
        self._pending = [c for c in self._pending if not self._copy_done(c)]
        return bool(self._pending)

    def wait(self) -> None:
        """Return once no copy out of this buffer is running (it may then be written)."""
        pending, self._pending = self._pending, []
        for copy in pending:
            self._wait_copy(copy)

    def close(self) -> None:
        """Wait for the copies, then give the memory back (the buffer is unusable after)."""
        self.wait()
        with HostBuffer._lock:
            HostBuffer._live.discard(self)

    # hooks of pinned subclasses: how their recorded copies are waited for and polled
    def _wait_copy(self, copy: Any) -> None:
        pass

    def _copy_done(self, copy: Any) -> bool:
        return True

    def __repr__(self) -> str:
        kind = "pinned" if self.pinned else "plain"
        return f"<{type(self).__name__} {kind}, {self.nbytes} bytes, {len(self._pending)} copies pending>"


def host_buffer(backend: Any, nbytes: int, device: Any) -> HostBuffer:
    """A host buffer `device` uploads from fast: page-locked where the backend (or the one a
    decorator such as autodiff wraps) declares ``"pinned_host"``, else plain NumPy memory.

    Args:
        backend: the backend of `device` (a decorator is looked through to its inner backend).
        nbytes: the buffer's size in bytes.
        device: the device the buffer's data will be uploaded to.

    Example:
        >>> import burn
        >>> b = burn.backend("ndarray")  # doctest: +SKIP
        >>> host_buffer(b, 1024, b.default_device()).pinned  # doctest: +SKIP
        False
    """
    inner = pinned_backend(backend)
    if inner is None:
        return HostBuffer(nbytes)
    buf: HostBuffer = inner.host_buffer(nbytes, device.with_owner(inner))
    return buf


def pinned_backend(backend: Any) -> Any:
    """The backend under `backend`'s decorators that declares ``"pinned_host"``, or None."""
    seen = backend
    while True:
        if seen.capabilities.has("pinned_host") and hasattr(seen, "host_buffer"):
            return seen
        # a decorator's wrapped backend (fusion's `inner` is itself: it is transparent to tensors)
        inner = getattr(seen, "_in", None) or seen.inner
        if inner is seen:
            return None
        seen = inner

