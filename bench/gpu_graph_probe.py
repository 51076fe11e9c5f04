"""What a CUDA graph saves on burn's host-bound GPU training steps (issue 18): the forward +
backward of the MLP and CNN workloads eager and as a replayed graph (`burn_cuda.graphs`), the
first call's cost (warm-ups + capture), and torch's own whole-step graph for reference.
Each experiment is guarded and prints what failed.

    python bench/gpu_graph_probe.py
"""

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu import best_ms  # noqa: E402
from workloads.cnn import burn_cnn  # noqa: E402
from workloads.cnn import init_weights as cnn_weights  # noqa: E402
from workloads.common import BETA_1, BETA_2, EPS, LR, classification_batch  # noqa: E402
from workloads.mlp import burn_mlp, torch_model  # noqa: E402
from workloads.mlp import init_weights as mlp_weights  # noqa: E402


def probe_training(torch: Any, burn: Any, which: str) -> None:
    """burn's forward + backward eager and as a replayed CUDA graph (`burn_cuda.graphs`)."""
    from burn_cuda.graphs import graphed

    backend = burn.backend("autodiff(cuda)")
    if which == "mlp":
        sizes, batch = [784, 2048, 2048, 10], 1024
        weights = mlp_weights(sizes)
        x, y = classification_batch(np.random.default_rng(1), (batch, sizes[0]), sizes[-1])
        make_burn = burn_mlp
    else:
        weights = cnn_weights()
        x, y = classification_batch(np.random.default_rng(1), (64, 1, 28, 28))
        make_burn = burn_cnn
    b = make_burn(backend, weights, x, y)
    eager = best_ms(b.fwd_bwd, backend.sync)
    # No arguments: the graph reads the closure's model and batch in place (no input copies).
    fast = graphed(lambda: b.fwd_bwd())
    t0 = time.perf_counter()
    fast()
    backend.sync()
    print(f"[{which}] first graphed call (2 warm-ups + capture) {time.perf_counter() - t0:.2f} s", flush=True)
    replay = best_ms(fast, backend.sync)
    print(f"[{which}] forward + backward: eager {eager:.3f} ms, graph replay {replay:.3f} ms", flush=True)


def probe_torch_graph(torch: Any) -> None:
    """torch's own whole-step CUDA graph (capturable Adam), for reference."""
    sizes, batch = [784, 2048, 2048, 10], 1024
    weights = mlp_weights(sizes)
    x, y = classification_batch(np.random.default_rng(1), (batch, sizes[0]), sizes[-1])
    model = torch_model(torch, weights).cuda()
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(BETA_1, BETA_2), eps=EPS, capturable=True)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(tx), ty).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        torch.nn.functional.cross_entropy(model(tx), ty).backward()
        opt.step()
    replay = best_ms(g.replay, torch.cuda.synchronize)
    print(f"[mlp] torch whole-step CUDA graph replay {replay:.3f} ms", flush=True)


def main() -> None:
    import cupy as cp
    import torch

    import burn

    print(f"CuPy {cp.__version__}, torch {torch.__version__}", flush=True)
    for name, fn in (
        ("mlp", lambda: probe_training(torch, burn, "mlp")),
        ("cnn", lambda: probe_training(torch, burn, "cnn")),
        ("torch graph", lambda: probe_torch_graph(torch)),
    ):
        try:
            fn()
        except Exception:
            print(f"[{name}] failed:\n{traceback.format_exc(limit=8)}", flush=True)


if __name__ == "__main__":
    main()
