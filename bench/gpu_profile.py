"""Where a burn training step on the GPU spends its time: host (Python enqueueing kernels) or device.

For the MLP 784-2048-2048-10 step (batch 1024) and the CNN step (batch 64) of `bench/gpu.py` on a
backend (default ``autodiff(cuda)``) it prints the time per step with a device sync after each, the
host time to enqueue a step without syncing, cProfile's busiest functions over a few steps, and
(with PyTorch installed) the GPU kernels of those steps as CUPTI records them, CuPy's included.

    python bench/gpu_profile.py --backend "autodiff(cuda)" --top 35
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads.cnn import burn_cnn  # noqa: E402
from workloads.cnn import init_weights as cnn_weights  # noqa: E402
from workloads.common import classification_batch  # noqa: E402
from workloads.mlp import burn_mlp  # noqa: E402
from workloads.mlp import init_weights as mlp_weights  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="autodiff(cuda)")
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    import burn

    backend = burn.backend(args.backend)
    sizes = [784, 2048, 2048, 10]
    x, y = classification_batch(np.random.default_rng(1), (1024, 784), 10)
    xc, yc = classification_batch(np.random.default_rng(1), (64, 1, 28, 28))
    cases = {
        "MLP 784-2048-2048-10, batch 1024": burn_mlp(backend, mlp_weights(sizes), x, y),
        "CNN, batch 64": burn_cnn(backend, cnn_weights(), xc, yc),
    }
    for name, w in cases.items():
        for _ in range(5):
            w.step()
        backend.sync()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            w.step()
            backend.sync()
        synced = (time.perf_counter() - t0) / args.steps
        t0 = time.perf_counter()
        for _ in range(args.steps):
            w.step()
        host = (time.perf_counter() - t0) / args.steps
        backend.sync()
        drained = (time.perf_counter() - t0) / args.steps
        print(
            f"\n## {name} on {args.backend}: {synced * 1e3:.3f} ms/step synced; enqueue only "
            f"{host * 1e3:.3f} ms/step (host), {drained * 1e3:.3f} ms/step once drained"
        )
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.steps):
            w.step()
        backend.sync()
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(args.top)
        print(s.getvalue()[-12000:])
        kernels(w.step, backend, args.steps)


def kernels(step: object, backend: object, steps: int) -> None:
    """GPU time per step and the kernels that take it, from torch.profiler (CUPTI sees every
    kernel of the process, whichever library launched it)."""
    try:
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("(torch not installed: no kernel table)")
        return
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()  # type: ignore[operator]
        backend.sync()  # type: ignore[attr-defined]
    events = [e for e in prof.events() if e.device_type.name == "CUDA"]
    busy = sum(e.time_range.elapsed_us() for e in events) / steps / 1e3
    print(f"GPU busy {busy:.3f} ms/step in {len(events) / steps:.0f} kernels and copies per step")
    for key in ("device_time_total", "cuda_time_total"):
        try:
            print(prof.key_averages().table(sort_by=key, row_limit=25, max_name_column_width=70))
            break
        except (AttributeError, KeyError, ValueError) as e:
            print(f"(sort by {key}: {e})")


if __name__ == "__main__":
    main()
