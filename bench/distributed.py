"""Benchmark of burn.distributed over MPI (burn-mpi): all-reduce bandwidth, and DDP throughput.

Usage (from the checkout root, with burn-mpi[mpich] installed):

    mpiexec -n 2 python bench/distributed.py allreduce   # 100 MB float32: burn vs raw mpi4py
    mpiexec -n 1 python bench/distributed.py train       # DDP training throughput, 1 process
    mpiexec -n 2 python bench/distributed.py train       # ... and 2 processes

``allreduce`` times ``burn.distributed.all_reduce`` (validation on and off) and mpi4py's
``Allreduce`` on the same send/receive buffers (the tensor's host array), median of the repeats.
``train`` trains the digits MLP shape (64 -> 512 -> 10, float32, Adam) on synthetic data with a
global batch of 256 split between the processes, and reports samples per second.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import burn
import burn.distributed as dist


def allreduce(repeats: int = 7) -> None:
    from mpi4py import MPI

    ctx = dist.init()
    B = burn.backend("ndarray")
    n = 25_000_000  # 100 MB of float32
    t = burn.Tensor.from_data(np.ones(n, dtype=np.float32), backend=B)
    send = t.to_data().array
    recv = np.empty_like(send)
    comm = ctx.engine.comm  # type: ignore[attr-defined]

    def raw() -> None:
        comm.Allreduce(send, recv, MPI.SUM)

    def through_burn() -> None:
        dist.all_reduce(t, "sum")

    results = {}
    for name, fn, validate in (("raw mpi4py Allreduce", raw, False), ("burn all_reduce", through_burn, True),
                               ("burn all_reduce, validate=False", through_burn, False)):  # fmt: skip
        ctx.validate = validate
        fn()  # warm up
        times = []
        for _ in range(repeats):
            dist.barrier()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        results[name] = statistics.median(times)
    if ctx.rank == 0:
        base = results["raw mpi4py Allreduce"]
        print(f"all-reduce of 100 MB float32 on {ctx.world_size} processes ({ctx.engine.library()}), "  # type: ignore[attr-defined]
              f"median of {repeats}:")  # fmt: skip
        print("| path | time (ms) | bandwidth (GB/s, payload / time) | burn / raw |")
        print("|---|---|---|---|")
        for name, seconds in results.items():
            print(f"| {name} | {seconds * 1e3:.1f} | {4 * n / seconds / 1e9:.2f} | {base / seconds:.2f} |")


def train(steps: int = 60, global_batch: int = 256) -> None:
    from burn import activation, nn, optim
    from burn.module import Module
    from burn.optim.grads import GradientsParams
    from burn.train import DataParallel

    class Mlp(Module):
        hidden: nn.Linear
        out: nn.Linear

        def forward(self, x):  # type: ignore[no-untyped-def]
            return self.out(activation.relu(self.hidden(x)))

    ctx = dist.init()
    B = burn.backend("autodiff(ndarray)")
    device = B.default_device()
    B.seed(0)
    model = Mlp(nn.LinearConfig(64, 512).init(device), nn.LinearConfig(512, 10).init(device))
    strategy = DataParallel()
    strategy.attach(B)
    model = strategy.prepare(model)
    optimizer = optim.AdamConfig().init()
    local = global_batch // ctx.world_size
    rng = np.random.default_rng(ctx.rank)
    x = burn.Tensor.from_data(rng.random((local, 64), dtype=np.float32), device=device)
    y = burn.Tensor.from_data(rng.integers(0, 10, local), device=device)
    loss_fn = nn.CrossEntropyLoss()

    def step(model):  # type: ignore[no-untyped-def]
        grads = GradientsParams.from_grads(loss_fn(model(x), y).backward(), model)
        return optimizer.step(1e-3, model, strategy.reduce_grads(grads, model))

    for _ in range(5):
        model = step(model)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        model = step(model)
    dist.barrier()
    took = time.perf_counter() - start
    if ctx.rank == 0:
        print(f"| {ctx.world_size} | {global_batch} ({local} per process) | {steps / took:.1f} | "
              f"{steps * global_batch / took:.0f} |")  # fmt: skip


if __name__ == "__main__":
    {"allreduce": allreduce, "train": train}[sys.argv[1] if len(sys.argv) > 1 else "allreduce"]()
