"""Plugin discovery stays cheap: importing a plugin module (and calling its hooks) imports nothing heavy.

burn imports every installed plugin module on the first ``burn.backend()`` / ``burn backends``,
whichever backend is asked for, so a plugin module (and its package's ``__init__``) that imports
its backend makes every user pay for that backend's library. Each check runs in a fresh
interpreter and compares ``sys.modules`` before and after, with the packages' sources on
``PYTHONPATH`` so that it also covers plugins not installed in this environment (burn-cuda without
CuPy). NumPy counts as light: ``import burn`` imports it already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import burn

ROOT = Path(burn.__file__).resolve().parents[4]  # packages/burn-core/src/burn -> the checkout
SOURCES = {
    "burn_ndarray": ROOT / "packages" / "burn-ndarray" / "src",
    "burn_autodiff": ROOT / "packages" / "burn-autodiff" / "src",
    "burn_opencl": ROOT / "packages" / "burn-opencl" / "src",
    "burn_cuda": ROOT / "packages" / "burn-cuda" / "src",
    "burn_template": ROOT / "examples" / "plugin-template" / "src",
}
HEAVY = ("torch", "cupy", "pyopencl", "jax", "tensorflow", "scipy", "matplotlib", "sklearn", "numba")
"""Libraries no plugin module may import at discovery (their import takes 0.1 s to seconds)."""

PROBE = """
import json, sys
import burn, burn.plugins
before = set(sys.modules)
import {package}.plugin as plugin
after_import = set(sys.modules)
for hook in ("burn_backends", "burn_decorators"):
    if hasattr(plugin, hook):
        getattr(plugin, hook)()   # discovery calls the hooks too (but not the probes, until listed)
after_hooks = set(sys.modules)
print(json.dumps({{"import": sorted(after_import - before), "hooks": sorted(after_hooks - after_import)}}))
"""


def _new_modules(package: str, code: str = PROBE) -> dict[str, list[str]]:
    src = SOURCES[package]
    if not src.is_dir():
        pytest.skip(f"{src} is not here: these checks run from a source checkout")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURN_")}
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code.format(package=package))],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, list[str]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("package", sorted(SOURCES))
def test_importing_the_plugin_module_imports_nothing_heavy(package: str) -> None:
    new = _new_modules(package)
    allowed = {package, f"{package}._version", f"{package}.plugin"}
    assert set(new["import"]) <= allowed, (
        f"importing {package}.plugin also imported {sorted(set(new['import']) - allowed)}: "
        "keep the plugin module and the package's __init__ free of the backend and its library"
    )
    assert not new["hooks"], f"calling {package}'s hooks imported {new['hooks']}: import in the factory"
    heavy = [m for m in new["import"] + new["hooks"] if m.partition(".")[0] in HEAVY]
    assert not heavy


def test_the_check_sees_an_eager_import() -> None:
    """The same probe flags what an eager ``__init__`` would import (the check can fail)."""
    eager = PROBE.replace(
        "import {package}.plugin as plugin", "import {package}.plugin as plugin\nimport {package}.backend"
    )
    new = _new_modules("burn_template", eager)
    assert "burn_template.backend" in new["import"]


def test_lazy_exports_still_work() -> None:
    import importlib

    for package, name in [
        ("burn_ndarray", "NdArray"),
        ("burn_autodiff", "Autodiff"),
        ("burn_opencl", "OpenCL"),
    ]:
        try:
            module = importlib.import_module(package)
        except ImportError:
            continue  # not installed here: covered by the environment that installs it
        assert getattr(module, name).__name__ == name
        with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'Nope'"):
            module.Nope  # noqa: B018
