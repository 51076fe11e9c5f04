"""Collectives on burn tensors of any backend: `all_reduce`, `broadcast`, `all_gather`,
`reduce_scatter`, `barrier`, each blocking or (``async_op=True``) returning a `CollectiveHandle`.

A tensor crosses to the engine as a flat host buffer: the backend's own array when it keeps its
data on the host (burn-ndarray: no copy), else its `to_data()`. The result is built back on the
tensor's backend and device, without a copy for host backends. A `DeviceCollectiveEngine` (NCCL)
gets the primitive device array itself of the backend it adopts (CuPy arrays of burn-cuda) and its
result is adopted as the new tensor's primitive: no host round trip. Results are plain values: a
collective is not recorded in an autodiff graph.

Before each collective, in validation mode (the default), the ranks exchange 16 integers saying
which op, reduction, dtype and shape they call it with (the leading dims, and a hash of the dtype
and every dim, so that tensors of any rank are compared in full); any difference raises
`CollectiveMismatchError` on every rank, naming each rank's call. Every wait has a timeout
(`DistributedContext.timeout`): a rank that hangs, dies or calls something else becomes a
`CollectiveTimeoutError` that says so, never a silent hang; while it waits, a rank reports the
stall on stderr every `DistributedContext.stall_report_s` seconds, naming the ranks that have not
arrived where its engine can tell.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from burn.distributed.context import DistributedContext, context
from burn.distributed.engine import REDUCE_DTYPES, DeviceCollectiveEngine, EngineOp, Request
from burn.distributed.errors import CollectiveMismatchError, CollectiveTimeoutError
from burn.errors import DTypeError, ShapeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.foundations.kind import Bool, Float, Int

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

ReduceOp = Literal["sum", "mean", "max", "min"]
"""The reductions of `all_reduce` and `reduce_scatter`."""

_OPS = ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier")
_REDUCE_OPS: tuple[ReduceOp, ...] = ("sum", "mean", "max", "min")
_DTYPES = tuple(DType)
_META = 16  # op, reduce op, dtype, root/dim, ndim, numel, signature, then the first 9 dims
_SHOWN_DIMS = _META - 7  # dims carried as they are, for the message; the signature covers every dim


class CollectiveHandle:
    """A collective started with ``async_op=True``: `wait` (or Burn's `resolve`) gives its result.

    Example:
        >>> import burn.distributed as dist
        >>> handle = dist.all_reduce(grad, "mean", async_op=True)  # doctest: +SKIP
        >>> ...  # other work while the data moves
        >>> grad = handle.wait()  # doctest: +SKIP
    """

    __slots__ = ("_ctx", "_finish", "_number", "_request", "_result", "_what")

    def __init__(
        self, ctx: DistributedContext, request: Request, finish: Callable[[], Any], what: str
    ) -> None:
        self._ctx = ctx
        self._number = ctx.collectives  # this collective's number, for the messages of a later wait
        self._request = request
        self._finish = finish
        self._what = what
        self._result: Any = None

    def is_completed(self) -> bool:
        """Whether the data has arrived (does not block)."""
        return self._result is not None or self._request.test()

    def wait(self, timeout: float | None = -1.0) -> Any:
        """Block until the collective completes and return its result (None for `barrier`).

        Args:
            timeout: seconds; default the context's timeout.

        Raises:
            CollectiveTimeoutError: it did not complete in time.
        """
        if self._result is None:
            timeout = self._ctx.timeout if timeout == -1.0 else timeout
            _wait(self._ctx, self._request, self._what, self._number, timeout)
            self._result = (self._finish(),)
        return self._result[0]

    resolve = wait

    def __repr__(self) -> str:
        return f"CollectiveHandle({self._what}, completed={self.is_completed()})"


# -- the collectives --------------------------------------------------------------------------------
@overload
def all_reduce(tensor: Tensor, op: ReduceOp = ..., *, async_op: Literal[False] = ...) -> Tensor: ...
@overload
def all_reduce(tensor: Tensor, op: ReduceOp = ..., *, async_op: Literal[True]) -> CollectiveHandle: ...
def all_reduce(tensor: Tensor, op: ReduceOp = "sum", *, async_op: bool = False) -> Tensor | CollectiveHandle:
    """The elementwise reduction of `tensor` over every rank, on every rank.

    Args:
        tensor: the same shape and dtype on every rank.
        op: ``"sum"``, ``"mean"`` (Float tensors), ``"max"`` or ``"min"``. Bool tensors: ``"sum"``
            and ``"max"`` are a logical or, ``"min"`` a logical and. float16 and bfloat16 are
            reduced in float32 and rounded once.
        async_op: return a `CollectiveHandle` at once instead of the result.

    Raises:
        CollectiveMismatchError: the ranks passed different shapes, dtypes or ops.
        CollectiveTimeoutError: another rank did not join in time.

    Example:
        >>> import burn, burn.distributed as dist
        >>> t = burn.Tensor.from_data([1.0, 2.0])  # doctest: +SKIP
        >>> dist.all_reduce(t, "sum").tolist()  # doctest: +SKIP
        [2.0, 4.0]
    """
    ctx = context()
    _check_reduce_op("all_reduce", op, tensor)
    _validate(ctx, "all_reduce", tensor, op, 0)
    buffers = _Buffers(ctx, tensor)
    send, reduce_dtype = _reduce_buffer(buffers, tensor)
    recv = buffers.xp.empty(send.size, dtype=send.dtype)
    request = ctx.engine.iall_reduce(send, recv, _engine_op(op))
    shape = tuple(tensor.shape)

    def finish() -> Tensor:
        return buffers.tensor(tensor, _finish_reduce(recv, op, ctx.world_size, reduce_dtype, tensor), shape)

    return _run(ctx, request, finish, f"all_reduce({op}) of {_describe(tensor)}", async_op)


@overload
def broadcast(tensor: Tensor, src: int = ..., *, async_op: Literal[False] = ...) -> Tensor: ...
@overload
def broadcast(tensor: Tensor, src: int = ..., *, async_op: Literal[True]) -> CollectiveHandle: ...
def broadcast(tensor: Tensor, src: int = 0, *, async_op: bool = False) -> Tensor | CollectiveHandle:
    """Rank `src`'s `tensor`, on every rank (the others pass a tensor of the same shape and dtype,
    whose values are ignored).

    Example:
        >>> import burn.distributed as dist
        >>> weights = dist.broadcast(weights, src=0)  # doctest: +SKIP
    """
    ctx = context()
    _check_rank("broadcast", src, ctx)
    _validate(ctx, "broadcast", tensor, None, src)
    buffers = _Buffers(ctx, tensor)
    if ctx.rank == src:
        buffer = buffers.flat(tensor)
        if buffers.engine is None:  # an in-place collective needs a writable host buffer
            buffer = np.array(buffer, copy=True)
        # (a device engine only reads the root's buffer: it gets the tensor's own array)
    else:
        size = int(np.prod(tensor.shape, dtype=np.int64))
        buffer = buffers.xp.empty(size, dtype=tensor.dtype.numpy)
    request = ctx.engine.ibroadcast(_as_bytes(buffer), src)
    shape = tuple(tensor.shape)
    return _run(
        ctx,
        request,
        lambda: tensor if ctx.rank == src else buffers.tensor(tensor, buffer, shape),
        f"broadcast(src={src}) of {_describe(tensor)}",
        async_op,
    )


@overload
def all_gather(tensor: Tensor, dim: int = ..., *, async_op: Literal[False] = ...) -> Tensor: ...
@overload
def all_gather(tensor: Tensor, dim: int = ..., *, async_op: Literal[True]) -> CollectiveHandle: ...
def all_gather(tensor: Tensor, dim: int = 0, *, async_op: bool = False) -> Tensor | CollectiveHandle:
    """Every rank's `tensor`, concatenated along `dim` in rank order (a rank-0 tensor gives shape
    ``(world_size,)``).

    Example:
        >>> import burn.distributed as dist
        >>> dist.all_gather(t).shape  # doctest: +SKIP
        (4, 3)
    """
    ctx = context()
    shape = tuple(tensor.shape)
    if shape:
        if not -len(shape) <= dim < len(shape):
            raise ShapeError(f"all_gather: dim {dim} is out of range for shape {shape}")
        dim %= len(shape)
    elif dim not in (0, -1):
        raise ShapeError(f"all_gather: dim {dim} is out of range for a rank-0 tensor (use 0)")
    _validate(ctx, "all_gather", tensor, None, dim)
    buffers = _Buffers(ctx, tensor)
    send = buffers.flat(tensor)
    recv = buffers.xp.empty(send.size * ctx.world_size, dtype=send.dtype)
    request = ctx.engine.iall_gather(_as_bytes(send), _as_bytes(recv))

    def finish() -> Tensor:
        pieces = recv.reshape((ctx.world_size, *shape))
        if not shape:
            return buffers.tensor(tensor, recv, (ctx.world_size,))
        if dim == 0:
            out = pieces
        else:
            out = buffers.xp.concatenate([pieces[r] for r in range(ctx.world_size)], axis=dim)
        new_shape = list(shape)
        new_shape[dim] *= ctx.world_size
        return buffers.tensor(tensor, out, tuple(new_shape))

    return _run(ctx, request, finish, f"all_gather(dim={dim}) of {_describe(tensor)}", async_op)


@overload
def reduce_scatter(tensor: Tensor, op: ReduceOp = ..., *, async_op: Literal[False] = ...) -> Tensor: ...
@overload
def reduce_scatter(tensor: Tensor, op: ReduceOp = ..., *, async_op: Literal[True]) -> CollectiveHandle: ...
def reduce_scatter(
    tensor: Tensor, op: ReduceOp = "sum", *, async_op: bool = False
) -> Tensor | CollectiveHandle:
    """Reduce `tensor` over every rank, then give rank ``r`` the ``r``-th of `world_size` equal
    slices along dim 0: ``[d0, ...] -> [d0 // world_size, ...]``. Reductions as in `all_reduce`.

    Raises:
        ShapeError: dim 0 is not a multiple of the world size.

    Example:
        >>> import burn.distributed as dist
        >>> dist.reduce_scatter(t, "sum").shape  # t: [4, 3] on 2 ranks  # doctest: +SKIP
        (2, 3)
    """
    ctx = context()
    _check_reduce_op("reduce_scatter", op, tensor)
    shape = tuple(tensor.shape)
    if not shape or shape[0] % ctx.world_size:
        raise ShapeError(
            f"reduce_scatter: dim 0 of shape {shape} must be a multiple of the world size {ctx.world_size}"
        )
    _validate(ctx, "reduce_scatter", tensor, op, 0)
    buffers = _Buffers(ctx, tensor)
    send, reduce_dtype = _reduce_buffer(buffers, tensor)
    recv = buffers.xp.empty(send.size // ctx.world_size, dtype=send.dtype)
    request = ctx.engine.ireduce_scatter(send, recv, _engine_op(op))
    out_shape = (shape[0] // ctx.world_size, *shape[1:])

    def finish() -> Tensor:
        result = _finish_reduce(recv, op, ctx.world_size, reduce_dtype, tensor)
        return buffers.tensor(tensor, result, out_shape)

    return _run(ctx, request, finish, f"reduce_scatter({op}) of {_describe(tensor)}", async_op)


@overload
def barrier(*, async_op: Literal[False] = ...) -> None: ...
@overload
def barrier(*, async_op: Literal[True]) -> CollectiveHandle: ...
def barrier(*, async_op: bool = False) -> CollectiveHandle | None:
    """Wait until every rank reaches this barrier.

    Example:
        >>> import burn.distributed as dist
        >>> dist.barrier()  # doctest: +SKIP
    """
    ctx = context()
    _validate(ctx, "barrier", None, None, 0)
    request = ctx.engine.ibarrier()
    return _run(ctx, request, lambda: None, "barrier", async_op)  # type: ignore[no-any-return]


# -- helpers -----------------------------------------------------------------------------------------
def _run(
    ctx: DistributedContext, request: Request, finish: Callable[[], Any], what: str, async_op: bool
) -> Any:
    handle = CollectiveHandle(ctx, request, finish, what)
    return handle if async_op else handle.wait()


def _wait(ctx: DistributedContext, request: Request, what: str, number: int, timeout: float | None) -> None:
    """Poll `request` until it completes; past `timeout` raise, and report the stall on the way."""
    if request.test():
        return
    start = time.monotonic()
    every = ctx.stall_report_s if ctx.world_size > 1 else None
    stall = _Stall(ctx, what, number, timeout, start, every) if every else None
    spins, delay = 0, 0.0
    while not request.test():
        spins += 1
        if spins > 64:  # then back off, so that waiting ranks leave the CPU to the others
            time.sleep(delay)
            delay = min(max(2.0 * delay, 2e-5), 1e-3)
        now = time.monotonic()
        if timeout is not None and now - start > timeout:
            raise CollectiveTimeoutError(
                f"rank {ctx.rank} of {ctx.world_size}: {what} (collective #{number}) did not "
                f"complete within the timeout of {timeout:g} s: another rank is hung, has died, or is "
                "waiting in a different collective (timeout: init(timeout=...) or BURN_DISTRIBUTED_TIMEOUT)"
            )
        if stall is not None and now >= stall.due:
            stall.step(now)


_LOG = logging.getLogger("burn.distributed")
_NAMED = 16  # ranks named in one report; past that a count (a report is one line)


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.1f}" if value < 10 else f"{value:.0f}"


class _Stall:
    """The stall reports of one long wait: at half the interval this rank tells the others it is
    waiting (`CollectiveEngine.notify_waiting`), so that from the first report on each waiting rank
    can name the ranks it has not heard from; then a warning every interval."""

    __slots__ = ("ctx", "due", "every", "notified", "number", "start", "timeout", "what")

    def __init__(
        self,
        ctx: DistributedContext,
        what: str,
        number: int,
        timeout: float | None,
        start: float,
        every: float,
    ) -> None:
        self.ctx, self.what, self.number, self.timeout = ctx, what, number, timeout
        self.start, self.every = start, every
        self.notified = False
        self.due = start + every / 2

    def step(self, now: float) -> None:
        if not self.notified:
            self.notified = True
            self.ctx.engine.notify_waiting(self.number)
            self.due = self.start + self.every
            if now < self.due:
                return
        self.due = now + self.every
        _LOG.warning(self.message(now))

    def message(self, now: float) -> str:
        ctx = self.ctx
        waited = now - self.start
        head = (
            f"burn.distributed: rank {ctx.rank} of {ctx.world_size} has waited {_seconds(waited)} s in "
            f"{self.what} (collective #{self.number})"
        )
        heard = ctx.engine.waiting_ranks()
        if heard is None:
            who = f"the {ctx.engine.name!r} engine cannot tell which ranks have not arrived"
        else:
            missing = [
                (r, heard.get(r))
                for r in range(ctx.world_size)
                if r != ctx.rank and heard.get(r, 0) < self.number
            ]
            if not missing:
                who = "every other rank says it waits in this collective or a later one"
            else:
                named = ", ".join(
                    f"rank {r} ("
                    + ("no word from it" if n is None else f"last heard waiting in collective #{n}")
                    + ")"
                    for r, n in missing[:_NAMED]
                )
                more = f" and {len(missing) - _NAMED} more" if len(missing) > _NAMED else ""
                who = f"not arrived: {named}{more}"
        left = (
            ""
            if self.timeout is None
            else f"; the timeout ends the wait in {_seconds(self.timeout - waited)} s"
        )
        return (
            f"{head}; {who}{left} (timeout: init(timeout=...) or BURN_DISTRIBUTED_TIMEOUT; these reports: "
            "init(stall_report_s=...) or BURN_DISTRIBUTED_STALL_REPORT)"
        )


def _host(tensor: Tensor) -> np.ndarray:
    """The tensor's values as a flat C-contiguous host array (the backend's own, when it has one)."""
    array = tensor.to_data().array
    return np.ascontiguousarray(array).reshape(-1)


class _Buffers:
    """Where one collective's buffers live: host NumPy arrays (a host engine), the tensor's own
    device arrays (a device engine adopting its backend), or device copies of its host values (a
    device engine and a tensor of another backend). Buffers are NumPy arrays or arrays of the
    engine's `xp`, whose methods (`reshape`, `view`, `astype`) mirror NumPy's."""

    __slots__ = ("adopt", "engine", "xp")

    def __init__(self, ctx: DistributedContext, tensor: Tensor) -> None:
        engine = ctx.engine
        self.engine = engine if isinstance(engine, DeviceCollectiveEngine) else None
        self.adopt = self.engine is not None and self.engine.adopts(_base(tensor).backend)
        self.xp: Any = self.engine.xp if self.engine is not None else np

    def flat(self, tensor: Tensor) -> Any:
        """The tensor's values as a flat C-contiguous buffer (its own memory where it can be)."""
        if self.adopt:
            return self.xp.ascontiguousarray(_base(tensor)._p).reshape(-1)
        host = _host(tensor)
        return host if self.engine is None else self.engine.to_device(host)

    def tensor(self, like: Tensor, array: Any, shape: tuple[int, ...]) -> Tensor:
        """A tensor of `like`'s backend, kind, dtype and device holding `array`."""
        if self.adopt:
            return _adopt(like, self.xp.ascontiguousarray(array).reshape(shape))
        return _result(like, array if self.engine is None else self.engine.to_host(array), shape)


def _base(tensor: Tensor) -> Tensor:
    """`tensor` on its base backend: the inner tensor of a decorator (autodiff), the same memory."""
    while tensor.backend.inner is not tensor.backend:
        tensor = tensor.inner()
    return tensor


def _adopt(like: Tensor, array: Any) -> Tensor:
    """A tensor of `like`'s backend around the base backend's primitive `array` (not copied),
    wrapped back through `like`'s decorators."""
    from burn.tensor._base import wrap
    from burn.tensor.tensor import Tensor

    decorators = []
    b = like.backend
    while b.inner is not b:
        decorators.append(b)
        b = b.inner
    out = wrap(array, b, like.kind)
    for outer in reversed(decorators):
        out = Tensor.from_inner(out, outer)
    return out


def _as_bytes(array: Any) -> Any:
    # Moves do not look at values: bytes carry every dtype (bfloat16 and bool included).
    return array.view(np.uint8)


def _reduce_buffer(buffers: _Buffers, tensor: Tensor) -> tuple[Any, np.dtype[Any]]:
    """The send buffer in a dtype engines reduce, and the dtype it stands for."""
    array = buffers.flat(tensor)
    if array.dtype in REDUCE_DTYPES:
        return array, array.dtype
    if tensor.kind is Bool:
        return array.view(np.uint8), array.dtype
    return array.astype(np.float32), array.dtype  # float16, bfloat16


def _finish_reduce(recv: Any, op: ReduceOp, world: int, dtype: np.dtype[Any], tensor: Tensor) -> Any:
    if op == "mean":
        recv /= world  # in place, on the buffer's device
    if recv.dtype == dtype:
        return recv
    if tensor.kind is Bool:
        return recv.view(np.bool_)
    return recv.astype(dtype)


def _engine_op(op: ReduceOp) -> EngineOp:
    return "sum" if op == "mean" else op


def _check_reduce_op(name: str, op: Any, tensor: Tensor) -> None:
    if op not in _REDUCE_OPS:
        raise ValueError(f"{name}: op must be one of {', '.join(map(repr, _REDUCE_OPS))}, got {op!r}")
    if op == "mean" and tensor.kind is not Float:
        raise DTypeError(
            f"{name}: op 'mean' needs a Float tensor, got {tensor.kind.name} {tensor.dtype.value} "
            f"{tuple(tensor.shape)}; reduce with 'sum' and divide"
        )
    if tensor.kind is Bool and op == "sum":
        return  # a logical or, like "max"


def _check_rank(name: str, src: Any, ctx: DistributedContext) -> None:
    if isinstance(src, bool) or not isinstance(src, int) or not 0 <= src < ctx.world_size:
        raise ValueError(f"{name}: src must be a rank in [0, {ctx.world_size}), got {src!r}")


def _result(like: Tensor, array: np.ndarray, shape: tuple[int, ...]) -> Tensor:
    """A tensor of `like`'s backend, kind, dtype and device holding `array` (adopted, not copied)."""
    from burn.tensor._base import wrap

    data = TensorData.__new__(TensorData)
    data.array = np.ascontiguousarray(array).reshape(shape)
    data.dtype = like.dtype
    b, k, device = like.backend, like.kind, like.device
    if k is Float:
        return wrap(b.float_from_data(data, device), b, Float)
    if k is Int:
        return wrap(b.int_from_data(data, device), b, Int)
    return wrap(b.bool_from_data(data, device), b, Bool)


def _describe(tensor: Tensor | None) -> str:
    return "nothing" if tensor is None else f"{tensor.dtype.value} {tuple(tensor.shape)}"


def _meta(name: str, tensor: Tensor | None, op: ReduceOp | None, root: int) -> np.ndarray:
    meta = np.zeros(_META, dtype=np.int64)
    meta[0] = _OPS.index(name) + 1
    meta[1] = 0 if op is None else _REDUCE_OPS.index(op) + 1
    meta[3] = root
    if tensor is not None:
        shape = tuple(tensor.shape)
        meta[2] = _DTYPES.index(tensor.dtype) + 1
        meta[4] = len(shape)
        meta[5] = int(np.prod(shape, dtype=np.int64))
        meta[6] = _signature(tensor.dtype, shape)
        dims = shape[:_SHOWN_DIMS]
        meta[7 : 7 + len(dims)] = dims
    return meta


def _signature(dtype: DType, shape: tuple[int, ...]) -> int:
    """A 63-bit hash of the dtype and every dim: two calls differing in any dim, the 11th as much
    as the 1st, differ here (the row carries only the first dims themselves)."""
    text = f"{dtype.value}:{','.join(map(str, shape))}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


def _explain(row: np.ndarray) -> str:
    name = _OPS[int(row[0]) - 1] if 0 < row[0] <= len(_OPS) else f"op #{int(row[0])}"
    if name == "barrier":
        return "barrier()"
    args = []
    if row[1]:
        args.append(repr(_REDUCE_OPS[int(row[1]) - 1]))
    if name == "broadcast":
        args.append(f"src={int(row[3])}")
    if name == "all_gather":
        args.append(f"dim={int(row[3])}")
    ndim = int(row[4])
    dims = tuple(int(d) for d in row[7 : 7 + min(ndim, _SHOWN_DIMS)])
    if ndim <= _SHOWN_DIMS:
        shape = str(dims)
    else:  # the dims past the first ones are known only through the signature
        leading = ", ".join(map(str, dims))
        shape = f"({leading}, ...) ({ndim} dims, {int(row[5])} elements, signature {int(row[6]):016x})"
    dtype = _DTYPES[int(row[2]) - 1].value if row[2] else "?"
    return f"{name}({', '.join(args)}) on {dtype} {shape}" if args else f"{name} on {dtype} {shape}"


def _validate(
    ctx: DistributedContext, name: str, tensor: Tensor | None, op: ReduceOp | None, root: int
) -> None:
    ctx.collectives += 1
    if not ctx.validate or ctx.world_size == 1:
        return
    mine = _meta(name, tensor, op, root)
    engine = ctx.engine
    if isinstance(engine, DeviceCollectiveEngine):  # the check goes through the engine too
        sent = engine.to_device(mine)
        gathered = engine.xp.empty(_META * ctx.world_size, dtype=np.int64)
        request = engine.iall_gather(sent, gathered)
        _wait(ctx, request, f"the check before {name} of {_describe(tensor)}", ctx.collectives, ctx.timeout)
        table = engine.to_host(gathered)
    else:
        table = np.empty(_META * ctx.world_size, dtype=np.int64)
        request = engine.iall_gather(mine, table)
        _wait(ctx, request, f"the check before {name} of {_describe(tensor)}", ctx.collectives, ctx.timeout)
    rows = table.reshape(ctx.world_size, _META)
    if (rows == rows[0]).all():
        return
    calls = "; ".join(f"rank {r}: {_explain(row)}" for r, row in enumerate(rows))
    own = ""
    if tensor is not None and len(tensor.shape) > _SHOWN_DIMS:  # the others see only its first dims
        own = f"; this rank's full shape: {tuple(tensor.shape)}"
    raise CollectiveMismatchError(
        f"collective #{ctx.collectives}: the ranks called different collectives or passed different "
        f"shapes or dtypes ({calls}){own}"
    )
