"""`covers`: the marker by which a conformance test names the contract ops it checks, and the
reading of those marks across the suite (`suite_coverage`) that the meta-tests check."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

MARKER = "covers"


def covers(*ops: str) -> pytest.MarkDecorator:
    """Mark a test as checking the contract ops `ops` (names from `burn.backend.contract_ops()`).

    Unknown names fail at import time, so a typo cannot hide an untested op.

    Example:
        >>> from burn.testing import covers
        >>> @covers("float_add", "int_add")
        ... def test_add(backend): ...
    """
    from burn.backend import contract_ops

    known = contract_ops()
    unknown = sorted(set(ops) - known.keys())
    if unknown:
        raise ValueError(f"covers(): not ops of the backend contract: {', '.join(unknown)}")
    if not ops:
        raise ValueError("covers() needs at least one op name")
    return getattr(pytest.mark, MARKER)(*ops)


def covered_ops(obj: Any) -> set[str]:
    """The ops named by `covers` marks on a test function or class (without collecting it)."""
    marks: Iterable[Any] = getattr(obj, "pytestmark", ())
    found: set[str] = set()
    for mark in marks:
        if getattr(mark, "name", None) == MARKER:
            found.update(mark.args)
    return found


def is_gradient_module(name: str) -> bool:
    """Whether the suite module `name` holds gradient tests: a family's ``test_<family>_gradients``
    or a cross-cutting ``test_gradients_<topic>``.

    Example:
        >>> is_gradient_module("test_conv_gradients"), is_gradient_module("test_conv")
        (True, False)
    """
    return name.endswith("_gradients") or name.startswith("test_gradients")


def suite_marks() -> dict[str, dict[str, set[str]]]:
    """The `covers` marks of the conformance suite, read without collecting it: for each module of
    `burn.testing.suite` (``"test_conv"``...), each of its tests (a function or a class) and the
    ops it declares it covers."""
    import importlib
    import inspect
    import pkgutil

    import burn.testing.suite as suite

    marks: dict[str, dict[str, set[str]]] = {}
    for info in pkgutil.iter_modules(suite.__path__):
        if not info.name.startswith("test_"):
            continue
        module = importlib.import_module(f"{suite.__name__}.{info.name}")
        tests: dict[str, set[str]] = {}
        for name, obj in vars(module).items():
            if not name.startswith(("test_", "Test")) or getattr(obj, "__module__", None) != module.__name__:
                continue
            targets = [obj]
            if inspect.isclass(obj):
                targets += [m for n, m in vars(obj).items() if n.startswith("test_")]
            tests[name] = set().union(*(covered_ops(t) for t in targets))
        marks[info.name] = tests
    return marks


def suite_coverage(*, gradients: bool) -> dict[str, list[str]]:
    """For each contract op, the suite's tests (``module::name``) that declare they cover it: those
    of the gradient modules (`is_gradient_module`) or those of the others."""
    found: dict[str, list[str]] = {}
    for module, tests in suite_marks().items():
        if is_gradient_module(module) != gradients:
            continue
        for name, ops in tests.items():
            for op in ops:
                found.setdefault(op, []).append(f"{module}::{name}")
    return found
