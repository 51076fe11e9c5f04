"""Real models (issue 34): inference of ResNet-18, MobileNetV3-small, EfficientNet-B0,
ConvNeXt-tiny, ViT-tiny and ViT-base (patch 16, 224), a BERT-style encoder, a GPT-2-style decoder
and an LSTM language model at batch 1 and 8, burn (ONNX import on ndarray) vs onnxruntime vs torch
eager on the same exported weights; and training steps (ResNet-18, ViT-tiny, GPT-2-style, LSTM LM)
of burn autodiff(ndarray) vs torch eager from the same weights, data and Adam, with the losses
after 3 steps compared. Models and export: `workloads.models`. Needs onnx, onnxruntime and
transformers; skipped with a one-line message without them."""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import math
import os
import sys
from typing import Any

import numpy as np
from harness import Row, Settings, Table, setup_torch, threads, time_side_by_side

INFERENCE = ("resnet18", "mobilenet_v3_small", "efficientnet_b0", "convnext_tiny", "vit_tiny",
             "vit_base", "bert", "gpt2", "lstm_lm")  # fmt: skip
TRAINING = ("resnet18", "vit_tiny", "gpt2", "lstm_lm")
# Seconds each engine's round waits, untimed, for the pools of the engine timed before it to go
# idle (`time_side_by_side`): onnxruntime's and torch's workers spin after a call, and at 2
# threads burn's first call after onnxruntime's took 30-34 ms against 11-15 alone
# (MobileNetV3-small, docs/benchmarks-log.md "The second core").
SETTLE = 0.05
QUICK_INFERENCE, QUICK_TRAINING = ("resnet18", "mobilenet_v3_small", "bert", "lstm_lm"), ("lstm_lm",)
OUTPUT_TOLERANCE, LOSS_TOLERANCE = 1e-3, 1e-3  # relative to the largest |output|, to torch's loss


def missing() -> list[str]:
    needed = ("torch", "onnx", "onnxruntime", "transformers")
    return [m for m in needed if importlib.util.find_spec(m) is None]


def loud(message: str) -> str:
    """A mismatch: in the table's notes in bold, and on stderr so that it is seen in a long run."""
    print(f"models: {message}", file=sys.stderr, flush=True)
    return f"**{message}**"


def geometric_mean(rows: list[Row]) -> Row:
    """Geometric means of the times of the rows that have all three; their ratios are then the
    geometric means of the rows' ratios."""
    full = [r for r in rows if r.burn and r.torch and r.numpy]

    def mean(values: list[float]) -> float | None:
        return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None

    return Row(
        "geometric mean", mean([r.burn for r in full]), mean([r.torch for r in full]),  # type: ignore[misc]
        mean([r.numpy for r in full]), unit="ms",  # type: ignore[misc]
    )  # fmt: skip


def inference_table(
    torch: Any, settings: Settings, names: tuple[str, ...], batches: tuple[int, ...]
) -> Table:
    from workloads.models import SPECS, inference

    rows, notes = [], []
    for name in names:
        spec = SPECS[name]
        for batch in batches:
            case = f"{spec.title()}, batch {batch}"
            run = inference(torch, spec, batch, threads())
            out = run.outputs
            scale = float(np.abs(out["torch"]).max())
            diffs = {k: float(np.abs(out[k] - out["torch"]).max()) for k in ("burn", "ort")}
            note = (
                f"{case}: max abs diff to torch: burn {diffs['burn']:.1e}, ort {diffs['ort']:.1e} "
                f"(max |y| {scale:.2g})"
            )
            if diffs["burn"] > OUTPUT_TOLERANCE * max(scale, 1e-30):
                note = loud(f"OUTPUT MISMATCH {note}")
            notes.append(note)
            # the agreement check ran each contender once; calibration calls warm up the rest
            t = time_side_by_side(dict(run.fns), settings, warmup=0, settle=SETTLE)
            rows.append(Row(case, t["burn"], t["ort"], t["torch"], unit="ms"))
            del run
            gc.collect()
    rows.append(geometric_mean(rows))
    title = (
        f"Real models: inference, burn (ONNX import, ndarray) vs onnxruntime vs torch eager, "
        f"{threads()} threads"
    )
    return Table(title, rows, ("burn", "ort", "torch"), notes=notes)


def exact_loss(torch: Any, spec: Any, batch: int, burn_loss: float, torch_loss: float) -> str:
    """The same 3 steps by torch in float64: which float32 side is nearer the exact loss."""
    from workloads.models import torch_training

    reference = torch_training(torch, spec, batch, torch.float64)
    for _ in range(3):
        reference.step()
    exact = reference.loss()
    return (
        f"torch in float64: {exact:.6f} (burn off by {abs(burn_loss - exact) / exact:.1e}, "
        f"torch float32 by {abs(torch_loss - exact) / exact:.1e})"
    )


def training_table(torch: Any, settings: Settings, names: tuple[str, ...], batch: int) -> Table:
    from workloads.models import SPECS, training

    rows, notes = [], []
    for name in names:
        spec = SPECS[name]
        case = f"{spec.title()}, batch {batch}"
        work = training(torch, spec, batch)
        start = work["torch"].loss()
        for _ in range(3):
            for w in work.values():
                w.step()
        burn_loss, torch_loss = work["burn"].loss(), work["torch"].loss()
        rel = abs(burn_loss - torch_loss) / max(abs(torch_loss), 1e-30)
        note = (
            f"{case}: loss {start:.6f} at the start, after 3 steps: burn {burn_loss:.6f}, "
            f"torch {torch_loss:.6f}, rel diff {rel:.1e}"
        )
        if rel > LOSS_TOLERANCE:
            note = loud(f"LOSS MISMATCH {note}; {exact_loss(torch, spec, batch, burn_loss, torch_loss)}")
        notes.append(note)
        # timed from where the 3 steps left off (warm); each step trains on, so both go on alike
        t = time_side_by_side({k: w.step for k, w in work.items()}, settings, warmup=0, settle=SETTLE)
        rows.append(Row(case, t["burn"], t["torch"], None, unit="ms"))
        del work
        gc.collect()
    title = (
        f"Real models: training step (cross-entropy, Adam lr 1e-5), burn autodiff(ndarray) on the "
        f"ONNX import vs torch eager, {threads()} threads"
    )
    notes.append("batch norm on running statistics on both sides (the ONNX import runs it in inference form)")
    return Table(title, rows, ("burn", "torch"), notes=notes)


def chosen(names: tuple[str, ...]) -> tuple[str, ...]:
    """`names` narrowed to those in BURN_BENCH_MODELS (comma-separated), when it is set: one model
    against onnxruntime and torch without the whole section's minutes."""
    wanted = os.environ.get("BURN_BENCH_MODELS")
    if not wanted:
        return names
    keep = {w.strip() for w in wanted.split(",") if w.strip()}
    unknown = keep - set(INFERENCE)
    if unknown:
        known = ", ".join(INFERENCE)
        raise SystemExit(f"BURN_BENCH_MODELS: unknown models {sorted(unknown)}; known: {known}")
    return tuple(n for n in names if n in keep)


def run(settings: Settings) -> list[Table]:
    absent = missing()
    if absent:
        needs = ", ".join(absent)
        return [Table(f"models: not run (needs {needs}: pip install onnx onnxruntime transformers)", [])]
    torch = setup_torch()
    # each case runs for seconds: 3 rounds of best-of, not 7
    settings = dataclasses.replace(settings, repeats=min(settings.repeats, 3))
    if settings.quick:
        return [
            inference_table(torch, settings, QUICK_INFERENCE, (1,)),
            training_table(torch, settings, QUICK_TRAINING, 2),
        ]
    tables = []
    if chosen(INFERENCE):
        tables.append(inference_table(torch, settings, chosen(INFERENCE), (1, 8)))
    if chosen(TRAINING):
        tables.append(training_table(torch, settings, chosen(TRAINING), 8))
    return tables
