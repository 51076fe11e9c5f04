"""Data-parallel building blocks: a process group and collectives on burn tensors of any backend.

The data moves through a *collective engine*, a plugin found in the entry-point group
``burn.collectives`` (``burn-mpi``: MPI through mpi4py); a world of one process needs none.

Example:
    >>> import burn, burn.distributed as dist
    >>> ctx = dist.init()                   # under `mpiexec -n 4`: ranks 0..3   # doctest: +SKIP
    >>> t = burn.Tensor.from_data([1.0, 2.0])  # doctest: +SKIP
    >>> dist.all_reduce(t, "mean")          # the same value on every rank   # doctest: +SKIP
    >>> handle = dist.all_reduce(t, "sum", async_op=True)  # doctest: +SKIP
    >>> total = handle.wait()  # doctest: +SKIP

See ``docs/guides/distributed.md``.
"""

from burn.distributed.collectives import (
    CollectiveHandle,
    ReduceOp,
    all_gather,
    all_reduce,
    barrier,
    broadcast,
    reduce_scatter,
)
from burn.distributed.context import (
    DEFAULT_STALL_REPORT,
    DEFAULT_TIMEOUT,
    DistributedContext,
    context,
    init,
    is_initialized,
    local_rank,
    rank,
    shutdown,
    world_size,
)
from burn.distributed.engine import (
    REDUCE_DTYPES,
    CollectiveEngine,
    Completed,
    DeviceCollectiveEngine,
    EngineOp,
    Request,
)
from burn.distributed.errors import CollectiveMismatchError, CollectiveTimeoutError, DistributedError
from burn.distributed.hooks import ENGINE_ENTRY_POINT_GROUP
from burn.distributed.local import LocalEngine
from burn.distributed.registry import engines, register_engine, unregister_engine
from burn.plugins.specs import EngineSpec

__all__ = [
    "DEFAULT_STALL_REPORT",
    "DEFAULT_TIMEOUT",
    "ENGINE_ENTRY_POINT_GROUP",
    "REDUCE_DTYPES",
    "CollectiveEngine",
    "CollectiveHandle",
    "CollectiveMismatchError",
    "CollectiveTimeoutError",
    "Completed",
    "DeviceCollectiveEngine",
    "DistributedContext",
    "DistributedError",
    "EngineOp",
    "EngineSpec",
    "LocalEngine",
    "ReduceOp",
    "Request",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "context",
    "engines",
    "init",
    "is_initialized",
    "local_rank",
    "rank",
    "reduce_scatter",
    "register_engine",
    "shutdown",
    "unregister_engine",
    "world_size",
]
