"""Packaging and discovery, without a GPU: the probe's messages, the entry point, the extras."""

from __future__ import annotations

import sys
import tomllib
import types
from pathlib import Path
from typing import Any

import pytest

from burn_cuda import plugin

pytestmark = pytest.mark.no_device

ROOT = Path(__file__).resolve().parents[1]


def _fake_cupy(get_count: Any) -> types.ModuleType:
    module = types.ModuleType("cupy")
    module.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=get_count))  # type: ignore[attr-defined]
    return module


def test_probe_without_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    assert plugin._probe() == "cupy is not installed: pip install burn-cuda[cuda12] (or [cuda13])"


def test_probe_with_zero_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(lambda: 0))
    reason = plugin._probe()
    assert reason is not None and reason.startswith("no CUDA device: cupy found 0 devices")
    assert "burn-cuda[cuda12]" in reason and "driver" in reason


def test_probe_reports_cupys_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class CUDARuntimeError(RuntimeError):
        pass

    def fail() -> int:
        raise CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")

    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(fail))
    reason = plugin._probe()
    assert reason is not None
    assert reason.startswith("no CUDA device: CUDARuntimeError: cudaErrorInsufficientDriver")
    assert "nvidia-smi" in reason  # the fix


def test_probe_reports_a_broken_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            raise OSError("libcudart.so.12: cannot open shared object file")

    monkeypatch.setitem(sys.modules, "cupy", Broken("cupy"))
    reason = plugin._probe()
    assert reason is not None and reason.startswith("no CUDA device: OSError: libcudart.so.12")


def test_plugin_module_imports_no_cupy() -> None:
    source = (ROOT / "src" / "burn_cuda" / "plugin.py").read_text()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in top_level if "cupy" in line], top_level


def test_registered_as_cuda_with_the_probes_reason() -> None:
    import burn

    rows = [row for row in burn.backends() if row.name == "cuda"]
    assert len(rows) == 1, f"expected one 'cuda' row, got {rows}"
    row = rows[0]
    assert (row.kind, row.package) == ("backend", "burn-cuda")
    reason = plugin._probe()
    if reason is None:
        assert row.status == "available"
    else:
        assert (row.status, row.reason) == ("unavailable", reason)


def test_unavailable_backend_raises_with_the_reason() -> None:
    import burn
    from burn.errors import BackendUnavailableError

    reason = plugin._probe()
    if reason is None:
        pytest.skip("a CUDA device is available here")
    with pytest.raises(BackendUnavailableError) as err:
        burn.backend("cuda")
    assert reason in str(err.value)


def test_extras_pick_the_cupy_wheel_of_each_cuda_major() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any("cupy" in dep for dep in project["dependencies"]), "base must install without CuPy"
    extras = project["optional-dependencies"]
    assert [d.split(">")[0] for d in extras["cuda12"]] == ["cupy-cuda12x"]
    assert [d.split(">")[0] for d in extras["cuda13"]] == ["cupy-cuda13x"]
    assert extras["cuda12-ctk"][0].startswith("cupy-cuda12x[ctk]")
    assert extras["cuda13-ctk"][0].startswith("cupy-cuda13x[ctk]")
    assert project["entry-points"]["burn.backends"] == {"cuda": "burn_cuda.plugin"}
    assert (ROOT / "src" / "burn_cuda" / "py.typed").exists()
