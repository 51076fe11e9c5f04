"""The process group: which engine, this process's rank, the world size, the local rank.

`init()` builds it once per process from what the launcher set: an engine whose launcher started
the process (``mpiexec``: the MPI engine knows its rank and size), or ``RANK`` / ``WORLD_SIZE`` /
``LOCAL_RANK`` as torchrun sets them, or explicit arguments. With none of these the world is one
process and the built-in local engine serves it, so the same script runs alone.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from burn.distributed.engine import CollectiveEngine
from burn.distributed.errors import DistributedError
from burn.distributed.local import LocalEngine

DEFAULT_TIMEOUT = 600.0
"""Seconds a collective may wait for the other ranks before `CollectiveTimeoutError`."""
TIMEOUT_ENV = "BURN_DISTRIBUTED_TIMEOUT"
DEFAULT_STALL_REPORT = 30.0
"""Seconds between two reports (on stderr, through the ``burn.distributed`` logger) of a rank still
waiting in a collective, before the timeout ends the wait."""
STALL_REPORT_ENV = "BURN_DISTRIBUTED_STALL_REPORT"
VALIDATE_ENV = "BURN_DISTRIBUTED_VALIDATE"


@dataclass
class DistributedContext:
    """This process's place in the group (Burn's ``DistributedContext``), from `init()`.

    Attributes:
        engine: the collective engine moving the data.
        rank: this process's index, ``0 <= rank < world_size``.
        world_size: how many processes take part.
        local_rank: the index among the processes of this machine (pick a GPU with it).
        timeout: seconds a collective waits for the others (None: forever).
        validate: every collective first checks that all ranks called the same op on the same
            shape and dtype (a small all-gather of 16 integers).
        stall_report_s: while a collective waits, a warning every this many seconds on the
            ``burn.distributed`` logger (stderr unless logging is configured) saying how long it
            has waited and which ranks have not arrived (None: no reports).
        collectives: how many collectives this process has started (shown in error messages).

    Example:
        >>> from burn.distributed.local import LocalEngine
        >>> ctx = DistributedContext(LocalEngine(), 0, 1, 0, 600.0, True)
        >>> ctx.is_main
        True
    """

    engine: CollectiveEngine
    rank: int
    world_size: int
    local_rank: int
    timeout: float | None
    validate: bool
    stall_report_s: float | None = DEFAULT_STALL_REPORT
    collectives: int = field(default=0)
    previous_excepthook: Any = field(default=None, repr=False, compare=False)

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that prints, logs and writes checkpoints."""
        return self.rank == 0


_CONTEXT: DistributedContext | None = None
_LOCK = threading.RLock()


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise DistributedError(f"the environment variable {name}={raw!r} is not an integer") from None


def _env_seconds(name: str, default: float) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise DistributedError(f"{name}={raw!r} is not a number of seconds") from None
    return None if value <= 0 else value


def init(
    engine: str | CollectiveEngine | None = None,
    *,
    rank: int | None = None,
    world_size: int | None = None,
    local_rank: int | None = None,
    timeout: float | None = -1.0,
    validate: bool | None = None,
    stall_report_s: float | None = -1.0,
    abort_on_error: bool = True,
    **options: Any,
) -> DistributedContext:
    """Join the process group (once per process; later calls return the same context).

    Args:
        engine: an engine name (``"mpi"``), an engine instance, or None: the engine whose launcher
            started this process, else the local engine (a world of one).
        rank, world_size, local_rank: explicit values; default ``RANK`` / ``WORLD_SIZE`` /
            ``LOCAL_RANK`` from the environment, else what the engine reports. An explicit value
            the engine contradicts is an error.
        timeout: seconds a collective waits for the other ranks (None: no limit); the default is
            ``BURN_DISTRIBUTED_TIMEOUT``, else 600.
        validate: check before every collective that all ranks call the same op, shape and dtype
            (default True; ``BURN_DISTRIBUTED_VALIDATE=0`` turns it off).
        stall_report_s: while a collective waits, report on stderr every this many seconds how
            long it has waited and which ranks have not arrived (None or 0: never); the default
            is ``BURN_DISTRIBUTED_STALL_REPORT``, else 30.
        abort_on_error: with more than one process, an uncaught exception on any rank prints its
            traceback and aborts every rank (non-zero exit), instead of leaving the others hanging.
        options: passed to the engine's factory.

    Raises:
        DistributedError: a world of several processes and no engine launched them; an unknown or
            unusable engine; explicit values the engine contradicts.

    Example:
        >>> import burn.distributed as dist
        >>> ctx = dist.init()  # doctest: +SKIP
        >>> ctx.rank, ctx.world_size  # doctest: +SKIP
        (0, 1)
    """
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is not None:
            _check_same(_CONTEXT, engine, rank, world_size)
            return _CONTEXT
        rank = rank if rank is not None else _env_int("RANK")
        world_size = world_size if world_size is not None else _env_int("WORLD_SIZE")
        local_rank = local_rank if local_rank is not None else _env_int("LOCAL_RANK")
        built = _build_engine(engine, world_size, options)
        for what, asked, got in (("rank", rank, built.rank), ("world_size", world_size, built.world_size)):
            if asked is not None and asked != got:
                raise DistributedError(
                    f"init: {what}={asked} was asked (argument or environment) but the {built.name!r} "
                    f"engine reports {what}={got}"
                )
        if validate is None:
            validate = os.environ.get(VALIDATE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
        ctx = DistributedContext(
            built,
            built.rank,
            built.world_size,
            local_rank if local_rank is not None else built.local_rank,
            _env_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT) if timeout == -1.0 else timeout,
            validate,
            _stall_report(stall_report_s),
        )
        if abort_on_error and ctx.world_size > 1:
            _install_excepthook(ctx)
        _CONTEXT = ctx
        return ctx


def _stall_report(asked: float | None) -> float | None:
    if asked == -1.0:
        return _env_seconds(STALL_REPORT_ENV, DEFAULT_STALL_REPORT)
    if asked is not None and not asked >= 0:  # NaN too
        raise ValueError(f"init: stall_report_s must be a number of seconds >= 0 or None, got {asked!r}")
    return asked or None


def _build_engine(
    engine: str | CollectiveEngine | None, world_size: int | None, options: Any
) -> CollectiveEngine:
    from burn.distributed.registry import REGISTRY

    if isinstance(engine, CollectiveEngine):
        return engine
    if engine is not None:
        if not isinstance(engine, str):
            raise TypeError(f"init: engine must be a name or a CollectiveEngine, got {type(engine).__name__}")
        if engine == LocalEngine.name:
            return LocalEngine()
        return _built(REGISTRY.find(engine), options)
    entry = REGISTRY.launched()
    if entry is not None:
        return _built(entry, options)
    if world_size is not None and world_size > 1:
        installed = ", ".join(e.name for e in REGISTRY.engines(strict=False) if e.available) or "none"
        raise DistributedError(
            f"init: a world of {world_size} processes was asked (WORLD_SIZE or world_size=), but no "
            f"collective engine launched this process (installed engines: {installed}). Start the "
            "script with the engine's launcher (`mpiexec -n N python script.py`, or `burn launch -n N "
            "script.py`), or pass engine=NAME."
        )
    return LocalEngine()


def _built(entry: Any, options: Any) -> CollectiveEngine:
    engine = entry.spec.factory(**options)
    if not isinstance(engine, CollectiveEngine):
        raise DistributedError(
            f"the factory of {entry.label} returned {type(engine).__name__}, not a "
            "burn.distributed.CollectiveEngine"
        )
    return engine


def _check_same(ctx: DistributedContext, engine: Any, rank: int | None, world_size: int | None) -> None:
    name = engine.name if isinstance(engine, CollectiveEngine) else engine
    if (
        (name is not None and name != ctx.engine.name)
        or (rank is not None and rank != ctx.rank)
        or (world_size is not None and world_size != ctx.world_size)
    ):
        raise DistributedError(
            f"init: already initialized as rank {ctx.rank} of {ctx.world_size} on the "
            f"{ctx.engine.name!r} engine; call shutdown() first to join another group"
        )


def _install_excepthook(ctx: DistributedContext) -> None:
    previous = sys.excepthook

    def abort_every_rank(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        # Print this rank's error first: the abort kills the other ranks, and its traceback is
        # what the user needs to see among their output.
        print(
            f"burn.distributed: rank {ctx.rank} of {ctx.world_size} raised an uncaught exception; "
            "aborting every rank:",
            file=sys.stderr,
        )
        previous(exc_type, exc, tb)
        sys.stdout.flush()
        sys.stderr.flush()
        # mpiexec forwards output through its proxies; an immediate abort can drop what this rank
        # just printed (seen in CI: the error cut after its first line), so give it a moment
        time.sleep(0.5)
        ctx.engine.abort(1)

    sys.excepthook = abort_every_rank
    ctx.previous_excepthook = previous


def is_initialized() -> bool:
    """Whether `init()` ran in this process.

    Example:
        >>> isinstance(is_initialized(), bool)
        True
    """
    return _CONTEXT is not None


def context() -> DistributedContext:
    """The process group, joined with `init()`'s defaults if no `init()` ran yet."""
    ctx = _CONTEXT
    return ctx if ctx is not None else init()


def rank() -> int:
    """This process's rank (0 in a world of one).

    Example:
        >>> import burn.distributed as dist
        >>> dist.rank()  # doctest: +SKIP
        0
    """
    return context().rank


def world_size() -> int:
    """How many processes take part (1 when the script runs alone).

    Example:
        >>> import burn.distributed as dist
        >>> dist.world_size()  # doctest: +SKIP
        1
    """
    return context().world_size


def local_rank() -> int:
    """This process's index among the processes of its machine (use it to pick a device).

    Example:
        >>> import burn.distributed as dist
        >>> dist.local_rank()  # doctest: +SKIP
        0
    """
    return context().local_rank


def shutdown() -> None:
    """Leave the process group: finalize the engine and forget the context (tests, notebooks).

    Example:
        >>> import burn.distributed as dist
        >>> dist.shutdown()  # doctest: +SKIP
    """
    global _CONTEXT
    with _LOCK:
        ctx, _CONTEXT = _CONTEXT, None
        if ctx is None:
            return
        previous = ctx.previous_excepthook
        if previous is not None and sys.excepthook is not previous:
            sys.excepthook = previous
        ctx.engine.finalize()
