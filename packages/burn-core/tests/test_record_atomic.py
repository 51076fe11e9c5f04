"""Saving is atomic (a crash or SIGKILL mid-save leaves the previous file) and lazy (at most one
converted tensor at a time)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from test_record_support import Linear, assert_same_values, backend, make_net, values

import burn
from burn import record
from burn.module import Module, Param

FILE_RECORDERS = [cls for cls in record.ALL_RECORDERS if cls.extension]


def _temp_files(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
def test_sigkill_mid_save_leaves_the_previous_file_loadable(tmp_path):
    B = backend("ndarray")  # noqa: N806
    previous = make_net(B, seed=1)
    target = previous.save_file(tmp_path / "model", record.NamedMpkGzFileRecorder())
    before = target.read_bytes()
    # The child overwrites the same path with a large model (gzip makes the save last ~1 s).
    child = textwrap.dedent(
        f"""
        import sys, numpy as np, burn
        from burn import record
        from burn.module import Module, Param
        import burn_ndarray
        B = burn_ndarray.NdArray()
        class Big(Module):
            params: list
        rng = np.random.default_rng(0)
        def param():
            values = rng.standard_normal(1 << 20, dtype="float32")
            return Param.from_tensor(burn.Tensor.from_data(values, backend=B))
        big = Big([param() for _ in range(12)])
        print("saving", flush=True)
        big.save_file({str(tmp_path / "model")!r}, record.NamedMpkGzFileRecorder())
        print("saved", flush=True)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "saving"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            temps = _temp_files(tmp_path)
            if temps and temps[0].stat().st_size > 1 << 20:  # well into writing the new file
                break
            assert proc.poll() is None, "the child finished before it could be killed"
            time.sleep(0.002)
        else:
            pytest.fail("the child never started writing")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == before
    loaded = make_net(B, seed=2).load_file(target, record.NamedMpkGzFileRecorder())
    assert_same_values(values(loaded), values(previous))
    assert _temp_files(tmp_path)  # the killed writer's partial temp file, never the target


class _Exploding(Module):
    first: Linear
    second: Param


class _Boom(RuntimeError):
    pass


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS, ids=lambda c: c.__name__)
def test_a_failed_save_leaves_the_old_file_and_no_temp(recorder_cls, tmp_path, monkeypatch):
    B = backend("ndarray")  # noqa: N806
    net = make_net(B)
    recorder = recorder_cls()
    path = net.save_file(tmp_path / "net", recorder)
    before = path.read_bytes()
    from burn.record import _tree

    calls = {"n": 0}
    original = _tree.TensorRef.array

    def fail_on_third(self):  # the third tensor fails: the file is half written by then
        calls["n"] += 1
        if calls["n"] == 3:
            raise _Boom("disk on fire")
        return original(self)

    monkeypatch.setattr(_tree.TensorRef, "array", fail_on_third)
    with pytest.raises(_Boom):
        make_net(B, seed=5).save_file(tmp_path / "net", recorder)
    assert path.read_bytes() == before
    assert _temp_files(tmp_path) == []


def test_saved_file_permissions_follow_the_umask(tmp_path):
    B = backend("ndarray")  # noqa: N806
    old = os.umask(0o022)
    try:
        path = make_net(B).save_file(tmp_path / "net")
    finally:
        os.umask(old)
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o644


class _Wide(Module):
    params: list


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS, ids=lambda c: c.__name__)
def test_half_precision_save_holds_one_converted_tensor_at_a_time(recorder_cls, tmp_path):
    """8 float32 params of 1 MiB: all of them converted to float16 would be 4 MiB; the save may
    hold one converted tensor (0.5 MiB) plus encoder buffers, never all of them."""
    B = backend("ndarray")  # noqa: N806
    rng = np.random.default_rng(0)
    model = _Wide(
        [
            Param.from_tensor(
                burn.Tensor.from_data(rng.standard_normal(1 << 18).astype(np.float32), backend=B)
            )
            for _ in range(8)
        ]
    )
    recorder = recorder_cls(record.HalfPrecisionSettings())
    rec = model.into_record()
    tracemalloc.start()
    try:
        recorder.record(rec, tmp_path / "wide")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    one_f32 = 4 << 18
    assert peak < 2 * one_f32, f"peak {peak} bytes: more than one converted tensor held at once"
    loaded = _Wide([Param.from_tensor(burn.Tensor.zeros((1 << 18,), backend=B)) for _ in range(8)]).load_file(
        tmp_path / "wide", recorder
    )
    np.testing.assert_array_equal(
        loaded.params[3].val().to_numpy(),
        model.params[3].val().to_numpy().astype(np.float16).astype(np.float32),
    )


def test_loading_builds_params_one_at_a_time(tmp_path):
    """Loading a float16 file into a float32 model allocates each float32 param in turn next to the
    file's buffer: the peak stays near file + model, with no second copy of either."""
    B = backend("ndarray")  # noqa: N806
    rng = np.random.default_rng(0)
    n, size = 16, 1 << 18
    model = _Wide(
        [
            Param.from_tensor(burn.Tensor.from_data(rng.standard_normal(size).astype(np.float32), backend=B))
            for _ in range(n)
        ]
    )
    recorder = record.NamedMpkFileRecorder(record.HalfPrecisionSettings())
    path = model.save_file(tmp_path / "wide", recorder)
    target = _Wide([Param.from_tensor(burn.Tensor.zeros((size,), backend=B)) for _ in range(n)])
    tracemalloc.start()
    try:
        loaded = target.load_file(path, recorder)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    file_size, model_size = path.stat().st_size, n * size * 4
    assert peak < file_size + model_size + (1 << 20)
    assert loaded.params[0].val().dtype == burn.float32


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS, ids=lambda c: c.__name__)
def test_the_temp_file_is_complete_and_fsynced_before_replacing(recorder_cls, tmp_path, monkeypatch):
    from burn.record import _io

    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        proc_fd = f"/proc/self/fd/{fd}"
        events.append(("fsync", os.readlink(proc_fd) if os.path.exists(proc_fd) else "?"))
        real_fsync(fd)

    def replace(src: str | Path, dst: str | Path) -> None:
        src = Path(src)
        # What is about to become the target is already a full, loadable record.
        loaded = recorder_cls().load(src.read_bytes(), template=net) if src.exists() else None
        events.append(("replace", f"{src.name} -> {Path(dst).name}; loads: {loaded is not None}"))
        real_replace(src, dst)

    monkeypatch.setattr(_io.os, "fsync", fsync)
    monkeypatch.setattr(_io.os, "replace", replace)
    net = make_net(backend("ndarray"))
    path = net.save_file(tmp_path / "net", recorder_cls())
    kinds = [kind for kind, _ in events]
    assert kinds[:2] == ["fsync", "replace"], events  # the temp file, synced, then renamed
    if os.path.exists("/proc/self/fd"):
        assert events[0][1].endswith(".tmp") and Path(events[0][1]).parent == tmp_path
    assert events[1][1].endswith(f"-> {path.name}; loads: True")
    assert not _temp_files(tmp_path)
