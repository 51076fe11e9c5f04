"""Save and load of a 100M-parameter model: burn's recorders vs torch.save/torch.load and the
safetensors library, and cold start (lazy model + load_file) vs reading the file's bytes alone.

Files are read back right after they are written, so loads run from the page cache: they measure
the library, not the disk. numpy column = the floor: writing the same bytes with plain file calls,
reading the file with ``np.fromfile``. The safetensors library maps the file and reads nothing
until a tensor is used, so its load time is not comparable with loads that read the data.
burn's saves are atomic and durable (temp file + fsync + rename); the ``+fsync`` rows give torch and
the floor the same fsync, for a like-for-like comparison."""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from harness import Fn, Row, Settings, Table, setup_torch, time_side_by_side

D = 2000  # square layers of D x D + bias


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


def models(n_params: int) -> tuple[Any, Callable[[], Any]]:
    """A model of about `n_params` float32 params, and a builder of the same model with lazy
    (uninitialized) params, which is what `Config.init(device)` gives."""
    import burn
    from burn.module import Module, Param

    class Layer(Module):
        weight: Param
        bias: Param

    class Model(Module):
        layers: list

    backend = burn.backend("ndarray")
    device = backend.default_device()
    count = max(1, round(n_params / (D * D + D)))
    rng = np.random.default_rng(0)

    def param(shape: tuple[int, ...]) -> Param:
        return Param.from_tensor(
            burn.Tensor.from_data(rng.standard_normal(shape, dtype=np.float32), device=device)
        )

    def lazy(shape: tuple[int, ...]) -> Param:
        return Param.uninitialized(lambda dev, _g: burn.Tensor.zeros(shape, device=dev), shape, device)

    model = Model([Layer(param((D, D)), param((D,))) for _ in range(count)])
    return model, lambda: Model([Layer(lazy((D, D)), lazy((D,))) for _ in range(count)])


def run(settings: Settings) -> list[Table]:
    from burn import record

    n_params, repeats = (10_000_000, 2) if settings.quick else (100_000_000, 5)
    model, lazy_model = models(n_params)
    total = model.num_params(trainable=False)
    arrays = [np.asarray(p.val().to_numpy()) for p in model.params()]
    torch = setup_torch()
    state = None
    if torch is not None:
        with warnings.catch_warnings():  # read-only views: torch only reads them
            warnings.simplefilter("ignore", UserWarning)
            state = {
                path: torch.from_numpy(a) for (path, _), a in zip(model.named_params(), arrays, strict=True)
            }
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

    once = Settings(settings.quick, min_time=0.0, repeats=repeats)  # one call per round
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        p_torch, p_raw, p_st = d / "model.pt", d / "model.raw", d / "model_lib.safetensors"

        def row(case: str, burn: Fn | None, torch: Fn | None, numpy: Fn | None) -> Row:
            """Best of `repeats` calls each, the three contenders' calls interleaved."""
            t = time_side_by_side({"burn": burn, "torch": torch, "numpy": numpy}, once, warmup=0)
            return Row(case, t["burn"], t["torch"], t["numpy"], unit="ms")

        def torch_save(fsync: bool) -> Fn | None:
            if torch is None:
                return None
            return lambda: (torch.save(state, p_torch), fsync_file(p_torch) if fsync else None)

        def save(recorder: Any, name: str = "model") -> Fn:
            return lambda: model.save_file(d / name, recorder)

        def load(recorder: Any, name: str = "model") -> Fn:
            return lambda: lazy_model().load_file(d / name, recorder)

        def read(name: str) -> Fn:
            return lambda: np.fromfile(d / name, dtype=np.uint8)

        def raw(fsync: bool) -> Fn:
            return lambda: raw_write(arrays, p_raw, fsync)

        st_save = (
            (lambda: (st_torch.save_file(state, str(p_st)), fsync_file(p_st))) if st_torch and state else None
        )
        save_rows = [
            row("named mpk (f32) vs torch.save", save(mpk), torch_save(False), raw(False)),
            row("named mpk (f32) vs torch.save +fsync", save(mpk), torch_save(True), raw(True)),
            row("bin (f32) vs torch.save +fsync", save(bin_), torch_save(True), raw(True)),
            row("safetensors (f32) vs safetensors lib +fsync", save(safe), st_save, raw(True)),
            row("named mpk (f16, converted while writing)", save(half, "half"), None, None),
        ]
        torch_load = (lambda: torch.load(p_torch, weights_only=True)) if torch else None
        st_load = (lambda: st_torch.load_file(str(p_st))) if st_torch and state else None
        load_rows = [
            row("named mpk -> model vs torch.load", load(mpk), torch_load, read("model.mpk")),
            row("bin -> model vs torch.load", load(bin_), torch_load, read("model.bin")),
            row(
                "safetensors -> model vs safetensors lib (mmap, lazy)",
                load(safe),
                st_load,
                read("model.safetensors"),
            ),
            row("named mpk f16 -> f32 model", load(half, "half"), None, read("half.mpk")),
        ]
        # cold start: build the model lazily (as Config.init does) and load it, vs only reading the bytes
        cold_rows = [
            row("lazy model + load_file (mpk) vs np.fromfile", load(mpk), None, read("model.mpk")),
            row("lazy model + load_file (bin) vs np.fromfile", load(bin_), None, read("model.bin")),
            row(
                "lazy model + load_file (mpk) vs Path.read_bytes",
                load(mpk),
                None,
                lambda: (d / "model.mpk").read_bytes(),
            ),
        ]
    header = f"{total:,} float32 params ({total * 4 / 2**20:.0f} MiB), best of {repeats}"
    cold_notes = [
        f"{r.case}: {100 * (r.burn / r.numpy - 1):+.0f}% over reading the bytes"
        for r in cold_rows
        if r.burn and r.numpy
    ]
    return [
        Table(f"save, {header}; numpy = raw write of the same bytes", save_rows),
        Table(f"load, {header}; numpy = np.fromfile of the same file", load_rows),
        Table(f"cold start, {header}; numpy = reading the file alone", cold_rows, notes=cold_notes),
    ]
