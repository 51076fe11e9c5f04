"""Peak memory of an MLP training loop for one library, in a process of its own.

Usage: ``python bench/memprobe.py {burn,torch,numpy} WIDTH BATCH STEPS``; prints one JSON line.

Measure: resident set size. After the imports, a warm-up (two steps of a tiny MLP, so that the
library's code pages and lazily created runtime, e.g. torch's thread pool, are already resident) and
the input data, the kernel's RSS high-water mark
is reset (``echo 5 > /proc/self/clear_refs``) and the current RSS taken as baseline; the result is
the high-water mark after building the data, model and optimizer and running STEPS steps, minus that
baseline. RSS sees every allocation (NumPy's, torch's own allocator, Python objects), which
tracemalloc does not for torch. Without clear_refs, ``ru_maxrss`` is used instead (then the
baseline's own peak, e.g. from imports, can hide part of the loop's peak).
"""

from __future__ import annotations

import gc
import json
import resource
import sys
from typing import Any


def status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def main(lib: str, width: int, batch: int, steps: int) -> dict[str, Any]:
    import numpy as np
    from harness import setup_torch
    from workloads.common import classification_batch
    from workloads.mlp import burn_mlp, init_weights, numpy_mlp, torch_mlp

    torch = setup_torch() if lib == "torch" else None
    backend = None
    if lib == "burn":
        import burn

        backend = burn.backend("autodiff(ndarray)")

    def build(width: int, batch: int) -> Any:
        x, y = classification_batch(np.random.default_rng(1), (batch, 784))
        weights = init_weights([784, width, width, 10])
        if lib == "burn":
            return burn_mlp(backend, weights, x, y)
        if lib == "torch":
            return torch_mlp(torch, weights, x, y)
        return numpy_mlp(weights, x, y)

    warm = build(8, 4)
    warm.step()
    warm.step()
    del warm
    gc.collect()
    exact = reset_peak()
    baseline = status_kib("VmRSS") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    w = build(width, batch)
    for _ in range(steps):
        w.step()
    peak = status_kib("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    method = "VmHWM after clear_refs" if exact else "ru_maxrss"
    return {
        "lib": lib,
        "peak_bytes": (peak - baseline) * 1024,
        "baseline_bytes": baseline * 1024,
        "method": method,
    }


if __name__ == "__main__":
    lib, width, batch, steps = sys.argv[1], *(int(a) for a in sys.argv[2:5])
    print(json.dumps(main(lib, width, batch, steps)))
