"""One Adam step over 1M and 25M float32 params: burn's `AdamConfig().init()` vs
``torch.optim.Adam`` (default, and ``fused=True``) vs in-place NumPy Adam (the floor); and one
SGD-with-momentum and one RMSProp step (burn's fused ops) vs ``torch.optim.SGD(momentum=0.9)``
and ``torch.optim.RMSprop(momentum=0.9)`` (torch's default implementation; no NumPy floor).

Each contender steps the same params with the same gradient after one warm-up step that creates
its state (moments exist, as in training). "in 1000 params" spreads 1M values over 1000 tensors,
which shows the per-param overhead. The rows "in training" time the optimizer call of training
steps instead, each on the fresh gradient of its backward pass (`workloads.optim_training`), which
burn's optimizers may write the new param over: torch's fused Adam and SGD, its default RMSprop."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Fn, Row, Settings, Table, setup_torch, time_side_by_side
from workloads.common import BETA_1, BETA_2, EPS, LR, torch_adam
from workloads.numpy_adam import NumpyAdam

SIZES = [("1M params (1 tensor)", 1, 1_000_000), ("1M params (in 1000 params)", 1000, 1_000)]
SIZES += [("25M params (1 tensor)", 1, 25_000_000)]


def burn_step(backend: Any, params: list[np.ndarray], grads: list[np.ndarray], config: Any = None) -> Fn:
    from burn import Tensor, optim
    from burn.module import Module, Param

    class Params(Module):
        tensors: list

    model = Params([Param.from_tensor(Tensor.from_data(p, backend=backend)) for p in params])
    grad_tensors = [Tensor.from_data(g, backend=backend) for g in grads]
    ids = [p.id for p in model.tensors]
    config = config or optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS)
    optimizer = config.init()
    holder = [model]

    def step() -> None:
        # a step consumes its GradientsParams, so each call builds one (a dict of references)
        grads_params = optim.GradientsParams(dict(zip(ids, grad_tensors, strict=True)))
        holder[0] = optimizer.step(LR, holder[0], grads_params)

    return step


def torch_step(torch: Any, params: list[np.ndarray], grads: list[np.ndarray], fused: bool) -> Fn | None:
    tensors = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    for t, g in zip(tensors, grads, strict=True):
        t.grad = torch.from_numpy(g.copy())
    if not fused:
        return torch_adam(torch, tensors).step
    try:
        optimizer = torch.optim.Adam(tensors, lr=LR, betas=(BETA_1, BETA_2), eps=EPS, fused=True)
        optimizer.step()
    except (RuntimeError, TypeError):  # fused Adam not available on this CPU build
        return None
    return optimizer.step


def other_rows(
    backend: Any, torch: Any, params: list[np.ndarray], grads: list[np.ndarray], label: str
) -> dict:
    """SGD-with-momentum and RMSProp contenders: burn's and torch's, with the same options."""
    from burn import optim

    def torch_other(make: Any) -> Fn:
        tensors = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
        for t, g in zip(tensors, grads, strict=True):
            t.grad = torch.from_numpy(g.copy())
        return make(tensors).step  # type: ignore[no-any-return]

    sgd = optim.SgdConfig(momentum=optim.MomentumConfig(0.9, 0.0, False))
    rms = optim.RmsPropConfig(alpha=0.99, momentum=0.9, epsilon=EPS)
    return {
        f"SGD momentum step, {label}": {
            "burn": burn_step(backend, params, grads, sgd),
            "torch": torch_other(lambda ts: torch.optim.SGD(ts, lr=LR, momentum=0.9)) if torch else None,
        },
        f"RMSProp step, {label}": {
            "burn": burn_step(backend, params, grads, rms),
            "torch": torch_other(lambda ts: torch.optim.RMSprop(ts, lr=LR, alpha=0.99, eps=EPS, momentum=0.9))
            if torch
            else None,
        },
    }


def training_rows(torch: Any, size: int, label: str, settings: Settings) -> dict[str, Row]:
    """Per optimizer, the best round's mean optimizer call in training steps (4 steps a round)."""
    from workloads.optim_training import OPTIMIZERS, burn_loop, time_loops, torch_loop

    rows = {}
    for name in OPTIMIZERS:
        loops = {"burn": burn_loop(name, size), "torch": torch_loop(torch, name, size) if torch else None}
        times = time_loops(loops, settings.repeats, 4)
        best = {k: min(sum(ts[i : i + 4]) / 4 for i in range(0, len(ts), 4)) for k, ts in times.items()}
        rows[name] = Row(
            f"{TRAINING_NAMES[name]} step in training, {label}",
            best["burn"],
            best.get("torch"),
            None,
            unit="ms",
        )
        del loops
    return rows


TRAINING_NAMES = {"adam": "Adam", "sgd": "SGD momentum", "rmsprop": "RMSProp"}


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("ndarray"), setup_torch()
    default_rows, fused_rows, other = [], [], []
    sizes = [*SIZES[:2], ("5M params (1 tensor)", 1, 5_000_000)] if settings.quick else SIZES
    for label, count, size in sizes:
        rng = np.random.default_rng(0)
        params = [rng.standard_normal(size, dtype=np.float32) for _ in range(count)]
        grads = [rng.standard_normal(size, dtype=np.float32) for _ in range(count)]
        floor = NumpyAdam([p.copy() for p in params])
        fns = {
            "burn": burn_step(backend, params, grads),
            "torch": torch_step(torch, params, grads, False) if torch else None,
            "fused": torch_step(torch, params, grads, True) if torch else None,
            "numpy": lambda floor=floor, grads=grads: floor.step(grads),
        }
        t = time_side_by_side(fns, settings, warmup=1)
        default_rows.append(Row(f"Adam step, {label}", t["burn"], t["torch"], t["numpy"], unit="ms"))
        fused_rows.append(Row(f"Adam step, {label}", t["burn"], t["fused"], t["numpy"], unit="ms"))
        del fns, floor
        for case, contenders in other_rows(backend, torch, params, grads, label).items():
            t = time_side_by_side(contenders, settings, warmup=1)
            other.append(Row(case, t["burn"], t["torch"], None, unit="ms"))
    size, label = (5_000_000, "5M params") if settings.quick else (25_000_000, "25M params")
    training = training_rows(torch, size, label, settings)
    fused_rows.append(training["adam"])
    other += [training["sgd"], training["rmsprop"]]
    return [
        Table("one Adam step: burn vs torch.optim.Adam (default) vs in-place NumPy", default_rows),
        Table("one Adam step: burn vs torch.optim.Adam(fused=True) vs in-place NumPy", fused_rows),
        Table(
            "one SGD-momentum / RMSProp step: burn vs torch.optim.SGD / RMSprop (fused SGD in training)",
            other,
        ),
    ]
