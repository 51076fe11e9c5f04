"""Run under mpiexec: DDP training of a small MLP (float64) must give the parameters of one process
trained on the full batch (same init, same data order) within 1e-10.

Usage: mpiexec -n N python ddp_train.py --epochs E [--directory D [--resume]] [--check]
The global batch is 12 items; each of the N ranks takes 12 / N per step.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import burn
import burn.distributed as dist
from burn import activation, nn, optim
from burn.module import Module
from burn.train import DataLoader, DataParallel, Learner, LossMetric, StepOutput
from burn.train.dataset import ArrayDataset

GLOBAL_BATCH = 12
ITEMS = 48


class Mlp(Module):
    hidden: nn.Linear
    out: nn.Linear

    def forward(self, x):  # type: ignore[no-untyped-def]
        return self.out(activation.tanh(self.hidden(x)))


def step(model, batch):  # type: ignore[no-untyped-def]
    x, y = batch
    logits = model(x)
    return StepOutput(nn.CrossEntropyLoss()(logits, y), logits, y)


def build(backend, seed):  # type: ignore[no-untyped-def]
    backend.seed(seed)
    device = backend.default_device()
    model = Mlp(nn.LinearConfig(5, 8).init(device), nn.LinearConfig(8, 3).init(device))
    for p in model.params():
        p.val()  # realize the lazy initializers now, under this seed
    return model


def data():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    return ArrayDataset(rng.normal(size=(ITEMS, 5)), rng.integers(0, 3, size=ITEMS))


def params(model):  # type: ignore[no-untyped-def]
    return [p.val().to_numpy().astype(np.float64) for p in model.params()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--directory", default=None)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    ctx = dist.init()
    world = ctx.world_size
    assert GLOBAL_BATCH % world == 0, world
    B = burn.backend("autodiff(ndarray)", float_dtype="float64")

    # Each rank starts from a different init: DDP must broadcast rank 0's.
    model = build(B, 100 + ctx.rank)
    strategy = DataParallel(bucket_mb=0.0002)  # ~200 bytes: several buckets per step
    learner = Learner(
        model,
        optim.AdamConfig().init(),
        step,
        lr=1e-2,
        num_epochs=args.epochs,
        metrics=[LossMetric()],
        directory=args.directory,
        progress="plain",
        plot=False,
        strategy=strategy,
    )
    loader = DataLoader(data(), GLOBAL_BATCH // world, shuffle=True, seed=3)
    result = learner.fit(loader, resume=args.resume)

    # The reference: one process, the whole batch, rank 0's init, the same data order.
    ref_learner = Learner(
        build(B, 100),
        optim.AdamConfig().init(),
        step,
        lr=1e-2,
        num_epochs=args.epochs,
        metrics=[LossMetric()],
        progress="none",
        plot=False,
    )
    ref = ref_learner.fit(DataLoader(data(), GLOBAL_BATCH, shuffle=True, seed=3))
    worst = max(
        float(np.max(np.abs(a - b))) for a, b in zip(params(result.model), params(ref.model), strict=True)
    )
    moved = max(
        float(np.max(np.abs(a - b))) for a, b in zip(params(ref.model), params(build(B, 100)), strict=True)
    )
    loss, ref_loss = result.history.last("train")["loss"], ref.history.last("train")["loss"]
    print(
        f"rank {ctx.rank}/{world}: max |ddp - single| = {worst:.3g}, params moved {moved:.3g}, "
        f"loss {loss:.12f} vs {ref_loss:.12f}",
        flush=True,
    )
    assert moved > 1e-3, "the reference did not train"
    assert worst <= 1e-10, worst
    assert abs(loss - ref_loss) <= 1e-10, (loss, ref_loss)
    dist.barrier()
    if ctx.rank == 0:
        print(f"DDP OK on {world} processes", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
