"""The conformance suite catches the bugs it once let through (`mutant_backends.py`).

For each mutant backend the suite's new test module must fail and the older module, which missed
the bug, must still pass: the bug is real, the old tests were blind to it, the new ones are not.
The suite runs in a subprocess (a pytest session of its own), its results read from JUnit XML.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest.importorskip("burn_ndarray", reason="the mutants are burn-ndarray's backend with a bug")

HERE = Path(__file__).resolve().parent

# mutant -> (the new module that must catch it, the older module that let it through, its -k)
CASES = {
    "mutant_promotion": ("test_dtype_promotion", "test_float_binary", "arithmetic or mixed or comparison"),
    "mutant_sort": ("test_sort_stability", "test_sort", ""),
    "mutant_mask": ("test_mask_broadcast", "test_indexing", "mask"),
}


def _run(tmp_path: Path, backend: str, module: str, select: str) -> dict[str, bool]:
    """Run one suite module on `backend`: {test id: passed} (skips left out)."""
    import burn

    installed = any(ep.value.strip() == "burn.testing.plugin" for ep in entry_points(group="pytest11"))
    report = tmp_path / f"{module}.xml"
    cmd = [sys.executable, "-m", "pytest", *([] if installed else ["-p", "burn.testing.plugin"])]
    cmd += ["--burn-plugin", "mutant_backends", "--burn-backend", backend, "--pyargs"]
    cmd += [f"burn.testing.suite.{module}", *(["-k", select] if select else [])]
    cmd += ["-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), f"--junitxml={report}"]
    src = Path(burn.__file__).resolve().parent.parent
    path = os.pathsep.join(p for p in (str(HERE), str(src), os.environ.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        cmd, cwd=tmp_path, env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, timeout=600
    )
    assert report.exists(), f"no report from {' '.join(cmd)}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    results: dict[str, bool] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.find("skipped") is not None:
            continue
        failed = case.find("failure") is not None or case.find("error") is not None
        results[case.get("name", "?")] = not failed
    return results


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_new_tests_catch_the_bug_the_old_ones_missed(tmp_path: Path, mutant: str) -> None:
    new, old, select = CASES[mutant]
    missed = _run(tmp_path, mutant, old, select)
    assert missed and all(missed.values()), (
        f"{old} fails on {mutant}: the mutant should show a gap in it, not a bug it already catches: "
        f"{sorted(k for k, ok in missed.items() if not ok)}"
    )
    caught = _run(tmp_path, mutant, new, "")
    failures = sorted(k for k, ok in caught.items() if not ok)
    assert failures, f"{new} passes on {mutant}: the injected bug went unnoticed"
    passed_on_ndarray = _run(tmp_path, "ndarray", new, "")
    assert passed_on_ndarray and all(passed_on_ndarray.values()), f"{new} fails on plain ndarray"
