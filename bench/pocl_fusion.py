"""fusion(opencl) against opencl on pocl's CPU device (issue 35): the GELU + layer norm chain over
1024x1024, each kernel launch of one call timed alone, and training steps.

Usage (from the repository root, the tree's packages on PYTHONPATH)::

    nice -n 19 python bench/pocl_fusion.py chain      # fused vs unfused, interleaved, best of 7
    nice -n 19 python bench/pocl_fusion.py profile    # one call's launches, each timed alone
    nice -n 19 python bench/pocl_fusion.py bandwidth  # pocl's copy bandwidth over 4 MiB buffers
    nice -n 19 python bench/pocl_fusion.py train      # MLP and CNN steps, autodiff(fusion) vs autodiff
    nice -n 19 python bench/pocl_fusion.py trainprofile  # the CNN step's kernel time by kernel
    nice -n 19 python bench/pocl_fusion.py host       # host CPU per chain call / MLP step

Every timing ends with ``backend.sync()``; ``uptime``'s load average is printed with each table,
since the machine is shared and single numbers swing with it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Settings, time_side_by_side  # noqa: E402
from sections.fusion import _gelu_norm, _gelu_norm_products  # noqa: E402


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _chain_runs(size: int, fn: Callable[..., Any], names: tuple[str, ...]) -> dict[str, Callable[[], None]]:
    import burn

    rng = np.random.default_rng(0)
    arrays = (
        rng.standard_normal((size, size)).astype(np.float32),
        rng.standard_normal((size,)).astype(np.float32),
        rng.standard_normal((size,)).astype(np.float32),
    )
    runs = {}
    for name in names:
        backend = burn.backend(name)
        args = [burn.Tensor.from_data(a, backend=backend) for a in arrays]

        def run(args: list[Any] = args, backend: Any = backend) -> None:
            out = fn(*args)
            backend.sync()
            del out

        runs[name] = run
    return runs


def chain(size: int) -> None:
    """The chain (with ``**`` and with products) fused and unfused, rounds interleaved."""
    settings = Settings.make(False)
    for label, fn in (("with **", _gelu_norm), ("products", _gelu_norm_products)):
        runs = _chain_runs(size, fn, ("fusion(opencl)", "opencl"))
        before = _load()
        t = time_side_by_side(runs, settings, warmup=2)  # type: ignore[arg-type]
        fused, plain = t["fusion(opencl)"], t["opencl"]
        assert fused is not None and plain is not None
        print(
            f"chain {label} {size}x{size}: fusion(opencl) {fused * 1e3:.2f} ms, opencl {plain * 1e3:.2f} ms, "
            f"unfused/fused {plain / fused:.2f} ({before} -> {_load()})",
            flush=True,
        )


def host(size: int = 64, calls: int = 200) -> None:
    """Host CPU time of the chain (products form) per call, the calling thread's only
    (`time.thread_time`, so other processes' load does not count): what burn's Python costs
    around the kernels, fused and unfused; and of the training steps of `train`."""
    from sections.mlp import build as build_mlp

    import burn

    for name in ("fusion(opencl)", "opencl"):
        run = _chain_runs(size, _gelu_norm_products, (name,))[name]
        for _ in range(5):
            run()
        best = 1e9
        for _ in range(5):
            start = time.thread_time()
            for _ in range(calls):
                run()
            best = min(best, (time.thread_time() - start) / calls)
        print(f"chain {size}x{size} host CPU per call, {name}: {best * 1e6:.0f} us")
    for name in ("autodiff(fusion(opencl))", "autodiff(opencl)"):
        backend = burn.backend(name)
        work = build_mlp(backend, None, [784, 512, 512, 10], 128)["burn"]
        assert work is not None
        for _ in range(3):
            work.step()
            backend.sync()
        best = 1e9
        for _ in range(7):
            start = time.thread_time()
            work.step()
            backend.sync()
            best = min(best, time.thread_time() - start)
        print(f"MLP step host CPU, {name}: {best * 1e3:.2f} ms")


def _timed_launches(fn: Callable[[], None], queue_of: Callable[[], Any]) -> list[tuple[str, float]]:
    """Each kernel launch of one call of `fn`, timed alone: the queue drained before and after."""
    import pyopencl as cl

    original = cl.Kernel.__call__
    times: list[tuple[str, float]] = []

    def timed(self: Any, queue: Any, *args: Any, **kwargs: Any) -> Any:
        queue.finish()
        start = time.perf_counter()
        result = original(self, queue, *args, **kwargs)
        queue.finish()
        times.append((self.function_name, time.perf_counter() - start))
        return result

    cl.Kernel.__call__ = timed
    try:
        fn()
    finally:
        cl.Kernel.__call__ = original
    return times


def profile(size: int, rounds: int = 7) -> None:
    """Best time of each launch of one chain call (products form), and the call's host time: the
    wall time of a call with no sync, less nothing (the queue runs behind it)."""
    import burn

    for name in ("fusion(opencl)", "opencl"):
        run = _chain_runs(size, _gelu_norm_products, (name,))[name]
        run()
        best: list[tuple[str, float]] | None = None
        for _ in range(rounds):
            times = _timed_launches(run, lambda: None)
            if best is None:
                best = times
            else:
                best = [(n, min(a, b)) for (n, a), (_, b) in zip(best, times, strict=True)]
        assert best is not None
        total = sum(t for _, t in best)
        print(f"{name}: {len(best)} launches, sum of best {total * 1e3:.2f} ms ({_load()})")
        for n, t in best:
            print(f"  {n:24s} {t * 1e3:7.3f} ms")
        backend = burn.backend(name)
        backend.sync()


def bandwidth(size: int, rounds: int = 15) -> None:
    """pocl's copy kernel over size x size float32 (read 4 bytes + write 4 bytes an element)."""
    import pyopencl as cl

    import burn

    backend = burn.backend("opencl")
    x = burn.Tensor.from_data(np.ones((size, size), np.float32), backend=backend)
    rt = x._p.rt
    src = (
        "__kernel void cp(__global const float8* a, __global float8* b) "
        "{ long i = get_global_id(0); b[i] = a[i]; }"
    )
    copy = cl.Kernel(cl.Program(rt.ctx, src).build(), "cp")
    out = rt.alloc(size * size * 4)
    best = 1e9
    for _ in range(rounds):
        rt.queue.finish()
        start = time.perf_counter()
        copy(rt.queue, (size * size // 8,), None, x._p.buf, out)
        rt.queue.finish()
        best = min(best, time.perf_counter() - start)
    moved = 2 * size * size * 4
    print(f"copy {size}x{size} float32: best {best * 1e3:.3f} ms, {moved / best / 1e9:.1f} GB/s ({_load()})")


def train() -> None:
    """MLP 784-512-512-10 (Adam, batch 128) and the bench CNN (Adam, batch 32) steps."""
    from sections.cnn import build as build_cnn
    from sections.mlp import build as build_mlp

    import burn

    settings = Settings.make(False)
    settings = Settings(False, 0.3, 5)
    for label, make in (
        ("MLP 784-512-512-10 b128", lambda b: build_mlp(b, None, [784, 512, 512, 10], 128)["burn"]),
        ("CNN conv32-conv64-fc128 b32", lambda b: build_cnn(b, None, 32)["burn"]),
    ):
        fns = {}
        for name in ("autodiff(fusion(opencl))", "autodiff(opencl)"):
            backend = burn.backend(name)
            work = make(backend)

            def step(work: Any = work, backend: Any = backend) -> None:
                work.step()
                backend.sync()

            fns[name] = step
        before = _load()
        t = time_side_by_side(fns, settings, warmup=2)  # type: ignore[arg-type]
        fused, plain = t["autodiff(fusion(opencl))"], t["autodiff(opencl)"]
        assert fused is not None and plain is not None
        print(
            f"{label}: fusion {fused * 1e3:.2f} ms, opencl {plain * 1e3:.2f} ms, fusion/opencl "
            f"{fused / plain:.2f} ({before} -> {_load()})",
            flush=True,
        )


def train_profile(rounds: int = 3) -> None:
    """Kernel time of one CNN training step by kernel name, each launch timed alone (best step of
    `rounds`), on autodiff(fusion(opencl)) and autodiff(opencl)."""
    from sections.cnn import build as build_cnn

    import burn

    for name in ("autodiff(fusion(opencl))", "autodiff(opencl)"):
        backend = burn.backend(name)
        work = build_cnn(backend, None, 32)["burn"]
        assert work is not None

        def step(work: Any = work, backend: Any = backend) -> None:
            work.step()
            backend.sync()

        step()
        best: dict[str, float] | None = None
        for _ in range(rounds):
            totals: dict[str, float] = {}
            counts: dict[str, int] = {}
            for kname, t in _timed_launches(step, lambda: None):
                totals[kname] = totals.get(kname, 0.0) + t
                counts[kname] = counts.get(kname, 0) + 1
            if best is None or sum(totals.values()) < sum(best.values()):
                best, best_counts = totals, counts
        assert best is not None
        print(f"{name}: {sum(best_counts.values())} launches, {sum(best.values()) * 1e3:.1f} ms ({_load()})")
        for kname, t in sorted(best.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {kname:24s} x{best_counts[kname]:3d} {t * 1e3:8.2f} ms")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "chain"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    {"chain": lambda: chain(n), "profile": lambda: profile(n), "bandwidth": lambda: bandwidth(n),
     "train": train, "trainprofile": train_profile, "host": lambda: host(n if n != 1024 else 64)}[what]()
