"""The collective-engine contract: what a plugin such as burn-mpi implements.

An engine moves **host buffers**: 1-D, C-contiguous NumPy arrays (burn-core turns tensors into
them, without a copy where the backend keeps its data on the host). Every collective is started
non-blocking and returns a `Request`; burn-core waits on it with a timeout, so that a hung rank
becomes a `CollectiveTimeoutError` rather than a hang. Reductions reach an engine only as ``"sum"``,
``"max"`` or ``"min"`` on one of `REDUCE_DTYPES` (burn-core computes ``"mean"`` from ``"sum"``,
reduces float16/bfloat16 in float32 and bools as uint8); moves (broadcast, all-gather) may see any
dtype, as bytes.

A `DeviceCollectiveEngine` (NCCL in burn-cuda) moves **device arrays** instead: burn-core hands it
the primitive arrays of the backend it adopts (CuPy arrays of burn-cuda) without a host round trip,
and stages the tensors of other backends through its `to_device` / `to_host`.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Literal, NoReturn, Protocol

import numpy as np

if TYPE_CHECKING:
    from burn.backend.base import Backend

EngineOp = Literal["sum", "max", "min"]
"""The reductions an engine implements."""

REDUCE_DTYPES: frozenset[np.dtype[Any]] = frozenset(
    np.dtype(t) for t in ("float64", "float32", "int64", "int32", "int16", "int8", "uint8")
)
"""The element types an engine reduces (MPI's and NCCL's common ground)."""


class Request(Protocol):
    """A collective in flight. `test` returns True once it completed (the buffers are then final);
    it must not block, and it is called repeatedly (it is also what drives the engine's progress)."""

    def test(self) -> bool: ...


class Completed:
    """A `Request` that is already complete (a world of one, or an engine that ran synchronously).

    Example:
        >>> Completed().test()
        True
    """

    def test(self) -> bool:
        return True


class CollectiveEngine(abc.ABC):
    """A process group's transport: rank, world size, and non-blocking collectives on host buffers.

    Subclasses set `name`, `rank`, `world_size` and `local_rank` in ``__init__`` and implement the
    five ``i*`` collectives and `abort`. Buffers are 1-D C-contiguous NumPy arrays with the same
    dtype on send and receive sides; a collective writes only into its receive buffer.

    Example:
        >>> class Solo(CollectiveEngine):
        ...     name = "solo"
        ...     def __init__(self): self.rank, self.world_size, self.local_rank = 0, 1, 0
        ...     def iall_reduce(self, send, recv, op): recv[...] = send; return Completed()
        ...     def ibroadcast(self, buffer, root): return Completed()
        ...     def iall_gather(self, send, recv): recv[...] = send; return Completed()
        ...     def ireduce_scatter(self, send, recv, op): recv[...] = send; return Completed()
        ...     def ibarrier(self): return Completed()
        ...     def abort(self, code): raise SystemExit(code)
        >>> Solo().world_size
        1
    """

    name: str = ""
    rank: int
    world_size: int
    local_rank: int

    @abc.abstractmethod
    def iall_reduce(self, send: np.ndarray, recv: np.ndarray, op: EngineOp) -> Request:
        """Start ``recv = op(send of every rank)``, elementwise; same size everywhere."""

    @abc.abstractmethod
    def ibroadcast(self, buffer: np.ndarray, root: int) -> Request:
        """Start copying `root`'s `buffer` into every other rank's `buffer` (in place)."""

    @abc.abstractmethod
    def iall_gather(self, send: np.ndarray, recv: np.ndarray) -> Request:
        """Start ``recv = concat(send of rank 0, rank 1, ...)``; ``recv.size == world_size * send.size``."""

    @abc.abstractmethod
    def ireduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: EngineOp) -> Request:
        """Start ``recv = op(send of every rank)[rank * n:(rank + 1) * n]`` with ``n = recv.size``."""

    @abc.abstractmethod
    def ibarrier(self) -> Request:
        """Start a barrier: complete once every rank has started it."""

    @abc.abstractmethod
    def abort(self, code: int) -> NoReturn:
        """End every process of the group now, with exit status `code` (``MPI_Abort``)."""

    def finalize(self) -> None:  # noqa: B027 - optional hook: most engines clean up at exit
        """Release the engine's resources (called by `burn.distributed.shutdown`)."""

    def notify_waiting(self, collective: int) -> None:  # noqa: B027 - optional: stall reports
        """Tell every other rank, without blocking, that this rank is waiting in its
        `collective`-th collective (the number `DistributedContext.collectives` had when it started).

        burn-core calls it once per wait that lasts half a stall-report interval, so that the
        waiting ranks' reports can name the ranks that have not arrived. Optional: an engine that
        keeps the default (nothing) has its stalls reported without naming ranks.
        """

    def waiting_ranks(self) -> dict[int, int] | None:
        """The other ranks' latest `notify_waiting` numbers, by rank (only those heard from), or
        None when this engine cannot tell (the default). Must not block: a stopped rank cannot
        answer."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rank={self.rank}, world_size={self.world_size})"


class DeviceCollectiveEngine(CollectiveEngine):
    """An engine whose collectives move arrays of a device backend (NCCL: CuPy arrays of burn-cuda).

    Everything `CollectiveEngine` says holds, except the buffers: they are 1-D C-contiguous arrays
    of the namespace `xp` (``cupy``) on the engine's device, which the engine makes the current
    device when it is built (so that `xp.empty` allocates there). burn-core gives a collective the
    tensor's own primitive array when `adopts` accepts the tensor's base backend (no copy, no host
    round trip; a send buffer is only read), and otherwise stages host values through `to_device`
    and `to_host`, so tensors of every backend still work. The check before each collective (16
    integers per rank) also goes through the engine, staged the same way. A request's `test` is
    typically a CUDA event recorded on the stream after the collective.

    Example:
        >>> import numpy as np
        >>> class HostArrays(DeviceCollectiveEngine):  # a device engine whose "device" is the host
        ...     name, xp = "host-arrays", np
        ...     def __init__(self): self.rank, self.world_size, self.local_rank = 0, 1, 0
        ...     def adopts(self, backend): return backend.name == "ndarray"
        ...     def to_device(self, array): return array.copy()
        ...     def to_host(self, array): return array
        ...     def iall_reduce(self, send, recv, op): recv[...] = send; return Completed()
        ...     def ibroadcast(self, buffer, root): return Completed()
        ...     def iall_gather(self, send, recv): recv[...] = send; return Completed()
        ...     def ireduce_scatter(self, send, recv, op): recv[...] = send; return Completed()
        ...     def ibarrier(self): return Completed()
        ...     def abort(self, code): raise SystemExit(code)
        >>> HostArrays().xp is np
        True
    """

    xp: Any
    """The array namespace of the buffers (``cupy``): burn-core allocates receive buffers with
    ``xp.empty`` and casts, views and joins them with the arrays' own methods."""

    @abc.abstractmethod
    def adopts(self, backend: Backend) -> bool:
        """Whether primitives of `backend` (a base backend, never a decorator such as autodiff) are
        this engine's device arrays, to be handed over as they are."""

    @abc.abstractmethod
    def to_device(self, array: np.ndarray) -> Any:
        """A copy of host `array` on the engine's device (for tensors of other backends)."""

    @abc.abstractmethod
    def to_host(self, array: Any) -> np.ndarray:
        """A host copy of device `array` (waits for the work that produces it)."""
