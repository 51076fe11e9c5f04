"""Transformer encoder block training step (pre-norm, 4-head self-attention, GELU MLP; batch 32,
seq 128, d_model 256; MSE, Adam) and forward + backward alone: burn autodiff(ndarray) vs torch;
and the block on ndarray compiled (`burn.compile` forward, `burn.compile.step` training step)
against burn eager and torch."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Settings, Table, setup_torch, timed_row
from workloads.common import Workload
from workloads.transformer import burn_block, init_weights, torch_block

from sections.mlp import agreement, autocast_table

BATCH, SEQ, D_MODEL, HEADS = 32, 128, 256, 4


def build(backend: Any, torch: Any, batch: int, autocast: str | None = None) -> dict[str, Workload | None]:
    weights = init_weights(D_MODEL)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    y = rng.standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    return {
        "burn": burn_block(backend, weights, x, y, HEADS, autocast),
        "torch": torch_block(torch, weights, x, y, HEADS, autocast) if torch else None,
        "numpy": None,
    }


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    batch = 8 if settings.quick else BATCH
    note = agreement(build(backend, torch, batch))
    rows = []
    for case, attr in (("training step (Adam)", "step"), ("forward + backward", "fwd_bwd")):
        w = build(backend, torch, batch)
        fns = {k: getattr(v, attr) if v else None for k, v in w.items()}
        rows.append(timed_row(case, fns, settings, "ms", warmup=1, min_time=settings.min_time * 2))
    title = (
        f"transformer block (pre-norm, {HEADS} heads, GELU MLP), batch {batch}, seq {SEQ}, d_model {D_MODEL}"
    )
    mixed = autocast_table(
        f"transformer block, batch {batch}", lambda a: build(backend, torch, batch, a), settings, warmup=1,
        min_time=settings.min_time * 2,
    )
    table = Table(title, rows, notes=[note, "no NumPy floor for this workload"])
    return [table, mixed, forward_table(settings, torch, batch)]


def forward_table(settings: Settings, torch: Any, batch: int) -> Table:
    """The block on ndarray, compiled against eager and torch: the forward (`burn.compile`, fused
    element-wise chains, replayed without the Tensor API; torch under ``no_grad``) and the Adam
    training step (`burn.compile.step`: forward and backward replayed from one trace on
    ``autodiff(capture(ndarray))``, then the optimizer's own update; torch eager)."""
    from workloads.common import BETA_1, BETA_2, EPS, LR

    import burn
    from burn import nn, optim

    backend = burn.backend("ndarray")
    w = build(backend, torch, batch)
    burn_model = w["burn"].model() if w["burn"] and w["burn"].model else None
    assert burn_model is not None
    x_np = np.random.default_rng(1).standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    x = burn.Tensor.from_data(x_np, device=backend.default_device())
    forward = burn.compile(lambda m, v: m(v))
    torch_fwd = None
    if torch and w["torch"] and w["torch"].model:
        tmodel, tx = w["torch"].model(), torch.from_numpy(x_np.copy())

        def torch_fwd() -> object:
            with torch.no_grad():
                return tmodel(tx)

    same = np.array_equal(forward(burn_model, x).to_data().to_numpy(), burn_model(x).to_data().to_numpy())
    fns = {"burn": lambda: forward(burn_model, x), "torch": lambda: burn_model(x), "numpy": torch_fwd}
    row = timed_row("forward", fns, settings, "ms", warmup=1, min_time=settings.min_time * 2)
    s = forward.stats()

    ad = burn.backend("autodiff(ndarray)")
    mse = nn.MseLoss()

    def loss_fn(m: Any, v: Any, target: Any) -> Any:
        return mse(m(v), target)

    def compiled_step() -> tuple[Any, Any, Any]:
        built = build(ad, None, batch)["burn"]
        assert built is not None and built.model is not None
        opt = optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS).init()
        return burn.compile.step(loss_fn, opt), [built.model()], built

    rng = np.random.default_rng(1)  # the batch `build` draws: x, then y
    y_np = [rng.standard_normal((batch, SEQ, D_MODEL), dtype=np.float32) for _ in range(2)][1]
    step, state, eager = compiled_step()
    xa = burn.Tensor.from_data(x_np, device=ad.default_device())
    ya = burn.Tensor.from_data(y_np, device=ad.default_device())
    # Two steps each from the same weights: the compiled params equal the eager ones bitwise.
    for _ in range(2):
        eager.step()
        _, state[0] = step(LR, state[0], xa, ya)
    step_same = all(
        np.array_equal(a.val().to_data().to_numpy(), b.val().to_data().to_numpy())
        for (_, a), (_, b) in zip(eager.model().named_params(), state[0].named_params(), strict=True)
    )

    def run_compiled() -> None:
        _, state[0] = step(LR, state[0], xa, ya)

    torch_step = w["torch"].step if torch and w["torch"] else None
    fns = {"burn": run_compiled, "torch": eager.step, "numpy": torch_step}
    step_row = timed_row(
        "training step (Adam)", fns, settings, "ms", warmup=1, min_time=settings.min_time * 2
    )
    st = step.stats()
    notes = [
        f"forward: compiled equals eager bitwise: {same}; {s['fused_groups']} fused groups "
        f"({s['fused_ops']} ops), {s['traces']} trace",
        f"step: compiled params equal eager bitwise after 2 steps: {step_same}; {st['fused_groups']} fused "
        f"groups ({st['fused_ops']} ops), {st['removed_ops']} dead ops removed, {st['traces']} trace; the "
        "third column is torch eager (forward: under no_grad)",
    ]
    title = f"transformer block on ndarray, compiled, batch {batch}, seq {SEQ}, d_model {D_MODEL}"
    return Table(title, [row, step_row], labels=("burn.compile", "burn eager", "torch"), notes=notes)
