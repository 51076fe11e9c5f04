"""Scaling curves of the MLP training step (784-w-w-10, Adam): batch 32 -> 1024 at width 512, and
width 128 -> 4096 at batch 128; burn autodiff(ndarray) vs torch vs the NumPy floor."""

from __future__ import annotations

import dataclasses

from harness import Row, Settings, Table, setup_torch, timed_row

from sections.mlp import build


def curve(label: str, points: list[tuple[int, int]], settings: Settings) -> list[Row]:
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    rows = []
    for width, batch in points:
        w = build(backend, torch, [784, width, width, 10], batch)
        fns = {k: v.step if v else None for k, v in w.items()}
        case = f"{label} {batch if label == 'batch' else width}"
        rows.append(timed_row(case, fns, settings, "ms", warmup=1))
        del w, fns
    return rows


def run(settings: Settings) -> list[Table]:
    settings = dataclasses.replace(settings, repeats=min(settings.repeats, 5))
    batches = [32, 256] if settings.quick else [32, 64, 128, 256, 512, 1024]
    widths = [128, 1024] if settings.quick else [128, 256, 512, 1024, 2048, 4096]
    return [
        Table("MLP step vs batch (784-512-512-10)", curve("batch", [(512, b) for b in batches], settings)),
        Table(
            "MLP step vs width (784-w-w-10, batch 128)", curve("width", [(w, 128) for w in widths], settings)
        ),
    ]
