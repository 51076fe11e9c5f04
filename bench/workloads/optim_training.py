"""Optimizer steps as training runs them: each on a fresh gradient from a backward pass.

One param of `n` elements trained on ``loss = sum(w * c)``, whose gradient (``c``) backward makes
anew every step, so burn's `OptimizerAdaptor` may hand it to the fused update, which writes the
new param over it (`burn.optim.transforms.take_grad`); torch's loop calls ``zero_grad()`` first
(``set_to_none``), so its backward makes a fresh gradient too. Each loop's call runs one step and
returns the seconds of its optimizer call alone. `bench/optim_in_training.py` and the Adam section
of `bench/run.py` time them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from workloads.common import BETA_1, BETA_2, EPS, LR

Loop = Callable[[], float]
OPTIMIZERS = ("adam", "sgd", "rmsprop")


def burn_optimizer(name: str) -> Any:
    """burn's `name` optimizer with the benchmark's options."""
    from burn import optim

    if name == "adam":
        return optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS).init()
    if name == "sgd":
        return optim.SgdConfig(momentum=optim.MomentumConfig(0.9, 0.0, False)).init()
    return optim.RmsPropConfig(alpha=0.99, momentum=0.9, epsilon=EPS).init()


def torch_optimizer(torch: Any, name: str, params: list[Any]) -> Any:
    """torch's counterpart, fused where torch has it on CPU (not RMSprop)."""
    if name == "adam":
        return torch.optim.Adam(params, lr=LR, betas=(BETA_1, BETA_2), eps=EPS, fused=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=LR, momentum=0.9, fused=True)
    return torch.optim.RMSprop(params, lr=LR, alpha=0.99, eps=EPS, momentum=0.9)


def burn_loop(name: str, n: int, keep_grads: bool = False) -> Loop:
    """burn on autodiff(ndarray); `keep_grads`: the loop holds each step's gradient (only read)."""
    import burn
    from burn import Tensor, optim
    from burn.module import Module, Param

    ad = burn.backend("autodiff(ndarray)")
    rng = np.random.default_rng(0)

    class Weights(Module):
        w: Param

    start = Tensor.from_data(rng.standard_normal(n, dtype=np.float32), backend=ad)
    model = [Weights(Param.from_tensor(start))]
    c = Tensor.from_data(rng.standard_normal(n, dtype=np.float32), backend=ad)
    optimizer = burn_optimizer(name)
    kept: list[Any] = []

    def step() -> float:
        grads = model[0].w.val().mul(c).sum().backward()
        grads_params = optim.GradientsParams.from_grads(grads, model[0])
        if keep_grads:
            kept[:] = [grads_params.get(model[0].w.id)]
        begin = time.perf_counter()
        model[0] = optimizer.step(LR, model[0], grads_params)
        return time.perf_counter() - begin

    return step


def torch_loop(torch: Any, name: str, n: int) -> Loop:
    rng = np.random.default_rng(0)
    w = torch.from_numpy(rng.standard_normal(n, dtype=np.float32)).requires_grad_()
    c = torch.from_numpy(rng.standard_normal(n, dtype=np.float32))
    optimizer = torch_optimizer(torch, name, [w])

    def step() -> float:
        optimizer.zero_grad()
        (w * c).sum().backward()
        begin = time.perf_counter()
        optimizer.step()
        return time.perf_counter() - begin

    return step


def time_loops(loops: dict[str, Loop | None], rounds: int, steps: int) -> dict[str, list[float]]:
    """Seconds of each step's optimizer call: two warm-up steps each (the state exists from the
    second), then `rounds` x `steps` steps, the loops' rounds interleaved."""
    live = {k: loop for k, loop in loops.items() if loop is not None}
    for _ in range(2):
        for loop in live.values():
            loop()
    times: dict[str, list[float]] = {k: [] for k in live}
    for _ in range(rounds):
        for name, loop in live.items():
            times[name] += [loop() for _ in range(steps)]
    return times
