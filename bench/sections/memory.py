"""Peak memory of the MLP training loop: each library in its own subprocess (`memprobe.py`),
peak RSS over the baseline taken after imports and data (see memprobe.py for why RSS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from harness import Row, Settings, Table

PROBE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "memprobe.py")


def probe(lib: str, width: int, batch: int, steps: int) -> dict[str, object] | None:
    out = subprocess.run(
        [sys.executable, PROBE, lib, str(width), str(batch), str(steps)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        print(f"memprobe {lib} failed: {out.stderr.strip()[-500:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(settings: Settings) -> list[Table]:
    steps = 10 if settings.quick else 50
    configs = [(512, 128)] if settings.quick else [(512, 128), (2048, 128)]
    rows, methods = [], set()
    for width, batch in configs:
        peaks: dict[str, float | None] = {}
        for lib in ("burn", "torch", "numpy"):
            result = probe(lib, width, batch, steps)
            peaks[lib] = float(result["peak_bytes"]) if result else None  # type: ignore[arg-type]
            if result:
                methods.add(str(result["method"]))
        case = f"MLP 784-{width}-{width}-10, batch {batch}, {steps} steps"
        rows.append(Row(case, peaks["burn"], peaks["torch"], peaks["numpy"], unit="MiB"))
    note = (
        f"peak RSS over the post-import baseline, one subprocess per library ({', '.join(sorted(methods))})"
    )
    return [Table("peak memory of the MLP training loop (MiB)", rows, notes=[note])]
