"""A backend with only the required ops passes the whole conformance suite.

The suite runs in a subprocess (it is a pytest session of its own) on `minimal_backend.Minimal`,
registered with ``--burn-plugin minimal_backend``, in float32 and in float64 (one session).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from burn.backend import contract_ops, implemented_ops, required_ops

HERE = Path(__file__).resolve().parent


def test_minimal_backend_implements_exactly_the_required_ops() -> None:
    from minimal_backend import Minimal

    assert implemented_ops(Minimal) == set(required_ops())
    assert set(required_ops()) < set(contract_ops())


def _python_path() -> str:
    import burn

    src = Path(burn.__file__).resolve().parent.parent
    parts = [str(HERE), str(src), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p)


def _plugin_args() -> list[str]:
    # Load the suite's pytest plugin explicitly unless burn-core is installed with its entry point
    # (loading it twice is an error).
    from importlib.metadata import entry_points

    installed = any(ep.value == "burn.testing.plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "burn.testing.plugin"]


def test_whole_suite_passes_on_the_minimal_backend(tmp_path: Path) -> None:
    backends = ["minimal", "minimal?float_dtype=float64"]
    cmd = [
        sys.executable, "-m", "pytest", *_plugin_args(), "--pyargs", "burn.testing",
        "--burn-plugin", "minimal_backend", *(f"--burn-backend={b}" for b in backends),
        "-q", "-p", "no:cacheprovider", "-W", "error::pytest.PytestUnknownMarkWarning",
        "--rootdir", str(tmp_path),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": _python_path()}
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    output = proc.stdout + proc.stderr
    tail = "\n".join(output.splitlines()[-60:])
    assert proc.returncode == 0, f"conformance suite failed on {backends}:\n{tail}"
    summary = re.search(r"(\d+) passed", output)
    assert summary and int(summary.group(1)) > 2000, f"too few tests ran on {backends}:\n{tail}"
    assert "no backend under test" not in output
