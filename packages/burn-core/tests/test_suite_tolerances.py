"""The conformance suite takes every tolerance from one table (`burn.testing.tolerances`).

A number written into a test holds float16 and bfloat16 backends to float32's precision (the
optimizer test once hardcoded ``2e-5`` and failed both): the source of every suite module is
scanned for numeric ``rtol``/``atol`` in the checks, and the tests that had one run here on
float16 and bfloat16.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import burn.testing.suite as suite
from burn.foundations.dtype import DType
from burn.testing.tolerances import EPS, TOLERANCES, iterated_tolerance, tolerance

SUITE = Path(suite.__file__).resolve().parent
# The checks whose tolerance arguments must come from the table (the ops `is_close`/`all_close`
# and NumPy's `isclose` take rtol/atol as *inputs* under test: those are not tolerances).
CHECKS = {"check_float", "assert_allclose"}


def _numeric(node: ast.expr) -> bool:
    """A literal number other than 0 (``rtol=0.0`` says "absolute only", not a precision), also as
    either branch of a conditional or an item of a tuple (``1e-10 if f64 else 2e-5``); a product
    with a table value (``8 * EPS[dtype]``) is not one."""
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    if isinstance(node, ast.IfExp):
        return _numeric(node.body) or _numeric(node.orelse)
    if isinstance(node, ast.Tuple):
        return any(_numeric(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and node.value != 0


def _hardcoded(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in CHECKS:
                found += [f"{path.name}:{node.lineno} {kw.arg}=" for kw in node.keywords
                          if kw.arg in ("rtol", "atol") and _numeric(kw.value)]  # fmt: skip
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            names += [
                e.id
                for t in node.targets
                if isinstance(t, ast.Tuple)
                for e in t.elts
                if isinstance(e, ast.Name)
            ]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            if {"rtol", "atol"} & set(names) and any(_numeric(v) for v in values):
                found.append(f"{path.name}:{node.lineno} {'/'.join(names)} = ...")
    return found


def test_no_suite_module_hardcodes_a_tolerance() -> None:
    found = [hit for path in sorted(SUITE.glob("test_*.py")) for hit in _hardcoded(path)]
    assert not found, f"tolerances written as numbers (take them from burn.testing.tolerances): {found}"


def test_the_scan_sees_a_hardcoded_tolerance(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "rtol = 1e-10 if f else 2e-5\ncheck_float(t, w, d, atol=1e-6)\nx.is_close(y, rtol=0.5)\n"
        "rtol, atol = 1e-3, 1e-3\nnp.testing.assert_allclose(a, b, rtol=-2e-5)\n"
        "rtol, atol = tolerance(dtype, 8)\ncheck_float(t, w, d, rtol=0.0, atol=8 * EPS[d])\n"
    )
    assert sorted(_hardcoded(sample)) == [
        "test_sample.py:1 rtol = ...",
        "test_sample.py:2 atol=",
        "test_sample.py:4 rtol/atol = ...",
        "test_sample.py:5 rtol=",
    ]


def test_table() -> None:
    assert set(TOLERANCES) == set(EPS) == {DType.F64, DType.F32, DType.F16, DType.BF16}
    assert tolerance(DType.F32, terms=4) == (1e-5, 4e-6)
    for dtype in TOLERANCES:  # looser for narrower dtypes, and for more steps
        assert iterated_tolerance(dtype, 60)[0] >= iterated_tolerance(dtype, 3)[0] >= tolerance(dtype)[0]
    assert (
        tolerance(DType.BF16)[0] > tolerance(DType.F16)[0] > tolerance(DType.F32)[0] > tolerance(DType.F64)[0]
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_optimizer_and_model_tests_pass_in_half_precision(tmp_path: Path, dtype: str) -> None:
    pytest.importorskip("burn_ndarray", reason="runs the suite on burn-ndarray")
    installed = any(ep.value.strip() == "burn.testing.plugin" for ep in entry_points(group="pytest11"))
    cmd = [sys.executable, "-m", "pytest", *([] if installed else ["-p", "burn.testing.plugin"])]
    cmd += ["--pyargs", "burn.testing.suite.test_models", "burn.testing.suite.test_optim"]
    cmd += [
        f"--burn-backend=ndarray?float_dtype={dtype}",
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(tmp_path),
    ]
    src = Path(suite.__file__).resolve().parents[3]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(src), os.environ.get("PYTHONPATH", "")) if p),
    }
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
    assert proc.returncode == 0, f"model/optimizer tests fail on ndarray {dtype}:\n{tail}"
    assert " passed" in tail
