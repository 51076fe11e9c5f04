"""CIFAR-style CNN: conv-BatchNorm-ReLU blocks, max-pooling and a linear head, trained with
`burn.train.Learner` on images augmented by `burn.data.transforms` (random crop with 4 pixels of
padding, horizontal flip, normalisation) in the `burn.data.DataLoader`'s workers, SGD with Nesterov
momentum, a cosine learning-rate schedule and gradient clipping by the global norm (PyTorch's
``clip_grad_norm_``).

Data: ``--data PATH`` names a folder holding ``train/`` and ``test/``, each written by
`burn.data.write_memmap` with fields ``image`` (uint8 ``[N, 3, 32, 32]``) and ``label`` (int). From
torchvision's CIFAR-10 (downloaded once, on a machine with network access)::

    import numpy as np, torchvision
    from burn.data import write_memmap
    for split, train in (("train", True), ("test", False)):
        ds = torchvision.datasets.CIFAR10("cifar-raw", train=train, download=True)
        write_memmap(f"cifar10/{split}", {"image": ds.data.transpose(0, 3, 1, 2),   # NHWC -> NCHW
                                          "label": np.asarray(ds.targets, np.int64)})

then ``python examples/cifar_cnn.py --data cifar10 --epochs 30 --width 64 --workers 4``. Without
``--data`` the script trains on a CIFAR-shaped stand-in that needs no download: scikit-learn's
8x8 digits, enlarged to 24x24, padded to 32x32 and repeated over 3 channels (uint8, 10 classes).

Each epoch ends with a checkpoint in ``OUT/checkpoints`` (``--resume`` continues an interrupted
run to the same result as an uninterrupted one) and `BestCheckpoint` keeps the epoch with the best
validation accuracy in ``OUT/checkpoints/best.mpk``. Metrics go to ``OUT/metrics.csv`` (and
``--logger tensorboard`` or ``mlflow``, see ``examples/digits.py``). The loader is deterministic:
``--workers 2`` trains exactly the same model as ``--workers 0``, only the augmentation runs in two
worker processes.

Run: ``python examples/cifar_cnn.py`` (needs burn-ndarray, burn-autodiff and scikit-learn; 3 epochs,
test accuracy about 0.8 on the stand-in, 15 to 65 s on 2 CPU cores shared with other work),
``--epochs 1`` for a smoke run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np

import burn
from burn import Tensor, activation, nn, optim
from burn.data import ArrayDataset, DataLoader, MemmapDataset
from burn.data import transforms as T
from burn.module import Module
from burn.train import (
    AccuracyMetric,
    BestCheckpoint,
    Learner,
    LearningRateMetric,
    LossMetric,
    StepOutput,
    TrainingResult,
)

# The CIFAR-10 training set's per-channel mean and std (in [0, 1] units), as torchvision recipes use.
CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


# -- data ------------------------------------------------------------------------------------------
def digits_as_cifar(seed: int = 0, test_size: float = 0.2) -> tuple[ArrayDataset, ArrayDataset]:
    """scikit-learn's 8x8 digits as CIFAR-shaped ``(uint8 [3, 32, 32], label)`` items: each pixel
    repeated 3x3 (24x24), padded with 4 black pixels per side, the same image in the 3 channels."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError as exc:
        raise SystemExit("without --data this example needs scikit-learn: pip install scikit-learn") from exc
    data = load_digits()
    pixels = np.round(data.images * (255 / 16)).astype(np.uint8)  # values are 0..16
    big = pixels.repeat(3, axis=1).repeat(3, axis=2)  # [N, 24, 24]
    images = np.pad(big, ((0, 0), (4, 4), (4, 4)))[:, None].repeat(3, axis=1)  # [N, 3, 32, 32]
    labels = data.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=test_size, random_state=seed, stratify=labels
    )
    return ArrayDataset(x_train, y_train), ArrayDataset(x_test, y_test)


def load_data(data: str | Path | None, seed: int = 0) -> tuple[Any, Any]:
    """The train and test datasets: the memmap folders ``DATA/train`` and ``DATA/test``, or the
    digits stand-in without `data`."""
    if data is None:
        return digits_as_cifar(seed)
    root = Path(data)
    for split in ("train", "test"):
        if not (root / split / "index.json").exists():
            raise SystemExit(f"--data {root}: no {root / split} written by burn.data.write_memmap")
    return MemmapDataset(root / "train", ["image", "label"]), MemmapDataset(root / "test", ["image", "label"])


def train_transform(mean: tuple[float, ...], std: tuple[float, ...]) -> T.Compose:
    """The standard CIFAR augmentation: pad 4 and crop 32x32 at random, flip half, normalise."""
    return T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.Normalize(mean, std)])


# -- model -----------------------------------------------------------------------------------------
class ConvBlock(Module):
    """3x3 convolution (no bias: the BatchNorm shift replaces it), BatchNorm, ReLU."""

    conv: nn.Conv2d
    norm: nn.BatchNorm

    def forward(self, x: Tensor) -> Tensor:
        return activation.relu(self.norm(self.conv(x)))


class CifarCnn(Module):
    """``[N, 3, 32, 32]`` -> stages of conv blocks, each stage but the last followed by a 2x2
    max-pool (32 -> 16 -> 8) -> global average pool -> linear head -> ``[N, classes]`` logits."""

    stages: list[list[ConvBlock]]
    pool: nn.MaxPool2d
    gap: nn.AdaptiveAvgPool2d
    head: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        for i, stage in enumerate(self.stages):
            for block in stage:
                x = block(x)
            if i < len(self.stages) - 1:
                x = self.pool(x)
        x = self.gap(x)
        return self.head(x.reshape((x.shape[0], -1)))


@burn.config
class CifarCnnConfig:
    """Stage widths ``(w, 2w, 4w)`` with `blocks` conv blocks each, and the number of classes."""

    width: int = 16
    blocks: int = 1
    classes: int = 10

    def init(self, device: Any) -> CifarCnn:
        widths = (self.width, 2 * self.width, 4 * self.width)
        stages, c_in = [], 3
        for c_out in widths:
            stage = []
            for _ in range(self.blocks):
                conv = nn.Conv2dConfig((c_in, c_out), (3, 3), padding="same", bias=False).init(device)
                stage.append(ConvBlock(conv, nn.BatchNormConfig(c_out).init(device)))
                c_in = c_out
            stages.append(stage)
        return CifarCnn(
            stages,
            nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init(),
            nn.AdaptiveAvgPool2dConfig((1, 1)).init(),
            nn.LinearConfig(c_in, self.classes).init(device),
        )


def classify(model: Any, batch: tuple[Tensor, Tensor]) -> StepOutput:
    """The step function: logits, cross-entropy loss, and what accuracy needs."""
    images, labels = batch
    logits = model(images)
    return StepOutput(loss=nn.CrossEntropyLoss()(logits, labels), output=logits, targets=labels)


# -- training --------------------------------------------------------------------------------------
def train(
    out: str | Path,
    *,
    data: str | Path | None = None,
    backend: str = "ndarray",
    epochs: int = 3,
    batch_size: int = 32,
    lr: float = 0.1,
    width: int = 16,
    clip: float = 2.0,
    workers: int = 0,
    seed: int = 0,
    resume: bool = False,
    overwrite: bool = False,
    progress: str = "auto",
    plot: bool = True,
    logger: Literal["csv", "tensorboard", "mlflow"] = "csv",
) -> tuple[TrainingResult, BestCheckpoint]:
    """Train the CNN, validating on the test split every epoch; returns the `TrainingResult`
    and the `BestCheckpoint` callback (the best epoch by validation accuracy)."""
    train_set, test_set = load_data(data, seed)
    # Normalised with CIFAR-10's statistics on the stand-in too: they only centre and scale.
    train_loader = DataLoader(
        train_set,
        batch_size,
        shuffle=True,
        seed=seed,
        transform=train_transform(CIFAR_MEAN, CIFAR_STD),
        num_workers=workers,
        persistent_workers=workers > 0,  # started once, not every epoch
    )
    test_loader = DataLoader(
        test_set,
        256,
        transform=T.Normalize(CIFAR_MEAN, CIFAR_STD),
        num_workers=workers,
        persistent_workers=workers > 0,
    )

    trainer = burn.backend(f"autodiff({backend})")
    trainer.seed(seed)
    model = CifarCnnConfig(width=width).init(trainer.default_device())
    optimizer = optim.SgdConfig(
        momentum=optim.MomentumConfig(0.9, 0.0, nesterov=True),
        weight_decay=optim.WeightDecayConfig(5e-4),
        gradient_clipping=optim.GradientClippingConfig.global_norm(clip),
    ).init()
    best = BestCheckpoint("accuracy", mode="max")
    learner = Learner(
        model,
        optimizer,
        classify,
        lr=optim.lr_scheduler.CosineAnnealingLrSchedulerConfig(lr, epochs * len(train_loader)).init(),
        num_epochs=epochs,
        metrics=[LossMetric(), AccuracyMetric(), LearningRateMetric()],
        directory=out,
        seed=seed,
        progress=progress,
        plot=plot,
        callbacks=[best],
        loggers=["csv"] if logger == "csv" else ["csv", logger],
        hparams={"batch_size": batch_size, "max_lr": lr, "width": width, "clip": clip, "workers": workers},
    )
    with train_loader, test_loader:  # stops the workers at the end
        result = learner.fit(train_loader, test_loader, resume=resume, overwrite=overwrite)
    return result, best


# -- command line ----------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="cifar_cnn.py")
    parser.add_argument("--data", default=None, help="folder with train/ and test/ from write_memmap")
    parser.add_argument("--out", default="runs/cifar-cnn", help="checkpoints, metrics (default %(default)s)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1, help="peak learning rate of the cosine schedule")
    parser.add_argument("--width", type=int, default=16, help="channels of the first stage (then 2x, 4x)")
    parser.add_argument("--clip", type=float, default=2.0, help="clip gradients to this global L2 norm")
    parser.add_argument("--workers", type=int, default=0, help="loader worker processes (0: in this one)")
    parser.add_argument("--backend", default="ndarray", help="training runs on autodiff(BACKEND)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    parser.add_argument("--overwrite", action="store_true", help="start over in an --out that holds a run")
    parser.add_argument("--progress", choices=["auto", "bar", "plain", "none"], default="auto")
    parser.add_argument("--logger", choices=["csv", "tensorboard", "mlflow"], default="csv")
    args = parser.parse_args(argv)
    for name in ("epochs", "batch_size", "width"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.workers < 0:
        parser.error(f"--workers must be 0 or more, got {args.workers}")
    if not 0 < args.lr <= 1:
        parser.error(f"--lr must be in (0, 1], got {args.lr}")
    if args.clip <= 0:
        parser.error(f"--clip must be positive, got {args.clip}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    source = args.data or "scikit-learn digits as 3x32x32 (no --data)"
    print(f"cifar_cnn: data {source}; {args.workers} loader workers; output in {args.out}")
    start = time.perf_counter()
    try:
        result, best = train(
            args.out,
            data=args.data,
            backend=args.backend,
            epochs=args.epochs,
            batch_size=args.batch_size,
            lr=args.lr,
            width=args.width,
            clip=args.clip,
            workers=args.workers,
            seed=args.seed,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=args.progress,
            logger=args.logger,
        )
    except FileExistsError as exc:
        print(
            f"cifar_cnn.py: {exc}; on the command line: --resume, --overwrite or another --out",
            file=sys.stderr,
        )
        return 2
    valid = result.history.last("valid")
    print(
        f"trained {result.epoch} epochs in {time.perf_counter() - start:.1f} s; test accuracy "
        f"{valid['accuracy']:.4f}, best {best.best:.4f} at epoch {best.best_epoch} ({best.path})"
    )
    print(f"metrics: {result.files.get('csv')}")
    if "tensorboard" in result.files:
        print(f"tensorboard: tensorboard --logdir {result.files['tensorboard']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
