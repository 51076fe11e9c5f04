"""Run under mpiexec: a shape mismatch the first dims do not show, and a rank stopped mid-run.

Usage: mpiexec -n N python mismatch_and_stall.py MODE
  dims11  rank 0 all-reduces a (1,)*9 + (2, 3) tensor, the others (1,)*9 + (3, 2): the same element
          count and the same first 9 dims; every rank catches the mismatch error and prints it
  stop    rank 1 stops itself (SIGSTOP) for 2 s, a child process continues it (SIGCONT); the others
          wait in an all-reduce with stall reports every 0.4 s, then every rank completes it
Every mode exits 0 on every rank when the library behaves.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np

import burn
import burn.distributed as dist


def main() -> int:
    mode = sys.argv[1]
    ctx = dist.init(timeout=30.0, stall_report_s=0.4)
    B = burn.backend("ndarray")
    dist.barrier()  # every rank is up
    if mode == "dims11":
        shape = (1,) * 9 + ((2, 3) if ctx.rank == 0 else (3, 2))
        try:
            dist.all_reduce(burn.Tensor.from_data(np.ones(shape, dtype=np.float32), backend=B))
        except dist.CollectiveMismatchError as exc:
            print(f"rank {ctx.rank} raised CollectiveMismatchError: {exc}", flush=True)
            return 0
        print(f"rank {ctx.rank}: the mismatched collective returned", flush=True)
        return 1
    if mode == "stop":
        if ctx.rank == 1:
            # the child continues this process; a stopped process can do nothing for itself
            waker = subprocess.Popen(["sh", "-c", f"sleep 2; kill -CONT {os.getpid()}"])
            os.kill(os.getpid(), signal.SIGSTOP)
            waker.wait()
        total = dist.all_reduce(burn.Tensor.from_data(np.ones(2), backend=B)).tolist()
        print(f"rank {ctx.rank}: all_reduce after the stop gave {total}", flush=True)
        return 0
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    sys.exit(main())
