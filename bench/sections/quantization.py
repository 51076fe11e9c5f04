"""Dynamic int8 Linear: burn's `quantize(model, "int8")` (int8 weights per output channel) against
its own float32 Linear and torch's `torch.ao.quantization.quantize_dynamic` (its default: int8
weights per tensor; both quantize the activations at run time), all three timed interleaved: on
the Linear shapes of a BERT-style encoder (hidden 256, 4 heads, feed-forward 1024, 4 layers) and a
GPT-2-style decoder (hidden 768, 12 heads, feed-forward 3072, 12 layers) at 1024 rows (8 sequences
of 128 tokens), 8 and 1 (decoding steps); then whole models at 8 x 128 tokens: the BERT-style
encoder (4 post-norm layers) and a GPT-2-style stack (2 of its pre-norm layers, causal mask), as
`burn.nn.TransformerEncoder` against `torch.nn.TransformerEncoder` (torch's attention output
projection is a ``NonDynamicallyQuantizableLinear``: it stays float32 there, int8 in burn).

Then the weight-only schemes (``"int8-weight"``, ``"int4-weight"``: float activations, the stored
weight multiplied by `burn.tensor.module.dequantized_linear`) against burn's and torch's float32
Linear, on a GPT-2-sized feed-forward Linear (768 -> 3072) at 1 row (decoding), 8 and 1024."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Row, Settings, Table, setup_torch, time_side_by_side

# name: (hidden, heads, feed-forward, layers) of the model the Linear shapes come from.
MODELS = {"BERT-style": (256, 4, 1024, 4), "GPT-2-style": (768, 12, 3072, 12)}
# Layers of the GPT-2-style stack timed whole (12 would take minutes a round on this CPU).
GPT2_TIMED_LAYERS = 2


def _shapes(hidden: int, ffn: int) -> list[tuple[int, int]]:
    """(d_input, d_output) per layer: fused QKV, attention output, feed-forward up and down."""
    return [(hidden, 3 * hidden), (hidden, hidden), (hidden, ffn), (ffn, hidden)]


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


def _model(backend: Any, torch: Any, name: str) -> dict[str, Any]:
    """burn int8, burn float32 and torch int8 of one whole model at 8 x 128 tokens."""
    from burn import Tensor, nn
    from burn.quantization import quantize

    hidden, heads, ffn, layers = MODELS[name]
    gpt2 = name == "GPT-2-style"
    layers = GPT2_TIMED_LAYERS if gpt2 else layers
    model = nn.TransformerEncoderConfig(hidden, ffn, heads, layers, dropout=0.0, norm_first=gpt2).init(
        backend.default_device()
    )
    q = quantize(model, "int8")
    rng = np.random.default_rng(hidden)
    x = rng.standard_normal((8, 128, hidden)).astype(np.float32)
    bx = Tensor.from_data(x, backend=backend)
    mask = nn.generate_autoregressive_mask(8, 128, bx.device) if gpt2 else None
    inp = nn.TransformerEncoderInput(bx, mask_attn=mask)
    fns: dict[str, Any] = {"int8": lambda: q(inp), "float32": lambda: model(inp), "torch": None}
    if torch is not None:
        layer = torch.nn.TransformerEncoderLayer(
            hidden, heads, ffn, dropout=0.0, activation="gelu", batch_first=True, norm_first=gpt2
        )
        tm = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
        tq = torch.ao.quantization.quantize_dynamic(tm, {torch.nn.Linear}, dtype=torch.qint8)
        tx = torch.from_numpy(x)
        t_mask = torch.nn.Transformer.generate_square_subsequent_mask(128) if gpt2 else None

        def run_torch() -> object:
            # The layers' fast path reads each Linear's `weight` as a tensor; a dynamically
            # quantized Linear's is a method, so the path is turned off for the call.
            fast = torch.backends.mha.get_fastpath_enabled()
            torch.backends.mha.set_fastpath_enabled(False)
            try:
                with torch.no_grad():
                    return tq(tx, mask=t_mask, is_causal=gpt2)
            finally:
                torch.backends.mha.set_fastpath_enabled(fast)

        fns["torch"] = run_torch
    return fns


_NOTE = (
    "first ratio: burn int8 / burn float32 (issue 37's target: <= 0.5); second: burn int8 / "
    "torch dynamic int8 (target: <= 1.0)"
)


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("ndarray"), setup_torch()
    tables = _weight_only_tables(backend, torch, settings)
    for name, (hidden, _, ffn, layers) in MODELS.items():
        for rows in (1024, 8, 1):
            out, totals = [], {"int8": 0.0, "float32": 0.0, "torch": 0.0}
            for d_in, d_out in _shapes(hidden, ffn):
                t = time_side_by_side(_contenders(backend, torch, rows, d_in, d_out), settings)
                out.append(Row(f"{rows}x{d_in} -> {d_out}", t["int8"], t["float32"], t["torch"], unit="ms"))
                for k in totals:
                    totals[k] += (t[k] or 0.0) * layers
            out.append(
                Row(
                    f"{layers} layers' Linears",
                    totals["int8"],
                    totals["float32"],
                    totals["torch"] or None,
                    unit="ms",
                )
            )
            tables.append(
                Table(
                    f"Dynamic int8 Linear, {name} shapes, {rows} rows",
                    out,
                    labels=("burn int8", "burn float32", "torch int8"),
                    notes=[_NOTE],
                )
            )
    out = []
    for name in MODELS:
        t = time_side_by_side(_model(backend, torch, name), settings)
        layers = GPT2_TIMED_LAYERS if name == "GPT-2-style" else MODELS[name][3]
        out.append(
            Row(f"{name}, {layers} layers, 8 x 128 tokens", t["int8"], t["float32"], t["torch"], unit="ms")
        )
    tables.append(
        Table(
            "Dynamic int8 models (quantize(model, 'int8'))",
            out,
            labels=("burn int8", "burn float32", "torch int8"),
            notes=[_NOTE],
        )
    )
    return tables
