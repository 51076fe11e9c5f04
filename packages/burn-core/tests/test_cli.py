"""The ``burn`` command: ``--version``, ``backends``, ``conformance``."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import burn.plugins as bp
from burn import cli
from burn._version import __version__
from burn.backend import Backend, Device
from burn.plugins import registry

SRC = Path(bp.__file__).resolve().parents[2]


class Tiny(Backend):
    name = "tiny"

    def devices(self) -> list[Device]:
        return [Device("tiny", "cpu", owner=self)]


def _plugin(name: str, probe: Any = None) -> types.ModuleType:
    mod = types.ModuleType(f"cli_plugin_{name}")
    cls = Tiny if name == "tiny" else type(f"Tiny_{name}", (Tiny,), {"name": name})  # the spec's name
    mod.burn_backends = bp.hookimpl(  # type: ignore[attr-defined]
        lambda: [bp.BackendSpec(name, factory=cls, probe=probe, package=f"burn-{name}")]
    )
    return mod


@pytest.fixture(autouse=True)
def reg(monkeypatch: pytest.MonkeyPatch) -> registry.PluginRegistry:
    monkeypatch.delenv("BURN_STRICT_PLUGINS", raising=False)
    r = registry.PluginRegistry(entry_points=lambda: [])
    monkeypatch.setattr(registry, "REGISTRY", r)
    return r


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"burn {__version__} (burn-core)"


def test_python_dash_m_burn() -> None:
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-m", "burn", "--version"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"burn {__version__} (burn-core)"


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    out = capsys.readouterr().out
    assert "backends" in out and "conformance" in out


def test_backends_table(capsys: pytest.CaptureFixture[str]) -> None:
    bp.register(_plugin("tiny"))
    bp.register(_plugin("gpu", probe=lambda: "no GPU here"))
    assert cli.main(["backends"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "NAME  KIND     PACKAGE    VERSION  STATUS",
        "gpu   backend  burn-gpu   -        unavailable: no GPU here",
        "tiny  backend  burn-tiny  -        available",
    ]


def test_backends_json(capsys: pytest.CaptureFixture[str]) -> None:
    bp.register(_plugin("tiny"))
    assert cli.main(["backends", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {
            "name": "tiny",
            "kind": "backend",
            "package": "burn-tiny",
            "version": None,
            "status": "available",
            "reason": "",
        }
    ]


def test_backends_when_none_is_installed(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["backends"]) == 0
    hint = registry.install_hint("burn-ndarray")  # `pip install -e packages/burn-ndarray` from a checkout
    assert f"no burn backend is installed: {hint}" in capsys.readouterr().out


def test_format_table_aligns_columns() -> None:
    rows = [
        bp.BackendInfo("a", "backend", "burn-a", "1.0", "available"),
        bp.BackendInfo("autodiff", "decorator", "burn-autodiff", "0.1.0", "failed", "boom"),
    ]
    assert cli.format_table(rows).splitlines() == [
        "NAME      KIND       PACKAGE        VERSION  STATUS",
        "a         backend    burn-a         1.0      available",
        "autodiff  decorator  burn-autodiff  0.1.0    failed: boom",
    ]


def test_conformance_runs_pytest_on_the_suite(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bp.register(_plugin("tiny"))
    calls: list[list[str]] = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: calls.append(cmd) or 5)
    monkeypatch.setattr(cli, "_pytest_plugin_installed", lambda: True)
    assert cli.main(["conformance", "tiny?float_dtype=float64", "-x", "-k", "add"]) == 5  # pytest's status
    assert calls == [
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "burn.testing",
            "--burn-backend",
            "tiny?float_dtype=float64",
            "-x",
            "-k",
            "add",
        ]
    ]
    assert "running:" in capsys.readouterr().err
    # from a source checkout the pytest plugin is not installed: name it with -p
    monkeypatch.setattr(cli, "_pytest_plugin_installed", lambda: False)
    cli.main(["conformance", "tiny"])
    assert calls[-1][3:7] == ["-p", "burn.testing.plugin", "--pyargs", "burn.testing"]


def test_conformance_unknown_backend(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: pytest.fail("pytest must not run"))
    assert cli.main(["conformance", "opencl"]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("burn: error: no backend named 'opencl'")
        and registry.install_hint("burn-opencl") in err
    )
    assert cli.main(["conformance", "autodiff(x"]) == 1
    assert "invalid backend name" in capsys.readouterr().err


def test_conformance_without_pytest(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pytest" else real(name, *a)
    )
    assert cli.main(["conformance", "tiny"]) == 2
    assert "pip install 'burn-core[test]'" in capsys.readouterr().err
