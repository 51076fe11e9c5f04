"""Run under mpiexec: every collective, on every dtype the backend declares, against NumPy.

Usage: mpiexec -n N python collectives.py [BACKEND]   (default ndarray; e.g. "autodiff(ndarray)")
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


def check(name: str, got: Tensor, want: np.ndarray, dtype: DType) -> None:
    assert got.dtype is dtype, f"{name}: dtype {got.dtype} != {dtype}"
    array = got.to_numpy()
    assert array.shape == want.shape, f"{name}: shape {array.shape} != {want.shape}"
    tol = {DType.F64: 1e-12, DType.F32: 1e-6, DType.F16: 2e-3, DType.BF16: 1e-2}.get(dtype, 0.0)
    ok = np.allclose(array.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    assert ok, f"{name} on {dtype}: got\n{array}\nwant\n{want}"


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 else "ndarray"
    ctx = dist.init()
    world, rank = ctx.world_size, ctx.rank
    B = burn.backend(name)
    dtypes = sorted(B.capabilities.dtypes, key=list(DType).index)
    checked = 0
    for dtype in dtypes:
        inputs = [host(r, dtype) for r in range(world)]
        stack = np.stack(inputs).astype(np.float64) if not dtype.is_bool else np.stack(inputs)
        t = Tensor.from_data(inputs[rank], backend=B, dtype=dtype)
        reductions: dict[str, np.ndarray]
        if dtype.is_bool:
            reductions = {"sum": stack.any(0), "max": stack.any(0), "min": stack.all(0)}
        else:
            reductions = {"sum": stack.sum(0), "max": stack.max(0), "min": stack.min(0)}
            if dtype.is_float:
                reductions["mean"] = stack.mean(0)
        for op, want in reductions.items():
            check(f"all_reduce({op})", dist.all_reduce(t, op), want, dtype)  # type: ignore[arg-type]
            handle = dist.all_reduce(t, op, async_op=True)  # type: ignore[call-overload]
            check(f"all_reduce({op}, async)", handle.wait(), want, dtype)
            rows = SHAPE[0] // world
            want_rs = want[rank * rows : (rank + 1) * rows]
            check(f"reduce_scatter({op})", dist.reduce_scatter(t, op), want_rs, dtype)  # type: ignore[arg-type]
            checked += 3
        src = world - 1
        check("broadcast", dist.broadcast(t, src), inputs[src], dtype)
        check("broadcast(async)", dist.broadcast(t, 0, async_op=True).resolve(), inputs[0], dtype)
        check("all_gather(dim=0)", dist.all_gather(t), np.concatenate(inputs, 0), dtype)
        check("all_gather(dim=1)", dist.all_gather(t, 1), np.concatenate(inputs, 1), dtype)
        handle = dist.all_gather(t, -1, async_op=True)
        check("all_gather(async)", handle.wait(), np.concatenate(inputs, 1), dtype)
        scalar = Tensor.from_data(inputs[rank][0, 0], backend=B, dtype=dtype)
        check("all_gather(rank 0)", dist.all_gather(scalar), np.stack([i[0, 0] for i in inputs]), dtype)
        checked += 6
    dist.barrier()
    assert dist.barrier(async_op=True).wait() is None
    print(f"rank {rank}/{world}: {checked} collectives on {len(dtypes)} dtypes of {B.name} OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
