"""Character-level GPT: token and position embeddings, pre-norm transformer blocks from `burn.nn`
under a causal mask, a linear head over the characters; trained with `burn.train.Learner`, AdamW,
a linear warm-up then cosine decay of the learning rate, and gradient clipping by the global norm.
After training, ``--sample N`` prints N characters generated from the model.

The text is the source of a module of Python's standard library (``--module``, default
``textwrap``: 20,000 characters, read with `inspect.getsource`, so nothing is downloaded), or
``--text PATH`` (any UTF-8 file). Its first 90% trains, the rest validates. Training windows come
from a `burn.data.DataLoader`: the dataset holds overlapping chunks of ``2 * BLOCK`` characters
and `burn.data.transforms.RandomSubsequence` takes a random window of ``BLOCK + 1`` from each
(input: the first ``BLOCK`` characters, target: the ``BLOCK`` after the first), drawn from the
generator the loader makes for each item, so ``--workers 2`` trains exactly the model that
``--workers 0`` does.

Metrics (loss, next-character accuracy, learning rate) go to ``OUT/metrics.csv``, with
``--logger tensorboard`` or ``mlflow`` also there (see ``examples/digits.py``); each epoch ends
with a checkpoint in ``OUT/checkpoints``, and ``--resume`` continues an interrupted run.

Run: ``python examples/char_gpt.py`` (needs burn-ndarray and burn-autodiff; 4 epochs, validation
loss about 2.4 nats per character, 20 to 55 s on 2 CPU cores shared with other work: the samples
are word fragments among noise at this size), ``--epochs 1 --sample 50`` for a smoke run,
``--text book.txt --block 128 --layers 4 --d-model 128 --epochs 20`` for a real one.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np

import burn
from burn import Int, Tensor, nn, optim
from burn.data import ArrayDataset, DataLoader
from burn.data import transforms as T
from burn.module import Module
from burn.optim import lr_scheduler
from burn.train import AccuracyMetric, Learner, LearningRateMetric, LossMetric, StepOutput, TrainingResult


# -- data ------------------------------------------------------------------------------------------
def load_text(path: str | Path | None = None, module: str = "textwrap") -> str:
    """The file at `path`, or the source of the standard-library `module`."""
    if path is not None:
        return Path(path).read_text(encoding="utf-8")
    return inspect.getsource(importlib.import_module(module))


class CharVocab:
    """The characters of a text, each an id (their sorted order)."""

    def __init__(self, text: str) -> None:
        if not text:
            raise ValueError("CharVocab: the text is empty")
        self.chars = sorted(set(text))
        self.ids = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.ids[c] for c in text], dtype=np.int64)

    def decode(self, ids: Any) -> str:
        return "".join(self.chars[int(i)] for i in ids)


def windows(tokens: np.ndarray, length: int, stride: int) -> np.ndarray:
    """Rows ``tokens[i * stride : i * stride + length]`` (a copy, so it pickles compactly)."""
    if len(tokens) < length:
        raise ValueError(f"the text has {len(tokens)} characters, fewer than a window of {length}")
    return np.lib.stride_tricks.sliding_window_view(tokens, length)[::stride].copy()


def datasets(
    tokens: np.ndarray, block: int, valid_fraction: float = 0.1
) -> tuple[ArrayDataset, ArrayDataset]:
    """Training chunks of ``2 * block`` characters every ``block // 2`` (a random window of
    ``block + 1`` is cut from each by the loader's transform) and validation windows of
    ``block + 1``, one every `block` characters, from the last `valid_fraction` of the text."""
    split = int(len(tokens) * (1 - valid_fraction))
    train = ArrayDataset(windows(tokens[:split], 2 * block, max(1, block // 2)))
    valid = ArrayDataset(windows(tokens[split:], block + 1, block))
    return train, valid


# -- model -----------------------------------------------------------------------------------------
class CharGpt(Module):
    """``[B, T]`` character ids -> ``[B, T, vocab]`` logits of the next character at each position."""

    tokens: nn.Embedding
    positions: nn.Embedding
    blocks: nn.TransformerEncoder
    norm: nn.LayerNorm
    head: nn.Linear

    def forward(self, ids: Tensor) -> Tensor:
        batch, steps = ids.shape
        device = ids.device
        positions = Tensor.arange(steps, device=device).reshape((1, steps))
        x = self.tokens(ids) + self.positions(positions)
        causal = nn.generate_autoregressive_mask(batch, steps, device)  # True above the diagonal
        x = self.blocks(nn.TransformerEncoderInput(x, mask_attn=causal))
        return self.head(self.norm(x))


@burn.config
class CharGptConfig:
    """The model's sizes: `block` is the longest context it sees."""

    vocab: int
    block: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    dropout: float = 0.1

    def init(self, device: Any) -> CharGpt:
        return CharGpt(
            nn.EmbeddingConfig(self.vocab, self.d_model).init(device),
            nn.EmbeddingConfig(self.block, self.d_model).init(device),
            nn.TransformerEncoderConfig(
                self.d_model,
                4 * self.d_model,
                self.n_heads,
                self.n_layers,
                dropout=self.dropout,
                norm_first=True,
            ).init(device),
            nn.LayerNormConfig(self.d_model).init(device),
            nn.LinearConfig(self.d_model, self.vocab).init(device),
        )


def next_char_step(model: Any, batch: Tensor) -> StepOutput:
    """Cross-entropy of the next character at every position of every window."""
    inputs, targets = batch[:, :-1], batch[:, 1:]
    logits = model(inputs)
    flat_logits = logits.reshape((-1, logits.shape[-1]))
    flat_targets = targets.reshape((-1,))
    return StepOutput(
        loss=nn.CrossEntropyLoss()(flat_logits, flat_targets), output=flat_logits, targets=flat_targets
    )


def warmup_cosine(lr: float, warmup: int, total: int) -> lr_scheduler.SequentialLrScheduler:
    """Linear warm-up from ``lr / warmup`` to `lr` over `warmup` steps, then cosine decay to
    ``lr / 10`` over the remaining steps."""
    warmup = max(1, min(warmup, total - 1))
    return lr_scheduler.SequentialLrSchedulerConfig(
        [
            lr_scheduler.LinearLrSchedulerConfig(lr / warmup, lr, warmup),
            lr_scheduler.CosineAnnealingLrSchedulerConfig(lr, max(1, total - warmup), min_lr=lr / 10),
        ],
        [warmup],
    ).init()


def generate(
    model: Any,
    vocab: CharVocab,
    prompt: str,
    length: int,
    block: int,
    *,
    temperature: float = 0.8,
    seed: int = 0,
) -> str:
    """`length` characters sampled after `prompt`, one at a time, each from the softmax of the
    last position's logits over (at most) the last `block` characters."""
    infer = model.valid()
    device = infer.devices()[0]
    rng = np.random.default_rng(seed)
    ids = list(vocab.encode(prompt))
    for _ in range(length):
        context = np.asarray(ids[-block:], dtype=np.int64)[None]
        logits = infer(Tensor.from_data(context, device=device, kind=Int)).to_numpy()[0, -1]
        scaled = logits.astype(np.float64) / temperature
        probs = np.exp(scaled - scaled.max())
        ids.append(int(rng.choice(len(probs), p=probs / probs.sum())))
    return vocab.decode(ids[len(prompt) :])


# -- training --------------------------------------------------------------------------------------
def train(
    out: str | Path,
    text: str,
    *,
    backend: str = "ndarray",
    epochs: int = 4,
    batch_size: int = 32,
    block: int = 64,
    d_model: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    lr: float = 1e-2,
    warmup: int = 10,
    workers: int = 0,
    seed: int = 0,
    resume: bool = False,
    overwrite: bool = False,
    progress: str = "auto",
    plot: bool = True,
    logger: Literal["csv", "tensorboard", "mlflow"] = "csv",
) -> tuple[TrainingResult, CharVocab, CharGptConfig]:
    """Train the GPT on `text`; returns the `TrainingResult`, the vocabulary and the model's config."""
    vocab = CharVocab(text)
    train_set, valid_set = datasets(vocab.encode(text), block)
    train_loader = DataLoader(
        train_set,
        batch_size,
        shuffle=True,
        seed=seed,
        transform=T.RandomSubsequence(block + 1),
        num_workers=workers,
    )
    valid_loader = DataLoader(valid_set, 128)

    trainer = burn.backend(f"autodiff({backend})")
    trainer.seed(seed)
    config = CharGptConfig(len(vocab), block, d_model, n_heads, n_layers)
    optimizer = optim.AdamWConfig(
        beta_2=0.99, weight_decay=0.01, gradient_clipping=optim.GradientClippingConfig.global_norm(1.0)
    ).init()
    learner = Learner(
        config.init(trainer.default_device()),
        optimizer,
        next_char_step,
        lr=warmup_cosine(lr, warmup, epochs * len(train_loader)),
        num_epochs=epochs,
        metrics=[LossMetric(), AccuracyMetric(), LearningRateMetric()],
        directory=out,
        seed=seed,
        progress=progress,
        plot=plot,
        loggers=["csv"] if logger == "csv" else ["csv", logger],
        hparams={
            "batch_size": batch_size,
            "block": block,
            "max_lr": lr,
            "warmup": warmup,
            "workers": workers,
        },
    )
    result = learner.fit(train_loader, valid_loader, resume=resume, overwrite=overwrite)
    return result, vocab, config


# -- command line ----------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="char_gpt.py")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--text", default=None, help="train on this UTF-8 text file")
    source.add_argument(
        "--module", default="textwrap", help="else on this stdlib module's source (%(default)s)"
    )
    parser.add_argument("--out", default="runs/char-gpt", help="checkpoints, metrics (default %(default)s)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block", type=int, default=64, help="context length in characters")
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-2, help="peak learning rate")
    parser.add_argument("--warmup", type=int, default=10, help="warm-up steps")
    parser.add_argument("--workers", type=int, default=0, help="loader worker processes (0: in this one)")
    parser.add_argument(
        "--sample", type=int, default=200, help="characters to generate after training (0: none)"
    )
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--backend", default="ndarray", help="training runs on autodiff(BACKEND)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    parser.add_argument("--overwrite", action="store_true", help="start over in an --out that holds a run")
    parser.add_argument("--progress", choices=["auto", "bar", "plain", "none"], default="auto")
    parser.add_argument("--logger", choices=["csv", "tensorboard", "mlflow"], default="csv")
    args = parser.parse_args(argv)
    for name in ("epochs", "batch_size", "block", "d_model", "layers", "heads", "warmup"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.d_model % args.heads:
        parser.error(f"--d-model ({args.d_model}) must be a multiple of --heads ({args.heads})")
    for name in ("workers", "sample"):
        if getattr(args, name) < 0:
            parser.error(f"--{name} must be 0 or more, got {getattr(args, name)}")
    if not 0 < args.lr <= 1:
        parser.error(f"--lr must be in (0, 1], got {args.lr}")
    if args.temperature <= 0:
        parser.error(f"--temperature must be positive, got {args.temperature}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        text = load_text(args.text, args.module)
    except (OSError, ImportError, TypeError, UnicodeDecodeError) as exc:
        print(f"char_gpt.py: cannot read the text: {exc}", file=sys.stderr)
        return 2
    source = args.text or f"the source of {args.module}"
    print(
        f"char_gpt: {len(text)} characters of {source}; {args.workers} loader workers; output in {args.out}"
    )
    start = time.perf_counter()
    try:
        result, vocab, config = train(
            args.out,
            text,
            backend=args.backend,
            epochs=args.epochs,
            batch_size=args.batch_size,
            block=args.block,
            d_model=args.d_model,
            n_layers=args.layers,
            n_heads=args.heads,
            lr=args.lr,
            warmup=args.warmup,
            workers=args.workers,
            seed=args.seed,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=args.progress,
            logger=args.logger,
        )
    except FileExistsError as exc:
        print(
            f"char_gpt.py: {exc}; on the command line: --resume, --overwrite or another --out",
            file=sys.stderr,
        )
        return 2
    except ValueError as exc:  # a text shorter than a window
        print(f"char_gpt.py: {exc}", file=sys.stderr)
        return 2
    valid = result.history.last("valid")
    print(
        f"trained {result.epoch} epochs in {time.perf_counter() - start:.1f} s; vocabulary {len(vocab)} "
        f"characters; valid loss {valid['loss']:.4f}, next-character accuracy {valid['accuracy']:.4f}"
    )
    print(f"metrics: {result.files.get('csv')}")
    if args.sample:
        prompt = text[: min(len(text), config.block // 2)]
        print(f"--- {args.sample} characters after {prompt!r}:")
        print(
            generate(
                result.model,
                vocab,
                prompt,
                args.sample,
                config.block,
                temperature=args.temperature,
                seed=args.seed,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
