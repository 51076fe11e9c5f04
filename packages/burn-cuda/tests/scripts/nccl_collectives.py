"""Run under mpiexec, one process per GPU: every collective through the nccl engine, on every dtype
burn-cuda declares, against NumPy; on cuda tensors (their GPU arrays go to NCCL as they are), on
autodiff(cuda) tensors, and on ndarray tensors (staged through the GPU).

Usage: mpiexec -n N python nccl_collectives.py
Every rank can rebuild every rank's input (seeded by rank), so each computes the reference itself.
"""

from __future__ import annotations

import sys

import numpy as np

import burn
import burn.distributed as dist
from burn import DType, Tensor

SHAPE = (4, 3)  # dim 0 a multiple of 1, 2 and 4: reduce_scatter splits it


def host(rank: int, dtype: DType) -> np.ndarray:
    rng = np.random.default_rng([rank, list(DType).index(dtype)])
    if dtype.is_bool:
        return rng.random(SHAPE) < 0.5
    if dtype.is_int:
        low = 0 if dtype is DType.U8 else -5
        return rng.integers(low, 10, size=SHAPE).astype(dtype.numpy)
    return rng.normal(size=SHAPE).astype(dtype.numpy)


def check(name: str, got: Tensor, want: np.ndarray, like: Tensor) -> None:
    assert got.dtype is like.dtype, f"{name}: dtype {got.dtype} != {like.dtype}"
    assert got.backend is like.backend, f"{name}: backend {got.backend.name} != {like.backend.name}"
    assert got.device == like.device, f"{name}: device {got.device} != {like.device}"
    array = got.to_numpy()
    assert array.shape == want.shape, f"{name}: shape {array.shape} != {want.shape}"
    tol = {DType.F64: 1e-12, DType.F32: 1e-6, DType.F16: 2e-3}.get(like.dtype, 0.0)
    ok = np.allclose(array.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    assert ok, f"{name} on {like.dtype} ({like.backend.name}): got\n{array}\nwant\n{want}"


def run(B: burn.Backend, device: object, ctx: dist.DistributedContext) -> int:
    world, rank = ctx.world_size, ctx.rank
    checked = 0
    for dtype in sorted(B.capabilities.dtypes, key=list(DType).index):
        inputs = [host(r, dtype) for r in range(world)]
        stack = np.stack(inputs).astype(np.float64) if not dtype.is_bool else np.stack(inputs)
        t = Tensor.from_data(inputs[rank], backend=B, dtype=dtype, device=device)
        reductions: dict[str, np.ndarray]
        if dtype.is_bool:
            reductions = {"sum": stack.any(0), "max": stack.any(0), "min": stack.all(0)}
        else:
            reductions = {"sum": stack.sum(0), "max": stack.max(0), "min": stack.min(0)}
            if dtype.is_float:
                reductions["mean"] = stack.mean(0)
        for op, want in reductions.items():
            check(f"all_reduce({op})", dist.all_reduce(t, op), want, t)  # type: ignore[arg-type]
            handle = dist.all_reduce(t, op, async_op=True)  # type: ignore[call-overload]
            check(f"all_reduce({op}, async)", handle.wait(), want, t)
            rows = SHAPE[0] // world
            want_rs = want[rank * rows : (rank + 1) * rows]
            check(f"reduce_scatter({op})", dist.reduce_scatter(t, op), want_rs, t)  # type: ignore[arg-type]
            checked += 3
        src = world - 1
        check("broadcast", dist.broadcast(t, src), inputs[src], t)
        check("broadcast(async)", dist.broadcast(t, 0, async_op=True).resolve(), inputs[0], t)
        check("all_gather(dim=0)", dist.all_gather(t), np.concatenate(inputs, 0), t)
        check("all_gather(dim=1)", dist.all_gather(t, 1), np.concatenate(inputs, 1), t)
        handle = dist.all_gather(t, -1, async_op=True)
        check("all_gather(async)", handle.wait(), np.concatenate(inputs, 1), t)
        scalar = Tensor.from_data(inputs[rank][0, 0], backend=B, dtype=dtype, device=device)
        check("all_gather(rank 0)", dist.all_gather(scalar), np.stack([i[0, 0] for i in inputs]), scalar)
        checked += 6
    return checked


def main() -> int:
    ctx = dist.init("nccl")
    assert ctx.engine.name == "nccl", ctx.engine
    cuda = burn.backend("cuda")
    device = cuda.devices()[ctx.local_rank]
    # cuda tensors: the result's GPU array is the engine's receive buffer, on this rank's GPU
    from burn_cuda.dlpack import to_cupy

    t = Tensor.from_data(np.ones(3, dtype=np.float32), backend=cuda, device=device)
    out = dist.all_reduce(t, "sum")
    assert to_cupy(out).device.id == ctx.local_rank and out.tolist() == [float(ctx.world_size)] * 3
    checked = run(cuda, device, ctx)
    names = ["cuda"]
    for name in ("autodiff(cuda)", "ndarray"):
        try:
            B = burn.backend(name)
        except Exception:  # burn-autodiff / burn-ndarray not installed in this environment
            continue
        checked += run(B, device if name != "ndarray" else B.default_device(), ctx)
        names.append(name)
    dist.barrier()
    assert dist.barrier(async_op=True).wait() is None
    print(
        f"rank {ctx.rank}/{ctx.world_size}: {checked} nccl collectives on {', '.join(names)} OK", flush=True
    )
    dist.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
