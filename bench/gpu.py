"""burn on an NVIDIA GPU side by side with PyTorch CUDA, same machine, same data, one process.

Cases (issue 18): GEMM 8192x8192 in float32 and bfloat16 (and float16), the MLP 784-2048-2048-10
training step at batch 1024, and the CNN training step of `sections/cnn.py` (batch 64 and 256).
On autodiff(cuda) each step runs twice: eager, and "graphed" (forward + backward recorded once
as a CUDA graph by `burn_cuda.graphs.graphed` and replayed, the optimizer step eager).
Each contender is warmed up, then timed over rounds of back-to-back calls closed by a device sync;
the best round counts. Prints a markdown table: ms per call and burn / torch.

    python bench/gpu.py                  # every case
    python bench/gpu.py --only gemm      # gemm, mlp, cnn
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads.cnn import burn_cnn, torch_cnn  # noqa: E402
from workloads.cnn import init_weights as cnn_weights  # noqa: E402
from workloads.common import BETA_1, BETA_2, EPS, LR, Workload, classification_batch  # noqa: E402
from workloads.mlp import burn_mlp, torch_mlp  # noqa: E402
from workloads.mlp import init_weights as mlp_weights  # noqa: E402

Fn = Callable[[], object]


def best_ms(fn: Fn, sync: Fn, min_round: float = 0.2, rounds: int = 5, warmup: int = 3) -> float:
    """Best mean time of one call, in ms, over `rounds` rounds of at least `min_round` seconds."""
    for _ in range(warmup):
        fn()
    sync()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < min_round / 4 or n < 1:
        fn()
        n += 1
        sync()
    per_call = (time.perf_counter() - start) / n
    calls = max(1, int(min_round / max(per_call, 1e-6)))
    best = float("inf")
    for _ in range(rounds):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e3


def row(case: str, burn_fn: Fn | str, torch_fn: Fn, burn_sync: Fn, torch_sync: Fn, extra: str = "") -> None:
    t_torch = best_ms(torch_fn, torch_sync)
    if isinstance(burn_fn, str):
        print(f"| {case} | {burn_fn} | {t_torch:.3f} | - | {extra} |", flush=True)
        return
    t_burn = best_ms(burn_fn, burn_sync)
    print(f"| {case} | {t_burn:.3f} | {t_torch:.3f} | {t_burn / t_torch:.2f} | {extra} |", flush=True)


def gemm(torch: Any, burn: Any) -> None:
    import ml_dtypes

    from burn import Tensor

    backend = burn.backend("cuda")
    device = backend.default_device()
    n = 8192
    rng = np.random.default_rng(0)
    a32 = rng.standard_normal((n, n), dtype=np.float32)
    b32 = rng.standard_normal((n, n), dtype=np.float32)
    flops = 2 * n**3
    for name, np_dtype, torch_dtype in (
        ("float32", np.float32, torch.float32),
        ("bfloat16", ml_dtypes.bfloat16, torch.bfloat16),
        ("float16", np.float16, torch.float16),
    ):
        ta = torch.from_numpy(a32).to("cuda", torch_dtype)
        tb = torch.from_numpy(b32).to("cuda", torch_dtype)
        burn_fn: Fn | str
        try:
            ba = Tensor.from_data(a32.astype(np_dtype), device=device, dtype=name)
            bb = Tensor.from_data(b32.astype(np_dtype), device=device, dtype=name)

            def burn_fn(ba: Any = ba, bb: Any = bb) -> object:
                return ba.matmul(bb)

            check = np.asarray(burn_fn().to_data().to_numpy(), dtype=np.float32)[:4, :4]
            ref = (ta @ tb).float().cpu().numpy()[:4, :4]
            extra = f"max |burn - torch| on a corner: {np.abs(check - ref).max():.3g}"
        except Exception as e:  # a dtype the backend refuses: say so in the row
            burn_fn, extra = "unsupported", f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        t_torch = best_ms(lambda ta=ta, tb=tb: ta @ tb, torch.cuda.synchronize)
        extra += f"; torch {flops / t_torch / 1e9:.0f} TFLOP/s"
        if isinstance(burn_fn, str):
            print(f"| GEMM {n} {name} | {burn_fn} | {t_torch:.3f} | - | {extra} |", flush=True)
            continue
        t_burn = best_ms(burn_fn, backend.sync)
        extra += f", burn {flops / t_burn / 1e9:.0f} TFLOP/s"
        ratio = t_burn / t_torch
        print(f"| GEMM {n} {name} | {t_burn:.3f} | {t_torch:.3f} | {ratio:.2f} | {extra} |", flush=True)
        del ta, tb


def burn_graphed(make_burn: Any, backend: Any, weights: Any, x_np: np.ndarray, y_np: np.ndarray) -> Workload:
    """The workload's model trained with its forward + backward as a CUDA graph (same loss and
    Adam as the workloads); the optimizer step stays eager (its step count is a host value)."""
    from burn import Tensor, nn, optim
    from burn_cuda.graphs import graphed

    base = make_burn(backend, weights, x_np, y_np)
    x = Tensor.from_data(x_np, device=backend.default_device())
    y = Tensor.from_data(y_np, device=backend.default_device())
    loss_fn = nn.CrossEntropyLossConfig().init()
    optimizer = optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS).init()

    @graphed
    def grads(model: Any, x: Any, y: Any) -> Any:
        return optim.GradientsParams.from_grads(loss_fn(model(x), y).backward(), model)

    state = [base.model()]

    def step() -> None:
        state[0] = optimizer.step(LR, state[0], grads(state[0], x, y))

    return Workload(step, lambda: grads(state[0], x, y), lambda: float(loss_fn(state[0](x), y).item()))


def training(torch: Any, burn: Any, which: str, backend_name: str) -> None:
    backend = burn.backend(backend_name)
    if which == "mlp":
        sizes, batch = [784, 2048, 2048, 10], 1024
        weights = mlp_weights(sizes)
        x, y = classification_batch(np.random.default_rng(1), (batch, sizes[0]), sizes[-1])
        make_burn, make_torch, case = burn_mlp, torch_mlp, f"MLP 784-2048-2048-10 step, batch {batch}"
        batches = [(weights, x, y, case)]
    else:
        batches = []
        for batch in (64, 256):
            x, y = classification_batch(np.random.default_rng(1), (batch, 1, 28, 28))
            batches.append((cnn_weights(), x, y, f"CNN step, batch {batch}"))
        make_burn, make_torch = burn_cnn, torch_cnn
    for weights, x, y, case in batches:
        b, t = make_burn(backend, weights, x, y), make_torch(torch, weights, x, y, device="cuda")
        for _ in range(3):
            b.step()
            t.step()
        agree = f"loss after 3 steps: burn {b.loss():.6f}, torch {t.loss():.6f}"
        b, t = make_burn(backend, weights, x, y), make_torch(torch, weights, x, y, device="cuda")
        row(f"{case} ({backend_name})", b.step, t.step, backend.sync, torch.cuda.synchronize, agree)
        if backend_name != "autodiff(cuda)":
            continue
        g = burn_graphed(make_burn, backend, weights, x, y)
        t = make_torch(torch, weights, x, y, device="cuda")
        for _ in range(3):
            g.step()
            t.step()
        agree = f"loss after 3 steps: burn {g.loss():.6f}, torch {t.loss():.6f}"
        g = burn_graphed(make_burn, backend, weights, x, y)
        t = make_torch(torch, weights, x, y, device="cuda")
        row(f"{case} ({backend_name}, graphed)", g.step, t.step, backend.sync, torch.cuda.synchronize, agree)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="gemm,mlp,cnn")
    parser.add_argument("--backends", default="autodiff(cuda)", help="comma-separated, for mlp and cnn")
    args = parser.parse_args()
    import cupy
    import torch

    import burn

    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(
        f"GPU {props['name'].decode()}, CuPy {cupy.__version__}, torch {torch.__version__}, "
        f"TF32 matmul in torch: {torch.backends.cuda.matmul.allow_tf32}\n"
    )
    print("| case | burn ms | torch ms | burn / torch | notes |\n|---|---|---|---|---|", flush=True)
    only = args.only.split(",")
    if "gemm" in only:
        gemm(torch, burn)
    for which in ("mlp", "cnn"):
        if which in only:
            for name in args.backends.split(","):
                try:
                    training(torch, burn, which, name)
                except Exception as e:
                    print(f"| {which} ({name}) | failed | | | {type(e).__name__}: {e} |", flush=True)


if __name__ == "__main__":
    main()
