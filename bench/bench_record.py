"""Saving and loading a 100M-parameter model: burn's recorders vs torch.save/torch.load and
safetensors, and cold start (lazy model + load_file) vs reading the file's bytes alone.

Run: ``python bench/bench_record.py`` (``--params 10_000_000`` or ``--quick`` for a short run,
``--dir PATH`` to write somewhere else than a temp dir). Files are read back right after they
are written, so loads run from the page cache: they measure the library, not the disk.

Columns: burn; torch (``torch.save``/``torch.load(weights_only=True)``, or the safetensors
library on its rows); numpy = the floor: writing the same bytes with plain file calls, reading
the file with ``np.fromfile``. The safetensors library maps the file and reads nothing until a
tensor is used, so its load time is not comparable to loads that read the data.
burn's saves are atomic and durable (temp file + fsync + rename); the ``+fsync`` rows give torch
and the floor the same fsync, for a like-for-like comparison.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from harness import Row, machine, print_table, setup_torch, threads  # noqa: E402

import burn  # noqa: E402
from burn import record  # noqa: E402
from burn.module import Module, Param  # noqa: E402


class Layer(Module):
    weight: Param
    bias: Param


class Model(Module):
    layers: list


def best_of(fn: Callable[[], object], repeats: int) -> float:
    """Best wall time of `repeats` calls (one call is already hundreds of ms)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def shapes(n_params: int) -> list[tuple[int, int]]:
    """Square-ish layers of 2000 x 2000 (+ bias) adding up to about `n_params`."""
    d = 2000
    return [(d, d)] * max(1, round(n_params / (d * d + d)))


def build(B, layer_shapes, rng) -> Model:  # noqa: N803
    return Model(
        [
            Layer(
                Param.from_tensor(burn.Tensor.from_data(rng.standard_normal(s, dtype=np.float32), backend=B)),
                Param.from_tensor(
                    burn.Tensor.from_data(rng.standard_normal(s[1], dtype=np.float32), backend=B)
                ),
            )
            for s in layer_shapes
        ]
    )


def build_lazy(B, layer_shapes) -> Model:  # noqa: N803
    """What `Config.init(device)` gives: params known by shape, initializers not run."""
    device = B.default_device()

    def lazy(shape):
        return Param.uninitialized(lambda dev, _g: burn.Tensor.zeros(shape, device=dev), shape, device)

    return Model([Layer(lazy(s), lazy((s[1],))) for s in layer_shapes])


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def raw_write(arrays: list[np.ndarray], path: Path, fsync: bool) -> None:
    with open(path, "wb") as f:
        for a in arrays:
            f.write(memoryview(a).cast("B"))
        if fsync:
            f.flush()
            os.fsync(f.fileno())


def run(n_params: int, directory: Path, repeats: int) -> tuple[list[Row], list[Row], list[Row], int]:
    import burn_ndarray

    B = burn_ndarray.NdArray()  # noqa: N806
    rng = np.random.default_rng(0)
    layer_shapes = shapes(n_params)
    model = build(B, layer_shapes, rng)
    total = model.num_params()
    arrays = [np.asarray(p.val().to_numpy()) for p in model.params()]
    torch = setup_torch()
    state = None
    if torch is not None:
        state = {path: torch.from_numpy(np.asarray(p.val().to_numpy())) for path, p in model.named_params()}
    try:
        import safetensors.torch as st_torch
    except ImportError:
        st_torch = None

    mpk, bin_, safe = (
        record.NamedMpkFileRecorder(),
        record.BinFileRecorder(),
        record.SafetensorsFileRecorder(),
    )
    half = record.NamedMpkFileRecorder(record.HalfPrecisionSettings())
    p_torch, p_raw, p_st = (
        directory / "model.pt",
        directory / "model.raw",
        directory / "model_lib.safetensors",
    )

    def torch_save(fsync: bool) -> Callable[[], None] | None:
        if torch is None:
            return None

        def save() -> None:
            torch.save(state, p_torch)
            if fsync:
                fsync_file(p_torch)

        return save

    def timed(fn: Callable[[], object] | None) -> float | None:
        return best_of(fn, repeats) if fn is not None else None

    save_rows = [
        Row(
            "named mpk (f32) vs torch.save",
            timed(lambda: model.save_file(directory / "model", mpk)),
            timed(torch_save(False)),
            timed(lambda: raw_write(arrays, p_raw, False)),
            unit="ms",
        ),
        Row(
            "named mpk (f32) vs torch.save +fsync",
            timed(lambda: model.save_file(directory / "model", mpk)),
            timed(torch_save(True)),
            timed(lambda: raw_write(arrays, p_raw, True)),
            unit="ms",
        ),
        Row(
            "bin (f32) vs torch.save +fsync",
            timed(lambda: model.save_file(directory / "model", bin_)),
            timed(torch_save(True)),
            timed(lambda: raw_write(arrays, p_raw, True)),
            unit="ms",
        ),
        Row(
            "safetensors (f32) vs safetensors lib +fsync",
            timed(lambda: model.save_file(directory / "model", safe)),
            timed(
                (lambda: (st_torch.save_file(state, str(p_st)), fsync_file(p_st)))
                if st_torch and state
                else None
            ),
            timed(lambda: raw_write(arrays, p_raw, True)),
            unit="ms",
        ),
        Row(
            "named mpk (f16, converted while writing)",
            timed(lambda: model.save_file(directory / "half", half)),
            None,
            None,
            unit="ms",
        ),
    ]

    def burn_load(recorder: record.Recorder, name: str) -> Callable[[], object]:
        return lambda: build_lazy(B, layer_shapes).load_file(directory / name, recorder)

    def read(name: str) -> Callable[[], object]:
        # The fastest plain read: into a NumPy buffer (large NumPy allocations get huge pages,
        # which `bytes` does not: Path.read_bytes is slower, see the cold start table).
        return lambda: np.fromfile(directory / name, dtype=np.uint8)

    torch_load = (lambda: torch.load(p_torch, weights_only=True)) if torch else None
    load_rows = [
        Row(
            "named mpk -> model vs torch.load",
            timed(burn_load(mpk, "model")),
            timed(torch_load),
            timed(read("model.mpk")),
            unit="ms",
        ),
        Row(
            "bin -> model vs torch.load",
            timed(burn_load(bin_, "model")),
            timed(torch_load),
            timed(read("model.bin")),
            unit="ms",
        ),
        Row(
            "safetensors -> model vs safetensors lib (mmap, lazy)",
            timed(burn_load(safe, "model")),
            timed((lambda: st_torch.load_file(str(p_st))) if st_torch and state else None),
            timed(read("model.safetensors")),
            unit="ms",
        ),
        Row(
            "named mpk f16 -> f32 model",
            timed(burn_load(half, "half")),
            None,
            timed(read("half.mpk")),
            unit="ms",
        ),
    ]

    # Cold start: build the model lazily and load it, against only reading the file's bytes.
    cold_rows = [
        Row(
            "lazy model + load_file (mpk) vs np.fromfile",
            timed(burn_load(mpk, "model")),
            None,
            timed(read("model.mpk")),
            unit="ms",
        ),
        Row(
            "lazy model + load_file (bin) vs np.fromfile",
            timed(burn_load(bin_, "model")),
            None,
            timed(read("model.bin")),
            unit="ms",
        ),
        Row(
            "lazy model + load_file (mpk) vs Path.read_bytes",
            timed(burn_load(mpk, "model")),
            None,
            timed(lambda: (directory / "model.mpk").read_bytes()),
            unit="ms",
        ),
    ]
    return save_rows, load_rows, cold_rows, total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--params", type=int, default=100_000_000)
    parser.add_argument("--quick", action="store_true", help="10M params, 2 repeats")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to write the files (default: a temp dir)"
    )
    args = parser.parse_args()
    n_params, repeats = (10_000_000, 2) if args.quick else (args.params, args.repeats)
    print(f"# burn record benchmark — {datetime.date.today()} — {machine()}\n")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        save_rows, load_rows, cold_rows, total = run(n_params, Path(tmp), repeats)
    print(
        f"model: {total:,} float32 params ({total * 4 / 2**20:.0f} MiB); "
        f"best of {repeats}; threads: {threads()}\n"
    )
    print_table("save (ms); numpy = raw write of the same bytes", save_rows)
    print_table("load (ms); numpy = np.fromfile of the same file", load_rows)
    print_table("cold start (ms); numpy = reading the file alone", cold_rows)
    for row in cold_rows:
        if row.burn and row.numpy:
            print(f"{row.case}: {100 * (row.burn / row.numpy - 1):+.0f}% over reading the bytes")


if __name__ == "__main__":
    main()
