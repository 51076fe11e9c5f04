"""A compiled training step (`burn.compile.step`, the Adam update inside the program) against
burn eager and torch eager, and against the sum of its own kernels' times.

Two workloads on ``autodiff(ndarray)``, float32, Adam:

- ``block``: the transformer block of `bench/sections/transformer.py` (pre-norm, 4 heads, GELU
  MLP, d_model 256, seq 128; MSE to a fixed target), burn and torch from the same weights;
- ``mlp`` (only with ``--only mlp``): 256-512-512-10, GELU, cross-entropy;
- ``gpt``: a GPT-2-style decoder: token and position embeddings, `--layers` pre-norm causal
  blocks (`nn.TransformerEncoder`, GELU, d_ff = 4 d_model), final layer norm, LM head,
  cross-entropy over a vocabulary of 1024 (torch: the same architecture, its own init).

Every variant runs one step per round, interleaved, so that a loaded machine's noise falls on all
of them alike; the table gives each one's median, of the wall time and of the process's CPU time
(which a wait for a core on a loaded machine does not inflate). `kernels` is the compiled step's plan with
per-step timing (`burn.capture.lower.Plan.timings`), summed per round: the time of the backend
calls alone, without the replay's Python dispatch, and the ratio of that call's whole time to it
(the dispatch left: signature, state hand-over, wrapping); `gemm` is the part in matrix products.
The plan's matrix products are then timed alone on burn and on torch, the same shapes
interleaved: whether burn's GEMMs are slower than torch's.

Usage:
    nice -n 19 python bench/compile_step.py --threads 1 --batch 8 --rounds 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from workloads.common import BETA_1, BETA_2, EPS, LR  # noqa: E402
from workloads.transformer import burn_block, init_weights, torch_block  # noqa: E402

GEMM_OPS = frozenset({"float_matmul", "linear", "float_linear", "matmul"})
SEQ, D_MODEL, HEADS, VOCAB = 128, 256, 4, 1024


def _adam() -> Any:
    from burn import optim

    return optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS).init()


def optimizers() -> dict[str, Callable[[], Any]]:
    """One optimizer per family (`--optimizer`), each with the options that add ops (decay,
    centering, clipping), whose update `burn.compile.step` runs inside the program."""
    from burn import optim

    decay = optim.WeightDecayConfig(1e-4)
    return {
        "adam": _adam,
        "adamw_amsgrad": lambda: optim.AdamWConfig(amsgrad=True).init(),
        "sgd": lambda: optim.SgdConfig(weight_decay=decay).init(),
        "sgd_nesterov": lambda: optim.SgdConfig(
            momentum=optim.MomentumConfig(0.9, 0.0, nesterov=True)
        ).init(),
        "rmsprop": lambda: optim.RmsPropConfig(centered=True).init(),
        "adagrad": lambda: optim.AdaGradConfig(lr_decay=0.01, weight_decay=decay).init(),
        "lion": lambda: optim.LionConfig(weight_decay=0.1).init(),
        "adan": lambda: optim.AdanConfig(weight_decay=0.02).init(),
        "adam_clip_norm": lambda: optim.AdamConfig(
            gradient_clipping=optim.GradientClippingConfig.norm(1.0)
        ).init(),
    }


def block_workload(torch: Any, batch: int) -> tuple[Any, tuple[Any, ...], Callable[..., Any], Any]:
    """The transformer block: (burn model, batch tensors, loss_fn, torch step)."""
    import burn
    from burn import nn

    ad = burn.backend("autodiff(ndarray)")
    weights = init_weights(D_MODEL)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    y = rng.standard_normal((batch, SEQ, D_MODEL), dtype=np.float32)
    model = burn_block(ad, weights, x, y, HEADS).model()
    mse = nn.MseLoss()
    dev = ad.default_device()
    tensors = (burn.Tensor.from_data(x, device=dev), burn.Tensor.from_data(y, device=dev))
    return model, tensors, lambda m, a, b: mse(m(a), b), torch_block(torch, weights, x, y, HEADS).step


def mlp_model(dev: Any) -> Any:
    """The MLP 256-512-512-10 with GELU of the compile benches (this one and
    `bench/compile_learner.py`), its layers initialized in order on `dev`."""
    from burn import activation, nn
    from burn.module import Module

    class Mlp(Module):
        fc1: nn.Linear
        fc2: nn.Linear
        fc3: nn.Linear

        def forward(self, x: Any) -> Any:
            return self.fc3(activation.gelu(self.fc2(activation.gelu(self.fc1(x)))))

    return Mlp(*(nn.LinearConfig(i, o).init(dev) for i, o in ((256, 512), (512, 512), (512, 10))))


def mlp_workload(torch: Any, batch: int) -> tuple[Any, tuple[Any, ...], Callable[..., Any], Any]:
    """An MLP 256-512-512-10 with GELU and cross-entropy (the `bench/compile_learner.py` model):
    (burn model, batch tensors, loss_fn, torch step)."""
    import burn
    from burn import nn

    ad = burn.backend("autodiff(ndarray)")
    dev = ad.default_device()
    model = mlp_model(dev)
    model.visit(lambda _path, p: p.val())
    rng = np.random.default_rng(4)
    x_np = rng.standard_normal((batch, 256), dtype=np.float32)
    y_np = rng.integers(0, 10, size=batch).astype(np.int64)
    ce = nn.CrossEntropyLossConfig().init()
    tensors = (burn.Tensor.from_data(x_np, device=dev), burn.Tensor.from_data(y_np, device=dev))
    torch_step = None
    if torch is not None:
        F = torch.nn.functional
        tmodel = torch.nn.Sequential(
            torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 512), torch.nn.GELU(),
            torch.nn.Linear(512, 10),
        )  # fmt: skip
        opt = torch.optim.Adam(tmodel.parameters(), lr=LR, betas=(BETA_1, BETA_2), eps=EPS)
        tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)

        def torch_step() -> None:
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(tmodel(tx), ty).backward()
            opt.step()

    return model, tensors, lambda m, a, b: ce(m(a), b), torch_step


def gpt_workload(torch: Any, batch: int, layers: int) -> tuple[Any, tuple[Any, ...], Callable[..., Any], Any]:
    """The GPT-2-style decoder: (burn model, batch tensors, loss_fn, torch step)."""
    import burn
    from burn import nn
    from burn.module import Module
    from burn.nn.attention import generate_autoregressive_mask

    ad = burn.backend("autodiff(ndarray)")
    dev = ad.default_device()

    class Gpt(Module):
        tokens: nn.Embedding
        positions: nn.Embedding
        blocks: nn.TransformerEncoder
        norm: nn.LayerNorm
        head: nn.Linear

        def forward(self, ids: burn.Tensor, pos: burn.Tensor, mask: burn.Tensor) -> burn.Tensor:
            h = self.tokens(ids) + self.positions(pos)
            h = self.blocks(nn.TransformerEncoderInput(h, mask_attn=mask))
            return self.head(self.norm(h))

    model = Gpt(
        nn.EmbeddingConfig(VOCAB, D_MODEL).init(dev), nn.EmbeddingConfig(SEQ, D_MODEL).init(dev),
        nn.TransformerEncoderConfig(D_MODEL, 4 * D_MODEL, HEADS, layers, dropout=0.0, norm_first=True)
        .init(dev),
        nn.LayerNormConfig(D_MODEL).init(dev), nn.LinearConfig(D_MODEL, VOCAB).init(dev),
    )  # fmt: skip
    model.visit(lambda _path, p: p.val())  # lazy params drawn now, not in the first step
    rng = np.random.default_rng(2)
    ids_np = rng.integers(0, VOCAB, size=(batch, SEQ + 1))
    ids = burn.Tensor.from_data(ids_np[:, :-1].astype(np.int64), device=dev)
    targets = burn.Tensor.from_data(ids_np[:, 1:].reshape(-1).astype(np.int64), device=dev)
    pos = burn.Tensor.from_data(np.tile(np.arange(SEQ, dtype=np.int64), (batch, 1)), device=dev)
    mask = generate_autoregressive_mask(batch, SEQ, dev)
    ce = nn.CrossEntropyLossConfig().init()

    def loss_fn(m: Any, a: Any, p: Any, k: Any, t: Any) -> Any:
        return ce(m(a, p, k).reshape((-1, VOCAB)), t)

    return model, (ids, pos, mask, targets), loss_fn, torch_gpt(torch, batch, layers, ids_np)


def torch_gpt(torch: Any, batch: int, layers: int, ids_np: np.ndarray) -> Callable[[], None] | None:
    if torch is None:
        return None
    tnn, F = torch.nn, torch.nn.functional
    base: Any = tnn.Module

    class Gpt(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.tokens, self.positions = tnn.Embedding(VOCAB, D_MODEL), tnn.Embedding(SEQ, D_MODEL)
            layer = tnn.TransformerEncoderLayer(
                D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            self.blocks = tnn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.norm, self.head = tnn.LayerNorm(D_MODEL), tnn.Linear(D_MODEL, VOCAB)

        def forward(self, ids: Any, pos: Any, mask: Any) -> Any:
            h = self.tokens(ids) + self.positions(pos)
            return self.head(self.norm(self.blocks(h, mask=mask, is_causal=True)))

    model = Gpt()
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(BETA_1, BETA_2), eps=EPS)
    ids = torch.from_numpy(ids_np[:, :-1].copy())
    targets = torch.from_numpy(ids_np[:, 1:].reshape(-1).copy())
    pos = torch.arange(SEQ).repeat(batch, 1)
    mask = tnn.Transformer.generate_square_subsequent_mask(SEQ)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(ids, pos, mask).reshape(-1, VOCAB), targets).backward()
        opt.step()

    return step


def measure(
    name: str, workload: tuple[Any, ...], torch: Any, rounds: int, make_opt: Callable[[], Any] = _adam
) -> dict[str, Any]:
    import burn
    from burn import optim

    model, batch, loss_fn, torch_step = workload
    eager_state = [model]
    eager_opt = make_opt()

    def eager() -> None:
        loss = loss_fn(eager_state[0], *batch)
        grads = optim.GradientsParams.from_grads(loss.backward(), eager_state[0])
        eager_state[0] = eager_opt.step(LR, eager_state[0], grads)

    step = burn.compile.step(loss_fn, make_opt())
    compiled_state = [model]

    def compiled() -> None:
        _, compiled_state[0] = step(LR, compiled_state[0], *batch)

    # Two steps each from the same weights: the compiled params must equal the eager ones.
    for _ in range(2):
        eager()
        compiled()
    pairs = zip(eager_state[0].named_params(), compiled_state[0].named_params(), strict=True)
    same = all(
        np.array_equal(a.val().to_data().to_numpy(), b.val().to_data().to_numpy()) for (_, a), (_, b) in pairs
    )
    entry = next(e for e in step._cache.values() if getattr(e, "updates", None))
    plan = entry.updates[(False, False)].plan
    fns: dict[str, Callable[[], Any]] = {"compiled": compiled, "eager": eager}
    if torch_step is not None:
        fns["torch"] = torch_step
    times: dict[str, list[float]] = defaultdict(list)
    kernels: list[float] = []
    ratios: list[float] = []
    gemm: list[float] = []
    per_op: dict[str, float] = defaultdict(float)
    for fn in fns.values():  # warm (numba kernels, allocator)
        fn()
    cpu: dict[str, list[float]] = defaultdict(list)
    for _ in range(rounds):
        for label, fn in fns.items():
            c0 = time.process_time()
            t0 = time.perf_counter()
            fn()
            times[label].append(time.perf_counter() - t0)
            cpu[label].append(time.process_time() - c0)
        # The same compiled step once more with per-step timing: its kernels' time alone.
        plan.timings = []
        t0 = time.perf_counter()
        compiled()
        whole = time.perf_counter() - t0
        kernels.append(sum(plan.timings))
        ratios.append(whole / kernels[-1])  # the whole step over its kernels, in the same call
        gemm.append(sum(t for t, op in zip(plan.timings, plan.step_ops, strict=True) if op in GEMM_OPS))
        for t, op in zip(plan.timings, plan.step_ops, strict=True):
            per_op[op] += t / rounds
        plan.timings = None
    out = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    # CPU time of the process per step (all its threads): what a loaded machine's waiting for a
    # core does not inflate, unlike the wall time.
    out["cpu"] = {k: statistics.median(v) * 1e3 for k, v in cpu.items()}
    out["kernels"] = statistics.median(kernels) * 1e3
    out["gemm"] = statistics.median(gemm) * 1e3
    nan = float("nan")
    pair = gemm_pair_ms(plan, torch, rounds) if torch is not None else (nan, nan)
    out["gemm_burn"], out["gemm_torch"] = pair
    out["dispatch_ratio"] = statistics.median(ratios)
    out["same"] = same
    out["program_updates"] = step.stats()["program_updates"]
    out["steps"] = plan.steps
    out["fused_groups"] = plan.fused_groups
    out["top"] = sorted(per_op.items(), key=lambda kv: -kv[1])[:6]
    return out


def gemm_pair_ms(plan: Any, torch: Any, rounds: int) -> tuple[float, float]:
    """Milliseconds of the plan's matrix products on burn (the inner backend's ``float_matmul``)
    and on torch (``torch.matmul``), the same shapes with fresh contiguous operands, each product
    timed interleaved; the medians per product, summed: whether burn's GEMMs and torch's are the
    same class."""
    from burn.capture.lower import Plan

    backend = plan.backend
    rng = np.random.default_rng(3)
    shapes = [(c.args[0].shape, c.args[1].shape) for c in Plan._live(plan.program) if c.op == "float_matmul"]
    burn_ms = torch_ms = 0.0
    for sa, sb in shapes:
        a = rng.standard_normal(sa, dtype=np.float32)
        b = rng.standard_normal(sb, dtype=np.float32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        ours, theirs = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            backend.float_matmul(a, b)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            torch.matmul(ta, tb)
            theirs.append(time.perf_counter() - t0)
        burn_ms += statistics.median(ours) * 1e3
        torch_ms += statistics.median(theirs) * 1e3
    return burn_ms, torch_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--layers", type=int, default=2, help="GPT-style blocks")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=("block", "gpt", "mlp"), default=None)
    parser.add_argument(
        "--optimizer", default="adam",
        help=f"comma-separated, of {', '.join(optimizers())} (torch's step only with adam)",
    )
    args = parser.parse_args()
    names = args.optimizer.split(",")
    unknown = [n for n in names if n not in optimizers()]
    if unknown:
        parser.error(f"unknown optimizer(s) {unknown}; known: {', '.join(optimizers())}")

    import burn

    burn.set_num_threads(args.threads)
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    print(f"threads {args.threads}, batch {args.batch}, rounds {args.rounds}; load {os.getloadavg()[0]:.1f}")
    work = {
        "block": lambda: block_workload(torch, args.batch),
        "gpt": lambda: gpt_workload(torch, args.batch, args.layers),
        "mlp": lambda: mlp_workload(torch, args.batch),
    }
    for name, build in work.items():
        if args.only != name and (args.only is not None or name == "mlp"):
            continue
        for opt_name in names:
            workload = build()
            if opt_name != "adam":  # torch's step is Adam's
                workload = (*workload[:3], None)
            r = measure(name, workload, torch, args.rounds, optimizers()[opt_name])
            torch_ms = r.get("torch", float("nan"))
            print(
                f"{name} [{opt_name}]: compiled {r['compiled']:.1f} ms, burn eager {r['eager']:.1f} ms, "
                f"torch eager {torch_ms:.1f} ms; compiled/torch {r['compiled'] / torch_ms:.2f}x, "
                f"compiled/eager {r['compiled'] / r['eager']:.2f}x"
            )
            c = r["cpu"]
            print(
                f"  cpu time: compiled {c['compiled']:.2f} ms, burn eager {c['eager']:.2f} ms, "
                f"compiled/eager {c['compiled'] / c['eager']:.2f}x"
            )
            print(
                f"  kernels {r['kernels']:.1f} ms (the timed step / its kernels "
                f"{r['dispatch_ratio']:.3f}x), "
                f"of which gemm {r['gemm']:.1f} ms; burn gemm / torch step {r['gemm'] / torch_ms:.2f}x; "
                f"the same gemm shapes alone: burn {r['gemm_burn']:.1f} ms, torch {r['gemm_torch']:.1f} ms"
            )
            top = ", ".join(f"{op} {ms * 1e3:.1f}" for op, ms in r["top"])
            print(
                f"  {r['steps']} steps, {r['fused_groups']} fused groups, update in program: "
                f"{r['program_updates']} replays; equal to eager bitwise: {r['same']}; top ops (ms): {top}"
            )
    print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
