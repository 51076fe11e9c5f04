"""Data-parallel training (DDP): one model replica per rank, built only on `burn.distributed`.

``Learner(..., strategy=DataParallel())``, started with ``mpiexec -n N python train.py``:

- parameters are broadcast from rank 0 when `fit` starts (fresh or resumed), so replicas start equal;
- each loader is sharded (`ShardedLoader`): every epoch all ranks draw the loader's epoch-seeded
  permutation, pad it to a multiple of the world size, and rank ``r`` takes items ``r, r + N, ...``
  (equal shard sizes); the loader's ``batch_size`` is per rank;
- after each backward pass the gradients are averaged with all-reduces of flat buckets (gradients
  concatenated up to `bucket_mb` per bucket, all buckets in flight at once), so every replica
  takes the same optimizer step;
- epoch metrics are the means over every rank's samples; progress, logs, the plot and checkpoints
  are written by rank 0 only. Checkpoints hold nothing rank-specific: a run resumes with another
  world size (every rank reads the checkpoint: the run directory must be visible to all ranks).

With a world of one process the strategy changes nothing, so the same script runs alone.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

import burn.distributed as dist
from burn.data.loader import DataLoader
from burn.foundations.dtype import DType
from burn.foundations.kind import Float
from burn.optim.grads import GradientsParams
from burn.train.metrics import EpochAggregator

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class ShardedLoader(DataLoader):
    """Rank `rank`'s shard of a `DataLoader`: same dataset, batch size, batcher, seed and shuffle.

    Each epoch's order is the loader's order (all ranks agree on it), padded by wrapping around to
    a multiple of `world_size` (or cut down to one, with `drop_tail`), of which this rank takes
    every `world_size`-th item starting at `rank`. The ranks' batches ``k`` together are the items
    ``k * B * world_size ... (k + 1) * B * world_size`` of that order, i.e. batch ``k`` of one
    process with a batch ``world_size`` times larger.

    Example:
        >>> import numpy as np
        >>> from burn.train import ArrayDataset, DataLoader
        >>> base = DataLoader(ArrayDataset(np.arange(5.0)), batch_size=2)
        >>> ShardedLoader(base, rank=1, world_size=2).order(0).tolist()
        [1, 3, 0]
    """

    def __init__(self, loader: DataLoader, rank: int, world_size: int, *, drop_tail: bool = False) -> None:
        if not 0 <= rank < world_size:
            raise ValueError(f"ShardedLoader: rank {rank} is not in [0, {world_size})")
        self.base = loader
        self.rank, self.world_size, self.drop_tail = rank, world_size, drop_tail
        n = len(loader.dataset)
        self.shard_size = n // world_size if drop_tail else -(-n // world_size)
        super().__init__(
            loader.dataset,
            loader.batch_size,
            batcher=loader.batcher,
            shuffle=loader.shuffle,
            seed=loader.seed,
            drop_last=loader.drop_last,
            device=loader.device,
            transform=loader.transform,
            num_workers=loader.num_workers,
            worker_type=loader.worker_type,
            prefetch=loader.prefetch,
            start_method=loader.start_method,
            persistent_workers=loader.persistent_workers,
        )

    def __len__(self) -> int:
        n = getattr(self, "shard_size", None)
        if n is None:  # DataLoader.__init__ asks before the shard is known
            return super().__len__()
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    @property
    def num_items(self) -> int:
        return self.shard_size

    def order(self, epoch: int = 0) -> np.ndarray:
        full = self.base.order(epoch)
        total = self.shard_size * self.world_size
        if total > len(full):  # pad by wrapping around: equal shards, every item served
            full = np.resize(full, total)
        return full[self.rank : total : self.world_size]

    def __repr__(self) -> str:
        return f"ShardedLoader(rank {self.rank} of {self.world_size}, {self.shard_size} items, {self.base!r})"


class DataParallel:
    """The DDP strategy of `burn.train.Learner` (see the module's docstring).

    Args:
        bucket_mb: the size of one all-reduce bucket of flattened gradients, in MiB.
        shard_valid: shard the validation loader too (its metrics are still over every item).

    Example:
        >>> from burn.train import DataParallel, Learner
        >>> learner = Learner(model, optimizer, step, strategy=DataParallel())  # doctest: +SKIP
        >>> # mpiexec -n 4 python train.py
    """

    def __init__(self, *, bucket_mb: float = 25.0, shard_valid: bool = True) -> None:
        if not bucket_mb > 0:
            raise ValueError(f"DataParallel: bucket_mb must be positive, got {bucket_mb!r}")
        self.context = dist.context()
        self.bucket_bytes = int(bucket_mb * 2**20)
        self.shard_valid = shard_valid

    @property
    def rank(self) -> int:
        return self.context.rank

    @property
    def world_size(self) -> int:
        return self.context.world_size

    @property
    def is_main(self) -> bool:
        """Rank 0: the replica that prints, logs and checkpoints."""
        return self.context.rank == 0

    # -- what the Learner calls ------------------------------------------------------------------
    def prepare(self, model: Any) -> Any:
        """`model` with rank 0's parameters on every rank."""
        if self.world_size == 1:
            return model
        return model.map(lambda _path, param: param.with_value(dist.broadcast(param.val().detach(), 0)))

    def loader(self, loader: DataLoader, *, valid: bool = False) -> DataLoader:
        """This rank's shard of `loader` (the loader itself in a world of one)."""
        if self.world_size == 1 or (valid and not self.shard_valid) or isinstance(loader, ShardedLoader):
            return loader
        return ShardedLoader(loader, self.rank, self.world_size)

    def reduce_grads(self, grads: GradientsParams, model: Any) -> GradientsParams:
        """The gradients averaged over every rank, with one all-reduce per bucket.

        Buckets follow the model's param order (the same on every rank); a param that requires a
        gradient but got none on this rank counts as a zero gradient here.
        """
        if self.world_size == 1:
            return grads
        pending = []  # every bucket is in flight before the first wait
        for bucket in self._buckets(grads, model):
            flat_parts = [g.reshape((-1,)) for _, g in bucket]
            flat = flat_parts[0] if len(flat_parts) == 1 else type(flat_parts[0]).cat(flat_parts, 0)
            handle = dist.all_reduce(flat, "mean", async_op=True)
            pending.append(([pid for pid, _ in bucket], [tuple(g.shape) for _, g in bucket], handle))
        out = GradientsParams()
        for item in pending:
            for pid, shape, piece in _split(item):
                out.register(pid, piece.reshape(shape))
        return out

    def _buckets(self, grads: GradientsParams, model: Any) -> Iterator[list[tuple[Any, Tensor]]]:
        bucket: list[tuple[Any, Tensor]] = []
        size, dtype = 0, None
        for param in model.params():
            if not param.require_grad or param.kind is not Float:
                continue
            grad = grads.get(param.id)
            if grad is None:
                inner = param.val().inner()
                grad = inner.zeros_like()
            nbytes = grad.num_elements() * grad.dtype.itemsize
            if bucket and (size + nbytes > self.bucket_bytes or grad.dtype != dtype):
                yield bucket
                bucket, size = [], 0
            bucket.append((param.id, grad))
            size, dtype = size + nbytes, grad.dtype
        if bucket:
            yield bucket

    def reduce_means(self, aggregator: EpochAggregator) -> dict[str, float]:
        """The epoch means of every metric over every rank's samples (weighted by batch sizes)."""
        if self.world_size == 1:
            return aggregator.means()
        names = sorted(aggregator._weights)
        values = np.array(
            [aggregator._sums[n] for n in names] + [aggregator._weights[n] for n in names], dtype=np.float64
        )
        totals = dist.all_reduce(self._host_tensor(values), "sum").to_numpy().astype(np.float64)
        sums, weights = totals[: len(names)], totals[len(names) :]
        pairs = zip(names, sums, weights, strict=True)
        means = {n: (float(s / w) if w > 0 else math.nan) for n, s, w in pairs}
        # reduced in sorted order (the same on every rank), shown in the order one process shows
        return {n: means[n] for n in aggregator._weights}

    def agree(self, error: BaseException | None) -> None:
        """Make a failure of rank 0 (e.g. refusing a run directory) a failure of every rank.

        Rank 0 passes what it found (None: fine) and raises it; the other ranks raise a
        `DistributedError` saying that rank 0 failed, instead of waiting for it forever.
        """
        if self.world_size == 1:
            if error is not None:
                raise error
            return
        flag = dist.broadcast(self._host_tensor(np.array([0.0 if error is None else 1.0])), 0)
        if error is not None and self.is_main:
            raise error
        if float(flag.to_numpy()[0]) != 0.0:
            raise dist.DistributedError(f"rank {self.rank}: rank 0 stopped the run (see its error)")

    def _host_tensor(self, values: np.ndarray) -> Tensor:
        from burn.tensor.tensor import Tensor

        backend = getattr(self, "backend", None)
        if backend is None:
            raise RuntimeError("DataParallel: attach(backend) first (the Learner does)")
        dtype = DType.F64 if backend.capabilities.supports(DType.F64) else DType.F32
        return Tensor.from_data(values, dtype=dtype, backend=backend)

    def attach(self, backend: Any) -> None:
        """Use `backend` (the training backend's inner one) for the strategy's own small tensors."""
        self.backend = getattr(backend, "inner", backend) if backend.ad_enabled else backend

    def quiet_stream(self) -> TextIO:
        """Where the non-main ranks print (nothing)."""
        return open(os.devnull, "w")  # noqa: SIM115 - lives as long as the Learner

    def __repr__(self) -> str:
        return (
            f"DataParallel(rank {self.rank} of {self.world_size}, bucket {self.bucket_bytes / 2**20:g} MiB)"
        )


def _split(
    bucket: tuple[list[Any], list[tuple[int, ...]], dist.CollectiveHandle],
) -> Iterator[tuple[Any, tuple[int, ...], Tensor]]:
    ids, shapes, handle = bucket
    flat = handle.wait()
    start = 0
    for pid, shape in zip(ids, shapes, strict=True):
        n = int(np.prod(shape, dtype=np.int64))
        yield pid, shape, flat.narrow(0, start, n)
        start += n
