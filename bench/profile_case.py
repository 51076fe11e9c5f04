"""Profile one burn case of the suite with pyinstrument (``pip install pyinstrument``).

Usage: ``python bench/profile_case.py {mlp,cnn,adam25m,load,save} [--threads 1] [--steps N]``;
prints pyinstrument's call tree of the burn side only (the frames that bound it).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path


def case(name: str) -> tuple[Callable[[], object], int]:
    """The burn closure of `name`, warmed up, and how many calls to profile."""
    import numpy as np
    from workloads.common import classification_batch

    import burn

    ad = burn.backend("autodiff(ndarray)")
    if name == "mlp":
        from workloads.mlp import burn_mlp, init_weights

        x, y = classification_batch(np.random.default_rng(1), (128, 784))
        w = burn_mlp(ad, init_weights([784, 512, 512, 10]), x, y)
        fn, calls = w.step, 100
    elif name == "cnn":
        from workloads.cnn import burn_cnn, init_weights

        x, y = classification_batch(np.random.default_rng(1), (64, 1, 28, 28))
        fn, calls = burn_cnn(ad, init_weights(), x, y).step, 20
    elif name == "adam25m":
        from sections.adam import burn_step

        rng = np.random.default_rng(0)
        p, g = (
            rng.standard_normal(25_000_000, dtype=np.float32),
            rng.standard_normal(25_000_000, dtype=np.float32),
        )
        fn, calls = burn_step(burn.backend("ndarray"), [p], [g]), 10
    elif name in ("load", "save"):
        from sections.record import models

        from burn import record

        model, lazy = models(100_000_000)
        path = Path(tempfile.mkdtemp()) / "model"
        recorder = record.NamedMpkFileRecorder()
        model.save_file(path, recorder)
        if name == "save":
            fn, calls = (lambda: model.save_file(path, recorder)), 3
        else:
            fn, calls = (lambda: lazy().load_file(path, recorder)), 3
    else:
        raise SystemExit(f"unknown case {name}")
    fn()
    fn()
    return fn, calls


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("case", choices=["mlp", "cnn", "adam25m", "load", "save"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=0, help="calls to profile (default per case)")
    args = parser.parse_args()
    from harness import pin_threads

    pin_threads(args.threads)
    from pyinstrument import Profiler

    fn, calls = case(args.case)
    profiler = Profiler(interval=0.0005)
    with profiler:
        for _ in range(args.steps or calls):
            fn()
    print(profiler.output_text(unicode=False, color=False, show_all=False, short_mode=False))


if __name__ == "__main__":
    main()
