"""Dynamic int8 Linear: burn's `quantize(model, "int8")` (int8 weights per output channel) against
its own float32 Linear and torch's `torch.ao.quantization.quantize_dynamic` (its default: int8
weights per tensor; both quantize the activations at run time), on the Linear shapes of a
BERT-style encoder (hidden 256, 4 heads, feed-forward 1024, 4 layers) at 8 sequences of 128
tokens (1024 rows), and one row (a decoding step), all three timed interleaved.

Then the weight-only schemes (``"int8-weight"``, ``"int4-weight"``: float activations, the stored
weight multiplied by `burn.tensor.module.dequantized_linear`) against burn's and torch's float32
Linear, on a GPT-2-sized feed-forward Linear (768 -> 3072) at 1 row (decoding), 8 and 1024."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Row, Settings, Table, setup_torch, time_side_by_side

HIDDEN, FFN, LAYERS = 256, 1024, 4
# (d_input, d_output, per layer): fused QKV, attention output, feed-forward up and down.
SHAPES = [(HIDDEN, 3 * HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, FFN), (FFN, HIDDEN)]


def _contenders(backend: Any, torch: Any, rows: int, d_in: int, d_out: int) -> dict[str, Any]:
    import burn
    from burn import Tensor, nn
    from burn.quantization import quantize

    rng = np.random.default_rng(d_in * 7 + d_out)
    w = (rng.standard_normal((d_in, d_out)) / np.sqrt(d_in)).astype(np.float32)
    b = (rng.standard_normal(d_out) * 0.1).astype(np.float32)
    x = rng.standard_normal((rows, d_in)).astype(np.float32)
    param = burn.Param.from_tensor
    layer = nn.Linear(
        weight=param(Tensor.from_data(w, backend=backend)), bias=param(Tensor.from_data(b, backend=backend))
    )
    q = quantize(layer, "int8")
    bx = Tensor.from_data(x, backend=backend)
    fns: dict[str, Any] = {"int8": lambda: q(bx), "float32": lambda: layer(bx), "torch": None}
    if torch is not None:
        tl = torch.nn.Linear(d_in, d_out)
        with torch.no_grad():
            tl.weight.copy_(torch.from_numpy(w.T.copy()))
            tl.bias.copy_(torch.from_numpy(b))
        tq = torch.ao.quantization.quantize_dynamic(
            torch.nn.Sequential(tl), {torch.nn.Linear}, dtype=torch.qint8
        )
        tx = torch.from_numpy(x)

        def run_torch() -> object:
            with torch.no_grad():
                return tq(tx)

        fns["torch"] = run_torch
    return fns


WEIGHT_ONLY_SHAPE = (768, 3072)


def _weight_only(backend: Any, torch: Any, scheme: str, rows: int) -> dict[str, Any]:
    import burn
    from burn import Tensor, nn
    from burn.quantization import quantize

    d_in, d_out = WEIGHT_ONLY_SHAPE
    rng = np.random.default_rng(rows)
    w = (rng.standard_normal((d_in, d_out)) / np.sqrt(d_in)).astype(np.float32)
    b = (rng.standard_normal(d_out) * 0.1).astype(np.float32)
    x = rng.standard_normal((rows, d_in)).astype(np.float32)
    param = burn.Param.from_tensor
    layer = nn.Linear(
        weight=param(Tensor.from_data(w, backend=backend)), bias=param(Tensor.from_data(b, backend=backend))
    )
    q = quantize(layer, scheme)
    bx = Tensor.from_data(x, backend=backend)
    fns: dict[str, Any] = {"quantized": lambda: q(bx), "float32": lambda: layer(bx), "torch": None}
    if torch is not None:
        tl = torch.nn.Linear(d_in, d_out)
        with torch.no_grad():
            tl.weight.copy_(torch.from_numpy(w.T.copy()))
            tl.bias.copy_(torch.from_numpy(b))
        tx = torch.from_numpy(x)

        def run_torch() -> object:
            with torch.no_grad():
                return tl(tx)

        fns["torch"] = run_torch
    return fns


def _weight_only_tables(backend: Any, torch: Any, settings: Settings) -> list[Table]:
    tables = []
    d_in, d_out = WEIGHT_ONLY_SHAPE
    for scheme in ("int8-weight", "int4-weight"):
        out = []
        for rows in (1, 8, 1024):
            t = time_side_by_side(_weight_only(backend, torch, scheme, rows), settings)
            out.append(Row(f"{rows}x{d_in} -> {d_out}", t["quantized"], t["float32"], t["torch"], unit="ms"))
        tables.append(
            Table(
                f"Weight-only {scheme} Linear (float activations), GPT-2 feed-forward shape",
                out,
                labels=(f"burn {scheme}", "burn float32", "torch float32"),
                notes=[
                    f"first ratio: burn {scheme} / burn float32 (target: <= 1.0 at one row); second: "
                    f"burn {scheme} / torch float32"
                ],
            )
        )
    return tables


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("ndarray"), setup_torch()
    tables = _weight_only_tables(backend, torch, settings)
    for rows, title in ((1024, "8 x 128 tokens"), (1, "one row (decoding)")):
        out, totals = [], {"int8": 0.0, "float32": 0.0, "torch": 0.0}
        for d_in, d_out in SHAPES:
            t = time_side_by_side(_contenders(backend, torch, rows, d_in, d_out), settings)
            out.append(Row(f"{rows}x{d_in} -> {d_out}", t["int8"], t["float32"], t["torch"], unit="ms"))
            for k in totals:
                totals[k] += (t[k] or 0.0) * LAYERS
        out.append(
            Row(
                f"{LAYERS} layers' Linears",
                totals["int8"],
                totals["float32"],
                totals["torch"] or None,
                unit="ms",
            )
        )
        note = (
            "first ratio: burn int8 / burn float32 (issue 37's target: <= 0.5); second: burn int8 / "
            "torch dynamic int8 (target: <= 1.0)"
        )
        tables.append(
            Table(
                f"Dynamic int8 Linear, BERT-style encoder shapes, {title}",
                out,
                labels=("burn int8", "burn float32", "torch int8"),
                notes=[note],
            )
        )
    return tables
