"""Meta-tests: every op of the backend contract has a conformance test.

Coverage is read from the `covers` marks of the suite's modules without collecting them, so the
check holds whatever subset of the suite runs. The gradient tests (``test_gradients*``) are left
out: every op needs a forward test of its own.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import burn.testing.suite as suite
from burn.backend import contract_ops
from burn.testing.markers import covered_ops


def suite_coverage() -> dict[str, list[str]]:
    """For each contract op, the tests (``module::name``) that declare they cover it."""
    found: dict[str, list[str]] = {}
    for info in pkgutil.iter_modules(suite.__path__):
        if not info.name.startswith("test_") or info.name.startswith("test_gradients"):
            continue
        module = importlib.import_module(f"{suite.__name__}.{info.name}")
        for name, obj in vars(module).items():
            if not name.startswith(("test_", "Test")) or getattr(obj, "__module__", None) != module.__name__:
                continue
            targets = [obj]
            if inspect.isclass(obj):
                targets += [m for n, m in vars(obj).items() if n.startswith("test_")]
            ops = set().union(*(covered_ops(t) for t in targets))
            for op in ops:
                found.setdefault(op, []).append(f"{info.name}::{name}")
    return found


def test_every_contract_op_has_a_conformance_test() -> None:
    covered = suite_coverage()
    missing = sorted(set(contract_ops()) - covered.keys())
    assert not missing, f"{len(missing)} contract op(s) without a conformance test: {', '.join(missing)}"


def test_covers_names_only_contract_ops() -> None:
    assert set(suite_coverage()) <= set(contract_ops())
