"""Peak memory of `burn.record.load_pytorch` on a 100M-parameter ``torch.save`` checkpoint.

Usage: ``python bench/load_pytorch_memory.py [--keep PATH]``; prints a Markdown table and one
JSON line. Needs torch to write the checkpoint (in a process of its own); the load runs in
another fresh process that never imports torch (checked), and torch.load of the same file in a
third, for reference.

The model is 25 ``Linear(2000, 2000)`` layers: 100,050,000 float32 params (382 MiB), like the
save/load section of ``bench/run.py``. Measure: resident set size. In the loading process, after
the imports and after building the burn model with lazy params (nothing allocated), the kernel's
RSS high-water mark is reset (``echo 5 > /proc/self/clear_refs``) and the current RSS taken as
baseline; the result is the high-water mark after the load minus that baseline, divided by the
model's size. The goal is at most 1.3x: the loaded params (1x) plus what the reader holds at once
(one tensor's bytes read from the zip, and its transposed copy for a Linear weight).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAYERS, D = 25, 2000
PARAMS = LAYERS * (D * D + D)

WRITE = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(@D@, @D@) for _ in range(@LAYERS@)])
torch.save(model.state_dict(), @PATH@)
"""

LOAD_BURN = r"""
import gc, json, sys, time
sys.path.insert(0, @BENCH@)
from memprobe import reset_peak, status_kib
import burn
from burn import nn
from burn.record import load_pytorch


class Stack(burn.Module):
    layers: list


dev = burn.backend("ndarray").default_device()
model = Stack([nn.LinearConfig(@D@, @D@).init(dev) for _ in range(@LAYERS@)])
gc.collect()
exact = reset_peak()
baseline = status_kib("VmRSS")
start = time.perf_counter()
model = load_pytorch(@PATH@, model, key_remap=[(r"^(\d+)\.", r"layers.\1.")])
seconds = time.perf_counter() - start
peak = status_kib("VmHWM")
assert "torch" not in sys.modules, "torch was imported"
assert model.layers[-1].weight.val().to_numpy().shape == (@D@, @D@)
print(json.dumps({"peak": (peak - baseline) * 1024, "baseline": baseline * 1024,
                  "seconds": seconds, "exact": exact}))
"""

LOAD_TORCH = """
import gc, json, sys, time
sys.path.insert(0, @BENCH@)
from memprobe import reset_peak, status_kib
import torch
torch.zeros(1)
gc.collect()
exact = reset_peak()
baseline = status_kib("VmRSS")
start = time.perf_counter()
state = torch.load(@PATH@, weights_only=True)
seconds = time.perf_counter() - start
peak = status_kib("VmHWM")
print(json.dumps({"peak": (peak - baseline) * 1024, "baseline": baseline * 1024,
                  "seconds": seconds, "exact": exact}))
"""


def run(template: str, **values: object) -> dict[str, float]:
    """Run `template` (``@NAME@`` replaced by ``repr(values[name])``) in a fresh interpreter."""
    code = template
    for name, value in {"D": D, "LAYERS": LAYERS, **values}.items():
        code = code.replace(f"@{name.upper()}@", repr(value))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the checkpoint here and keep it")
    args = parser.parse_args()
    bench = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(args.keep or Path(tmp) / "model.pt")
        start = time.perf_counter()
        if not os.path.exists(path):
            run(WRITE + "print('{}')", path=path)
        written = time.perf_counter() - start
        size = PARAMS * 4
        burn_row = run(LOAD_BURN, path=path, bench=bench)
        torch_row = run(LOAD_TORCH, path=path, bench=bench)
    mib = 1 << 20
    print(f"checkpoint: {PARAMS:,} float32 params ({size / mib:.0f} MiB), written in {written:.1f} s")
    print()
    print("| loader | peak over baseline (MiB) | / model size | baseline RSS (MiB) | load (s) |")
    print("|---|---:|---:|---:|---:|")
    for name, row in (("burn load_pytorch", burn_row), ("torch.load(weights_only=True)", torch_row)):
        print(
            f"| {name} | {row['peak'] / mib:.0f} | {row['peak'] / size:.2f} | "
            f"{row['baseline'] / mib:.0f} | {row['seconds']:.2f} |"
        )
    print()
    print(json.dumps({"params": PARAMS, "model_bytes": size, "burn": burn_row, "torch": torch_row}))


if __name__ == "__main__":
    main()
