"""The conformance suite's gradient tests pass on autodiff over two different inner backends:
burn-ndarray, and burn-core's minimal backend (only the required ops, primitives that are not
NumPy arrays), which shows the rules use nothing but the backend contract; and with balanced
checkpointing (every rule fed recomputed values).

Each run is a pytest session of its own, in a subprocess.
"""

from __future__ import annotations

import os
import pkgutil
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import burn
import burn.testing.suite as suite
from burn.testing.markers import is_gradient_module

CORE_TESTS = Path(burn.__file__).resolve().parents[2] / "tests"  # minimal_backend.py lives there
HERE = Path(__file__).resolve().parent
# every gradient module of the suite, found by name, so a new one is run here without an edit
MODULES = sorted(
    f"{suite.__name__}.{info.name}"
    for info in pkgutil.iter_modules(suite.__path__)
    if is_gradient_module(info.name)
)


def run_suite(tmp_path: Path, backend: str, *plugins: str) -> str:
    installed = any(ep.value == "burn.testing.plugin" for ep in entry_points(group="pytest11"))
    cmd = [sys.executable, "-m", "pytest", *([] if installed else ["-p", "burn.testing.plugin"])]
    for plugin in ("burn_ndarray.plugin", "burn_autodiff.plugin", *plugins):
        cmd += ["--burn-plugin", plugin]
    cmd += ["--pyargs", *MODULES, f"--burn-backend={backend}", "-q", "-p", "no:cacheprovider",
            "--rootdir", str(tmp_path)]
    path = os.pathsep.join([str(CORE_TESTS), str(HERE), *sys.path])
    proc = subprocess.run(cmd, cwd=tmp_path, env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    tail = "\n".join(output.splitlines()[-40:])
    assert proc.returncode == 0, f"gradient suite failed on {backend}:\n{tail}"
    passed = re.search(r"(\d+) passed", output)
    assert passed and int(passed.group(1)) > 100, f"too few gradient tests ran on {backend}:\n{tail}"
    assert "skipped" not in output.splitlines()[-1], f"gradient tests skipped on {backend}:\n{tail}"
    return output


@pytest.mark.parametrize(
    ("backend", "plugins"),
    [
        ("autodiff(ndarray)?float_dtype=float64", ()),
        ("autodiff(minimal)", ("minimal_backend",)),
        ("autodiff_balanced(ndarray)", ("checkpointed_plugin",)),
    ],
    ids=["ndarray", "minimal", "ndarray-checkpointing"],
)
def test_gradient_suite_passes(tmp_path: Path, backend: str, plugins: tuple[str, ...]) -> None:
    if "minimal_backend" in plugins and not (CORE_TESTS / "minimal_backend.py").exists():
        pytest.skip("burn-core's tests/minimal_backend.py is not available (installed burn-core)")
    run_suite(tmp_path, backend, *plugins)
