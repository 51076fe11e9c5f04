"""Run under mpiexec: a rank that fails, hangs, or calls a collective unlike the others.

Usage: mpiexec -n N python failures.py MODE
  raise     rank 1 raises ValueError("rank one broke") before the first collective
  hang      rank 1 sleeps for an hour; the others all-reduce with a 3 s timeout
  mismatch  rank 1 all-reduces a (3, 2) tensor, the others a (2, 3) one
  order     rank 1 broadcasts while the others all-reduce
Every mode must end every rank with a non-zero status within seconds.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import burn
import burn.distributed as dist


def main() -> int:
    mode = sys.argv[1]
    ctx = dist.init(timeout=3.0)
    B = burn.backend("ndarray")
    t = burn.Tensor.from_data(np.ones((2, 3)), backend=B)
    dist.barrier()  # every rank is up
    if ctx.rank == 1:
        if mode == "raise":
            raise ValueError("rank one broke")
        if mode == "hang":
            time.sleep(3600)
        if mode == "mismatch":
            t = burn.Tensor.from_data(np.ones((3, 2)), backend=B)
        if mode == "order":
            dist.broadcast(t, 0)
    dist.all_reduce(t)
    print(f"rank {ctx.rank}: the collective returned", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
