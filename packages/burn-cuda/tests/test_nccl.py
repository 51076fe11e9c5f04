"""The nccl collective engine. Without a GPU: its probe's reasons, its entry point and `burn engines`
row, its discovery importing nothing heavy, its clear errors. With GPUs (and CuPy's NCCL, burn-mpi):
every collective on every dtype against NumPy under ``mpiexec``, 1 process on 1 GPU and 2 processes
on 2 GPUs (NCCL refuses two ranks on one GPU)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import burn.distributed as dist
from burn.cli import main as burn_main
from burn.distributed.errors import DistributedError
from burn.distributed.registry import EngineRegistry
from burn_cuda import plugin

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = Path(__file__).parent / "scripts"
ENTRY_POINT = importlib.metadata.EntryPoint(
    name="nccl", value="burn_cuda.plugin:collectives", group="burn.collectives"
)


@pytest.fixture(autouse=True)
def fresh_group() -> Iterator[None]:
    dist.shutdown()
    yield
    dist.shutdown()


def _fake_cupy(monkeypatch: pytest.MonkeyPatch, nccl_available: bool) -> None:
    cupy, cuda, nccl = (types.ModuleType(n) for n in ("cupy", "cupy.cuda", "cupy.cuda.nccl"))
    nccl.available = nccl_available  # type: ignore[attr-defined]
    cuda.nccl = nccl  # type: ignore[attr-defined]
    cupy.cuda = cuda  # type: ignore[attr-defined]
    for name, module in (("cupy", cupy), ("cupy.cuda", cuda), ("cupy.cuda.nccl", nccl)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(plugin, "_probe", lambda: None)  # the GPU itself is fine


# -- without a GPU -----------------------------------------------------------------------------------
@pytest.mark.no_device
def test_probe_gives_the_backends_reason_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert plugin._nccl_probe() == "cupy is not installed: pip install burn-cuda[cuda12] (or [cuda13])"
    monkeypatch.setattr(plugin, "_probe", lambda: "no CUDA device: cupy found 0 devices")
    assert plugin._nccl_probe() == "no CUDA device: cupy found 0 devices"


@pytest.mark.no_device
def test_probe_without_nccl_in_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_cupy(monkeypatch, nccl_available=False)
    reason = plugin._nccl_probe()
    assert reason is not None and reason.startswith("CuPy cannot load the NCCL library")
    assert "nvidia-nccl-cu12" in reason


@pytest.mark.no_device
@pytest.mark.parametrize("missing", ["mpi4py", "burn_mpi"])
def test_probe_without_mpi(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    _fake_cupy(monkeypatch, nccl_available=True)
    real = importlib.util.find_spec
    present = object()  # the other MPI piece counts as installed, whether this env has it or not

    def find_spec(name: str, *args: object) -> object:
        if name == missing:
            return None
        return present if name in ("mpi4py", "burn_mpi") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    reason = plugin._nccl_probe()
    assert reason == (
        f"{missing} is not installed: the nccl engine starts through MPI; pip install "
        "'burn-cuda[nccl]' (burn-mpi with mpi4py and MPICH from wheels)"
    )


@pytest.mark.no_device
def test_probe_passes_with_every_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mpi4py")
    pytest.importorskip("burn_mpi")
    _fake_cupy(monkeypatch, nccl_available=True)
    assert plugin._nccl_probe() is None


@pytest.mark.no_device
def test_entry_point_and_extra_are_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["burn.collectives"] == {"nccl": ENTRY_POINT.value}
    assert project["optional-dependencies"]["nccl"] == ["burn-mpi[mpich]"]
    assert ENTRY_POINT.load() is plugin.collectives
    try:  # installed (tox): the metadata carries the entry point too
        installed = importlib.metadata.distribution("burn-cuda")
    except importlib.metadata.PackageNotFoundError:
        return
    assert [ep.value for ep in installed.entry_points if ep.group == "burn.collectives"] == [
        ENTRY_POINT.value
    ]


@pytest.mark.no_device
def test_burn_engines_lists_nccl_with_its_reason(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BURN_STRICT_PLUGINS", raising=False)
    monkeypatch.setattr(plugin, "_probe", lambda: "no CUDA device: cupy found 0 devices")
    registry = EngineRegistry(entry_points=lambda: [ENTRY_POINT])
    monkeypatch.setattr(dist.registry, "REGISTRY", registry)
    assert burn_main(["engines", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["name"], row["kind"], row["package"], row["status"]) == (
        "nccl",
        "engine",
        "burn-cuda",
        "unavailable",
    )
    assert row["reason"] == "no CUDA device: cupy found 0 devices"
    with pytest.raises(DistributedError, match="cannot run here: no CUDA device: cupy found 0 devices"):
        dist.init("nccl")


@pytest.mark.no_device
def test_discovery_imports_neither_cupy_nor_mpi4py() -> None:
    code = textwrap.dedent(
        """
        import json, sys
        import burn
        before = set(sys.modules)
        import burn_cuda.plugin as plugin
        plugin.collectives.burn_collective_engines()
        print(json.dumps(sorted(set(sys.modules) - before)))
        """
    )
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    new = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(new) <= {"burn_cuda", "burn_cuda._version", "burn_cuda.plugin"}, new


@pytest.mark.no_device
def test_the_engine_says_what_to_install_without_burn_mpi(monkeypatch: pytest.MonkeyPatch) -> None:
    from burn_cuda.nccl import NcclEngine

    monkeypatch.setitem(sys.modules, "burn_mpi", None)
    monkeypatch.setitem(sys.modules, "burn_mpi.engine", None)
    with pytest.raises(DistributedError, match=r"needs burn-mpi: pip install 'burn-cuda\[nccl\]'"):
        NcclEngine()


# -- on GPUs -----------------------------------------------------------------------------------------
def _gpus() -> int:
    reason = plugin._nccl_probe()
    if reason is not None:
        pytest.skip(f"nccl unavailable: {reason}")
    import cupy

    return int(cupy.cuda.runtime.getDeviceCount())


def _mpiexec() -> str:
    beside = Path(sys.executable).parent / "mpiexec"  # burn-mpi[mpich]'s launcher
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec: pip install 'burn-cuda[nccl]'")
    return found


@pytest.mark.parametrize("n", [1, 2])
def test_every_collective_every_dtype_matches_numpy(n: int) -> None:
    gpus = _gpus()
    if gpus < n:
        pytest.skip(f"{n} ranks need {n} GPUs (NCCL allows one rank per GPU); this machine has {gpus}")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("BURN_DISTRIBUTED_TIMEOUT", "120")
    cmd = [_mpiexec(), "-n", str(n), sys.executable, str(SCRIPTS / "nccl_collectives.py")]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    out: Any = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert out.count("nccl collectives on cuda") == n, out
