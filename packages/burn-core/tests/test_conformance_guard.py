"""The conformance suite never passes having tested nothing.

A backend that is installed but cannot run here, no ``--burn-backend`` at all, or a misspelled
name stop the session with a usage error naming the cause; skipping is an explicit option
(``--burn-allow-unavailable``). Checked through pytest in a subprocess (the suite's plugin acts at
configure and collection time) and through ``burn conformance`` in-process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import types
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import burn.plugins as bp
from burn import cli
from burn.backend import Backend, Device
from burn.plugins import registry

SRC = Path(bp.__file__).resolve().parents[2]

PLUGIN = """
import burn.plugins as bp
from burn.backend import Backend, Device


class Gpu(Backend):
    name = "gpu"

    def devices(self):
        return [Device("gpu", 0, owner=self)]


@bp.hookimpl
def burn_backends():
    return [bp.BackendSpec("gpu", factory=Gpu, probe=lambda: "no GPU on this machine", package="burn-gpu")]
"""


def _pytest(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "gpu_plugin.py").write_text(textwrap.dedent(PLUGIN))
    installed = any(ep.value.strip() == "burn.testing.plugin" for ep in entry_points(group="pytest11"))
    cmd = [sys.executable, "-m", "pytest", *([] if installed else ["-p", "burn.testing.plugin"])]
    cmd += [*args, "-q", "-rs", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)]
    path = os.pathsep.join(p for p in (str(tmp_path), str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("BURN_STRICT_PLUGINS", None)
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


SUITE = ["--pyargs", "burn.testing.suite.test_sort"]  # one module: the checks do not need more


def test_unavailable_backend_fails_with_the_probes_reason(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, *SUITE, "--burn-plugin", "gpu_plugin", "--burn-backend", "gpu")
    assert rc == pytest.ExitCode.USAGE_ERROR, out
    assert "cannot run here: no GPU on this machine" in out
    assert "--burn-allow-unavailable" in out and "passed" not in out


def test_unavailable_backend_is_skipped_only_when_asked(tmp_path: Path) -> None:
    args = [*SUITE, "--burn-plugin", "gpu_plugin", "--burn-backend", "gpu", "--burn-allow-unavailable"]
    rc, out = _pytest(tmp_path, *args)
    assert rc == 0, out
    assert "cannot run here (--burn-allow-unavailable)" in out  # each skip says why
    assert "passed" not in out.splitlines()[-1]


def test_no_backend_says_what_to_pass(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, *SUITE, "--burn-plugin", "gpu_plugin")
    assert rc == pytest.ExitCode.USAGE_ERROR, out
    assert "no backend under test: pass --burn-backend NAME" in out
    assert "gpu (unavailable)" in out  # the installed backends, with their status
    assert "passed" not in out and "skipped" not in out


def test_no_backend_still_collects(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, *SUITE, "--collect-only")
    assert rc == 0, out


def test_misspelled_backend_fails_at_once_with_did_you_mean(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, *SUITE, "--burn-plugin", "gpu_plugin", "--burn-backend", "autodif(gpu)")
    assert rc == pytest.ExitCode.USAGE_ERROR, out
    assert "Did you mean 'autodiff'?" in out or "no decorator named 'autodif'" in out
    rc, out = _pytest(tmp_path, *SUITE, "--burn-plugin", "gpu_plugin", "--burn-backend", "gpv")
    assert rc == pytest.ExitCode.USAGE_ERROR, out
    assert "no backend named 'gpv'" in out and "Did you mean 'gpu'?" in out
    assert "passed" not in out and "error" not in out.splitlines()[-1]


# -- burn conformance -------------------------------------------------------------------------
class Gpu(Backend):
    name = "gpu"

    def devices(self) -> list[Device]:
        return [Device("gpu", 0, owner=self)]


def _gpu_plugin() -> types.ModuleType:
    mod = types.ModuleType("guard_gpu_plugin")
    mod.burn_backends = bp.hookimpl(  # type: ignore[attr-defined]
        lambda: [
            bp.BackendSpec("gpu", factory=Gpu, probe=lambda: "no GPU on this machine", package="burn-gpu")
        ]
    )
    return mod


@pytest.fixture
def reg(monkeypatch: pytest.MonkeyPatch) -> registry.PluginRegistry:
    monkeypatch.delenv("BURN_STRICT_PLUGINS", raising=False)
    r = registry.PluginRegistry(entry_points=lambda: [])
    monkeypatch.setattr(registry, "REGISTRY", r)
    r.register(_gpu_plugin())
    return r


def test_cli_conformance_refuses_an_unavailable_backend(
    reg: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: pytest.fail("pytest must not run"))
    assert cli.main(["conformance", "gpu"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("burn: error: backend 'gpu' (package burn-gpu) is installed but cannot run here")
    assert "no GPU on this machine" in err and "--burn-allow-unavailable" in err


def test_cli_conformance_skips_when_asked(reg: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: calls.append(cmd) or 0)
    assert cli.main(["conformance", "gpu", "--burn-allow-unavailable", "-q"]) == 0
    assert calls and calls[0][-4:] == ["--burn-backend", "gpu", "--burn-allow-unavailable", "-q"]


def test_printed_node_ids_rerun_from_any_folder(tmp_path: Path) -> None:
    from burn.testing.plugin import suite_node_arg

    mine = Path(suite_node_arg("suite/test_sort.py::test_float_sort[x]", tmp_path).partition("::")[0])
    assert mine.is_file() and mine.parent.name == "suite" and mine.name == "test_sort.py"
    assert suite_node_arg("suite/test_sort.py::test_float_sort[x]", tmp_path).endswith("::test_float_sort[x]")
    assert suite_node_arg("suite/no_such_test.py::t", tmp_path) == "suite/no_such_test.py::t"
    assert suite_node_arg("-k", tmp_path) == "-k"
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_sort.py").write_text("")  # a folder of the user's own wins
    assert suite_node_arg("suite/test_sort.py::t", tmp_path) == "suite/test_sort.py::t"


def test_a_printed_node_id_runs(tmp_path: Path) -> None:
    # the gpu plugin's backend cannot run: the id resolves, and the run stops at the backend
    rc, out = _pytest(
        tmp_path, "--burn-plugin", "gpu_plugin", "--burn-backend", "gpu", "--burn-allow-unavailable",
        "suite/test_sort_stability.py::test_int_sort_is_stable_on_large_inputs",
    )  # fmt: skip
    assert rc == 0 and "not found" not in out, out
    assert "skipped" in out.splitlines()[-1], out
