"""`NcclEngine`: burn's collectives on NCCL (CuPy's ``cupy.cuda.nccl``), on the GPU arrays of
burn-cuda, with no host round trip.

One process per GPU: rank ``r`` of a machine drives GPU ``local_rank`` (made the current CuPy
device). The NCCL communicator is bootstrapped through MPI (burn-mpi): rank 0 draws NCCL's unique
id and MPI broadcasts it, so the job is started with ``mpiexec -n N`` like any burn-mpi job, and
``dist.init("nccl")`` selects this engine (under ``mpiexec`` alone, ``init()`` picks ``mpi``).

Each collective is queued on the current CuPy stream of the device (the stream burn-cuda queues its
kernels on, so it runs after the ops that produce its input and before those that read its
output); its request is a CUDA event recorded after it, whose ``done`` is `test`. NCCL has no
int16 type: int16 reductions run in int32 and are cast back (the same wrapped sum).

Example:
    >>> import burn, burn.distributed as dist  # mpiexec -n 2 python train.py, on 2 GPUs
    >>> ctx = dist.init("nccl")  # doctest: +SKIP
    >>> B = burn.backend("cuda")  # doctest: +SKIP
    >>> t = burn.Tensor.ones((4,), device=B.devices()[ctx.local_rank])  # doctest: +SKIP
    >>> dist.all_reduce(t, "sum").tolist()  # doctest: +SKIP
    [2.0, 2.0, 2.0, 2.0]
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from burn.backend.base import Backend
from burn.backend.xp.dtypes import BF16
from burn.distributed.engine import DeviceCollectiveEngine, EngineOp
from burn.distributed.errors import DistributedError

INSTALL = "pip install 'burn-cuda[nccl]' (burn-mpi with mpi4py and MPICH from wheels)"


class _Pending:
    """A collective queued on a stream: done when the event recorded after it has completed. Holds
    the buffers (and the staging copies) until then, and reports NCCL's asynchronous errors."""

    __slots__ = ("_buffers", "_comm", "_event")

    def __init__(self, event: Any, comm: Any, *buffers: Any) -> None:
        self._event = event
        self._comm = comm
        self._buffers: tuple[Any, ...] | None = buffers

    def test(self) -> bool:
        if self._buffers is None:
            return True
        if self._event.done:
            self._buffers = None
            return True
        try:  # a peer that failed shows here (instead of a wait until the timeout)
            self._comm.check_async_error()
        except Exception as exc:
            raise DistributedError(f"NCCL reported an error during a collective: {exc}") from exc
        return False


class NcclEngine(DeviceCollectiveEngine):
    """The ``nccl`` engine: rank, world size and local rank from MPI (burn-mpi's engine), one GPU
    per local rank, collectives by NCCL on CuPy arrays.

    Args:
        comm: the MPI communicator to bootstrap from (default ``MPI.COMM_WORLD``).
        device: the GPU index to use (default: the local rank).

    Raises:
        DistributedError: burn-mpi or mpi4py missing, CuPy without NCCL, fewer GPUs than ranks on
            this machine, or NCCL failing to build the communicator.

    Example:
        >>> import burn.distributed as dist
        >>> ctx = dist.init("nccl")  # under mpiexec -n 2, on a machine with 2 GPUs  # doctest: +SKIP
    """

    name = "nccl"

    def __init__(self, comm: Any = None, device: int | None = None) -> None:
        try:
            from burn_mpi.engine import MpiEngine
        except ImportError as exc:
            raise DistributedError(
                f"the nccl engine starts its communicator through MPI and needs burn-mpi: {INSTALL}"
            ) from exc
        import cupy
        from cupy.cuda import nccl

        if not nccl.available:
            raise DistributedError(
                "CuPy cannot load the NCCL library: pip install nvidia-nccl-cu12 (or -cu13, matching "
                "your CuPy wheel), or install NCCL from NVIDIA"
            )
        self._cupy, self._nccl = cupy, nccl
        self._mpi = MpiEngine(comm)  # duplicates the communicator; gives rank and local rank
        self.rank, self.world_size = self._mpi.rank, self._mpi.world_size
        self.local_rank = self._mpi.local_rank
        count = int(cupy.cuda.runtime.getDeviceCount())
        self.device_id = self.local_rank if device is None else device
        if not 0 <= self.device_id < count:
            raise DistributedError(
                f"rank {self.rank}: the nccl engine needs one GPU per process of a machine, but local "
                f"rank {self.local_rank} would use GPU {self.device_id} and this machine has {count}; "
                "start at most that many processes per machine"
            )
        # The engine's GPU becomes the current device, as torch.cuda.set_device does: CuPy then
        # allocates the receive buffers there.
        self.device = cupy.cuda.Device(self.device_id)
        self.device.use()
        self.xp = cupy
        unique_id = nccl.get_unique_id() if self.rank == 0 else None
        unique_id = self._mpi.comm.bcast(unique_id, root=0)
        try:
            self.comm = nccl.NcclCommunicator(self.world_size, unique_id, self.rank)
        except Exception as exc:
            raise DistributedError(
                f"rank {self.rank}: NCCL could not build its communicator on GPU {self.device_id} "
                f"({type(exc).__name__}: {exc}); several ranks on one GPU are not allowed"
            ) from exc
        self._ops = {"sum": nccl.NCCL_SUM, "max": nccl.NCCL_MAX, "min": nccl.NCCL_MIN}
        self._types = {
            np.dtype(np.float64): nccl.NCCL_FLOAT64,
            np.dtype(np.float32): nccl.NCCL_FLOAT32,
            np.dtype(np.float16): nccl.NCCL_FLOAT16,
            np.dtype(np.int64): nccl.NCCL_INT64,
            np.dtype(np.int32): nccl.NCCL_INT32,
            np.dtype(np.int8): nccl.NCCL_INT8,
            np.dtype(np.uint8): nccl.NCCL_UINT8,
        }
        if hasattr(nccl, "NCCL_BFLOAT16"):
            self._types[np.dtype(BF16)] = nccl.NCCL_BFLOAT16
        self._one = cupy.zeros(1, dtype=np.float32)  # the barrier's all-reduce

    # -- the contract's device hooks ---------------------------------------------------------------
    def adopts(self, backend: Backend) -> bool:
        from burn_cuda.backend import Cuda

        return isinstance(backend, Cuda)

    def to_device(self, array: np.ndarray) -> Any:
        with self.device:
            return self._cupy.asarray(array)

    def to_host(self, array: Any) -> np.ndarray:
        return array.get()  # type: ignore[no-any-return]

    # -- collectives -------------------------------------------------------------------------------
    def iall_reduce(self, send: Any, recv: Any, op: EngineOp) -> _Pending:
        return self._reduce("all_reduce", send, recv, op)

    def ireduce_scatter(self, send: Any, recv: Any, op: EngineOp) -> _Pending:
        return self._reduce("reduce_scatter", send, recv, op)

    def ibroadcast(self, buffer: Any, root: int) -> _Pending:
        self._check("broadcast", buffer)
        with self.device:
            stream = self._cupy.cuda.get_current_stream()
            ptr = buffer.data.ptr  # in place: NCCL allows the same send and receive buffer
            self.comm.broadcast(ptr, ptr, buffer.nbytes, self._nccl.NCCL_UINT8, root, stream.ptr)
            return self._after(stream, buffer)

    def iall_gather(self, send: Any, recv: Any) -> _Pending:
        self._check("all_gather", send, recv)
        with self.device:
            stream = self._cupy.cuda.get_current_stream()
            self.comm.allGather(send.data.ptr, recv.data.ptr, send.nbytes, self._nccl.NCCL_UINT8, stream.ptr)
            return self._after(stream, send, recv)

    def ibarrier(self) -> _Pending:
        with self.device:
            stream = self._cupy.cuda.get_current_stream()
            ptr = self._one.data.ptr
            self.comm.allReduce(ptr, ptr, 1, self._nccl.NCCL_FLOAT32, self._nccl.NCCL_SUM, stream.ptr)
            return self._after(stream, self._one)

    def abort(self, code: int) -> NoReturn:
        comm, self.comm = self.comm, None
        if comm is not None:
            try:  # frees the GPU from collectives that will never complete
                comm.abort()
            except Exception:  # the MPI abort below ends the job anyway
                pass
        self._mpi.abort(code)

    def notify_waiting(self, collective: int) -> None:
        self._mpi.notify_waiting(collective)  # stall notices go through MPI, beside NCCL

    def waiting_ranks(self) -> dict[int, int]:
        return self._mpi.waiting_ranks()

    def finalize(self) -> None:
        comm, self.comm = self.comm, None
        if comm is not None:
            self.device.synchronize()
            comm.destroy()
        self._mpi.finalize()

    # -- helpers -----------------------------------------------------------------------------------
    def _reduce(self, what: str, send: Any, recv: Any, op: EngineOp) -> _Pending:
        self._check(what, send, recv)
        with self.device:
            stream = self._cupy.cuda.get_current_stream()
            staged = send.dtype == np.int16  # NCCL has no int16: reduce in int32
            s = send.astype(np.int32) if staged else send
            r = self._cupy.empty(recv.size, dtype=np.int32) if staged else recv
            kind, nccl_op = self._types[s.dtype], self._ops[op]
            if what == "all_reduce":
                self.comm.allReduce(s.data.ptr, r.data.ptr, s.size, kind, nccl_op, stream.ptr)
            else:
                self.comm.reduceScatter(s.data.ptr, r.data.ptr, r.size, kind, nccl_op, stream.ptr)
            if staged:
                recv[...] = r.astype(np.int16)  # queued after the collective on the same stream
            return self._after(stream, send, recv, s, r)

    def _after(self, stream: Any, *buffers: Any) -> _Pending:
        event = self._cupy.cuda.Event(block=False, disable_timing=True)
        event.record(stream)
        return _Pending(event, self.comm, *buffers)

    def _check(self, what: str, *buffers: Any) -> None:
        if self.comm is None:
            raise DistributedError(f"{what}: the nccl engine was finalized or aborted")
        for b in buffers:
            if not isinstance(b, self._cupy.ndarray):
                raise DistributedError(f"{what}: the nccl engine moves CuPy arrays, got {type(b).__name__}")
            if b.device.id != self.device_id:
                raise DistributedError(
                    f"{what}: a tensor on cuda:{b.device.id}, but rank {self.rank}'s NCCL communicator "
                    f"is on cuda:{self.device_id}: create the tensors on "
                    f"burn.backend('cuda').devices()[{self.device_id}] (dist.local_rank())"
                )

    def __repr__(self) -> str:
        return f"NcclEngine(rank={self.rank}, world_size={self.world_size}, device=cuda:{self.device_id})"
