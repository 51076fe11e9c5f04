"""Real entry points, end to end, in subprocesses: a throwaway ``*.dist-info`` on ``sys.path``.

Each test writes plugin modules and their distribution metadata into a temporary directory and runs
a fresh interpreter with that directory on ``PYTHONPATH``, so importlib.metadata finds the entry
points exactly as it would for installed packages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import burn.plugins

SRC = Path(burn.plugins.__file__).resolve().parents[2]  # the directory holding the `burn` package

GOOD_PLUGIN = """
import sys
import burn.plugins as bp

def _factory(**options):
    from burn.backend import Backend, Device

    class Good(Backend):
        name = "good"
        def devices(self):
            return [Device("good", "cpu", owner=self)]

    return Good(**options)

@bp.hookimpl
def burn_backends():
    return [bp.BackendSpec(name="good", factory=_factory, probe=lambda: None, description="a good one",
                           package="burn-good")]
"""

BROKEN_PLUGIN = """
raise ImportError("burn_broken needs libfoo.so, which is missing")
"""

PROBE_FAILS_PLUGIN = """
import burn.plugins as bp

@bp.hookimpl
def burn_backends():
    reason = "no GPU found: install the driver"
    return [bp.BackendSpec(name="nogpu", factory=lambda **o: None, probe=lambda: reason)]
"""


def _dist(
    root: Path, package: str, version: str, entry_points: dict[str, str], modules: dict[str, str]
) -> None:
    info = root / f"{package.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[burn.backends]\n{lines}")
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def site(tmp_path: Path) -> Path:
    _dist(tmp_path, "burn-good", "0.3.0", {"good": "burn_good_plugin"}, {"burn_good_plugin": GOOD_PLUGIN})
    _dist(
        tmp_path,
        "burn-broken",
        "0.9.1",
        {"broken": "burn_broken_plugin"},
        {"burn_broken_plugin": BROKEN_PLUGIN},
    )
    _dist(
        tmp_path,
        "burn-nogpu",
        "1.0.0",
        {"nogpu": "burn_nogpu_plugin"},
        {"burn_nogpu_plugin": PROBE_FAILS_PLUGIN},
    )
    return tmp_path


def run(
    site: Path, code: str, *, strict: bool | str = False, args: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURN_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    if strict:
        env["BURN_STRICT_PLUGINS"] = "1" if strict is True else strict
    cmd = [sys.executable, *(args or ["-c", textwrap.dedent(code)])]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=site)


def test_entry_points_end_to_end(site: Path) -> None:
    proc = run(
        site,
        """
        import json, sys
        import burn, burn.plugins as bp
        # discovery is lazy: nothing of the plugins is imported by `import burn`
        loaded = [m for m in sys.modules if m.startswith("burn_") and m.endswith("_plugin")]
        assert not loaded, loaded
        good = bp.backend("good")
        assert bp.backend("good") is good and good.name == "good"
        rows = {r.name: [r.kind, r.package, r.version, r.status, r.reason] for r in bp.backends()}
        print(json.dumps(rows))
    """,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rows["good"] == ["backend", "burn-good", "0.3.0", "available", ""]
    assert rows["nogpu"] == [
        "backend",
        "burn-nogpu",
        "1.0.0",
        "unavailable",
        "no GPU found: install the driver",
    ]
    kind, package, version, status, reason = rows["broken"]
    assert (kind, package, version, status) == ("backend", "burn-broken", "0.9.1", "failed")
    assert "entry point broken = burn_broken_plugin" in reason
    assert "ImportError: burn_broken needs libfoo.so, which is missing" in reason


def test_broken_entry_point_does_not_break_import_burn(site: Path) -> None:
    proc = run(
        site,
        """
        import burn, burn.plugins as bp
        from burn.errors import BackendUnavailableError, PluginError
        try:
            bp.backend("broken")
        except PluginError as e:
            print("PluginError:", e)
        try:
            bp.backend("nogpu")
        except BackendUnavailableError as e:
            print("BackendUnavailableError:", e)
        print("good:", bp.backend("good").name)
    """,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "PluginError: backend 'broken' could not be loaded: entry point broken = burn_broken_plugin "
        "(package burn-broken 0.9.1): failed to import: ImportError" in proc.stdout
    )
    assert (
        "BackendUnavailableError: backend 'nogpu' (package burn-nogpu 1.0.0) is installed but cannot run "
        "here: no GPU found: install the driver" in proc.stdout
    )
    assert "good: good" in proc.stdout


def test_strict_mode_raises_but_import_burn_works(site: Path) -> None:
    proc = run(
        site,
        """
        import burn, burn.plugins as bp
        print("imported")
        bp.backend("good")
    """,
        strict=True,
    )
    assert proc.returncode == 1
    assert proc.stdout.strip() == "imported"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("burn.errors.PluginError: BURN_STRICT_PLUGINS is set and a plugin failed: ")
    assert "entry point broken = burn_broken_plugin (package burn-broken 0.9.1)" in last
    assert "ImportError: burn_broken needs libfoo.so" in proc.stderr  # the original error is chained


def test_cli_lists_entry_points(site: Path) -> None:
    proc = run(site, "", args=["-m", "burn", "backends"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "PACKAGE", "VERSION", "STATUS"]
    table = {line.split()[0]: line for line in lines[1:]}
    assert table["good"].split() == ["good", "backend", "burn-good", "0.3.0", "available"]
    assert "unavailable: no GPU found: install the driver" in table["nogpu"]
    assert "failed: entry point broken = burn_broken_plugin" in table["broken"]


def test_cli_strict_mode_exits_with_the_error(site: Path) -> None:
    proc = run(site, "", args=["-m", "burn", "backends"], strict=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("burn: error: BURN_STRICT_PLUGINS is set")
    assert "burn-broken" in proc.stderr
    # the table comes first: it is what explains the failure
    table = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}
    assert set(table) >= {"good", "nogpu", "broken"} and "failed:" in table["broken"]


@pytest.mark.parametrize(
    ("strict", "status"),
    [("good", 0), ("burn-good,nogpu", 0), ("broken", 1), ("burn_broken", 1), ("gone", 1)],
)
def test_cli_strict_about_named_plugins(site: Path, strict: str, status: int) -> None:
    proc = run(site, "", args=["-m", "burn", "backends", "--json"], strict=strict)
    assert proc.returncode == status, proc.stderr
    assert {row["name"] for row in json.loads(proc.stdout)} >= {"good", "nogpu", "broken"}
    if strict == "gone":
        assert "BURN_STRICT_PLUGINS names 'gone', but no installed plugin" in proc.stderr
    elif status:
        assert "entry point broken = burn_broken_plugin (package burn-broken 0.9.1)" in proc.stderr
    else:
        assert proc.stderr == ""
