"""One Adam step: burn's `AdamConfig().init()` vs ``torch.optim.Adam`` vs a hand-written
in-place NumPy Adam (the floor), on float32 params of 1M and 25M values.

Run: ``python bench/bench_optim.py`` (``--backend NAME`` for another burn backend, ``--quick``
for a short run). Each contender steps the same params with the same gradient, after one warm-up
step that creates its state (so moments exist, as in training). Same hyperparameters everywhere:
lr 1e-3, betas (0.9, 0.999), eps 1e-5 (burn's default), no weight decay, no amsgrad.

Rows: one tensor of the given size; "in 1000 params" spreads 1M values over 1000 tensors of
1000, which shows the per-param overhead. torch runs its default implementation (on CPU: one
tensor at a time, in place) and, in its own rows, ``fused=True``.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from harness import Row, machine, print_table, setup_torch, threads, time_call  # noqa: E402

import burn  # noqa: E402
from burn import Tensor, optim  # noqa: E402
from burn.errors import BackendNotFoundError  # noqa: E402
from burn.module import Module, Param  # noqa: E402

LR, BETA_1, BETA_2, EPS = 1e-3, 0.9, 0.999, 1e-5


class Params(Module):
    tensors: list


def get_backend(name: str) -> Any:
    """`burn.backend(name)`; in a source checkout without installed entry points, the ndarray
    plugin is registered from the source tree first."""
    try:
        return burn.backend(name)
    except BackendNotFoundError:
        import burn_ndarray.plugin

        burn.plugins.register(burn_ndarray.plugin)
        return burn.backend(name)


def make_arrays(count: int, size: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(size, dtype=np.float32) for _ in range(count)]
    grads = [rng.standard_normal(size, dtype=np.float32) for _ in range(count)]
    return params, grads


def burn_step(backend: Any, params: list[np.ndarray], grads: list[np.ndarray]) -> Any:
    model = Params([Param.from_tensor(Tensor.from_data(p.copy(), backend=backend)) for p in params])
    grad_tensors = [Tensor.from_data(g, backend=backend) for g in grads]
    ids = [p.id for p in model.tensors]
    optimizer = optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS).init()
    holder = [model]

    def step() -> None:
        # A step consumes its GradientsParams, so each call builds one (a dict of references).
        grads_params = optim.GradientsParams(dict(zip(ids, grad_tensors, strict=True)))
        holder[0] = optimizer.step(LR, holder[0], grads_params)

    step()  # creates the moments
    return step


def torch_step(torch: Any, params: list[np.ndarray], grads: list[np.ndarray], fused: bool) -> Any:
    tensors = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    for t, g in zip(tensors, grads, strict=True):
        t.grad = torch.from_numpy(g.copy())
    kwargs = {"fused": True} if fused else {}
    optimizer = torch.optim.Adam(tensors, lr=LR, betas=(BETA_1, BETA_2), eps=EPS, **kwargs)
    optimizer.step()
    return optimizer.step


def numpy_step(params: list[np.ndarray], grads: list[np.ndarray]) -> Any:
    """The floor: Adam in place with one scratch buffer per param (no allocation per step)."""
    ps = [p.copy() for p in params]
    ms = [np.zeros_like(p) for p in params]
    vs = [np.zeros_like(p) for p in params]
    tmp = [np.empty_like(p) for p in params]
    time = [0]

    def step() -> None:
        time[0] += 1
        bc2_sqrt = math.sqrt(1.0 - BETA_2 ** time[0])
        step_size = LR * bc2_sqrt / (1.0 - BETA_1 ** time[0])
        for p, g, m, v, t in zip(ps, grads, ms, vs, tmp, strict=True):
            m *= BETA_1
            np.multiply(g, 1.0 - BETA_1, out=t)
            m += t
            v *= BETA_2
            np.multiply(g, g, out=t)
            t *= 1.0 - BETA_2
            v += t
            np.sqrt(v, out=t)
            t += EPS * bc2_sqrt
            np.divide(m, t, out=t)
            t *= step_size
            p -= t

    step()
    return step


def run(backend_name: str, min_time: float, sizes: list[tuple[str, int, int]]) -> tuple[list[Row], list[Row]]:
    backend = get_backend(backend_name)
    torch = setup_torch()
    default_rows, fused_rows = [], []
    for label, count, size in sizes:
        params, grads = make_arrays(count, size)
        repeats = 3 if count * size >= 10_000_000 else 5
        t_burn = time_call(burn_step(backend, params, grads), min_time=min_time, repeats=repeats, warmup=1)
        t_numpy = time_call(numpy_step(params, grads), min_time=min_time, repeats=repeats, warmup=1)
        t_torch = t_fused = None
        if torch is not None:
            t_torch = time_call(
                torch_step(torch, params, grads, False), min_time=min_time, repeats=repeats, warmup=1
            )
            try:
                t_fused = time_call(
                    torch_step(torch, params, grads, True), min_time=min_time, repeats=repeats, warmup=1
                )
            except (RuntimeError, TypeError):  # fused Adam not available for CPU in this torch
                t_fused = None
        default_rows.append(Row(f"Adam step, {label}", t_burn, t_torch, t_numpy, unit="ms"))
        fused_rows.append(Row(f"Adam step, {label}", t_burn, t_fused, t_numpy, unit="ms"))
    return default_rows, fused_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="ndarray")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    min_time = 0.1 if args.quick else 0.5
    sizes = [
        ("1M params (1 tensor)", 1, 1_000_000),
        ("1M params (in 1000 params)", 1000, 1_000),
        ("25M params (1 tensor)", 1, 25_000_000),
    ]
    print(f"# burn optimizer benchmark — {datetime.date.today()} — {machine()}\n")
    print(f"backend: {args.backend}; threads: {threads()}; float32; lr {LR}, eps {EPS}\n")
    default_rows, fused_rows = run(args.backend, min_time, sizes)
    print_table("one Adam step: burn vs torch.optim.Adam (default) vs in-place NumPy", default_rows)
    print_table("one Adam step: burn vs torch.optim.Adam(fused=True) vs in-place NumPy", fused_rows)


if __name__ == "__main__":
    main()
