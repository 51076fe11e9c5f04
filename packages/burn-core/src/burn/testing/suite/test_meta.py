"""Meta-tests: every op of the backend contract has a conformance test, and the suite's layout.

Coverage is read from the `covers` marks of the suite's modules without collecting them, so the
check holds whatever subset of the suite runs. The gradient modules (`is_gradient_module`) are
left out: every op needs a forward test of its own.

The layout: a module named after an op family (`burn.backend.ops`: ``test_<family>.py``,
``test_<family>_<aspect>.py``, ``test_<family>_gradients.py``) holds the tests of that family's
ops and of no other; tests of one op on every kind (shape, indexing, sort, casts) and of a
property across families (errors, dtypes, devices...) are in modules named by their topic.
"""

from __future__ import annotations

from burn.backend import contract_ops
from burn.backend.contract import op_facts
from burn.testing.markers import suite_coverage, suite_marks


def test_every_contract_op_has_a_conformance_test() -> None:
    covered = suite_coverage(gradients=False)
    missing = sorted(set(contract_ops()) - covered.keys())
    assert not missing, f"{len(missing)} contract op(s) without a conformance test: {', '.join(missing)}"


def test_covers_names_only_contract_ops() -> None:
    assert set(suite_coverage(gradients=False)) <= set(contract_ops())


def family_of(module: str) -> str | None:
    """The op family a suite module is named after (``test_conv``, ``test_float_unary``,
    ``test_pool_gradients``), or None for a module named by its topic (``test_shape``)."""
    stem = module.removeprefix("test_")
    families = {f.family for f in op_facts().values()}
    return next((f for f in sorted(families) if stem == f or stem.startswith(f"{f}_")), None)


def test_a_family_module_covers_only_its_family() -> None:
    facts = op_facts()
    misplaced = [
        f"{module}::{test} covers {op} (family {facts[op].family})"
        for module, tests in sorted(suite_marks().items())
        if (family := family_of(module)) is not None
        for test, ops in tests.items()
        for op in sorted(ops)
        if facts[op].family != family
    ]
    assert not misplaced, "tests in the module of another op family:\n" + "\n".join(misplaced)


def test_every_op_family_has_a_module() -> None:
    families = {f.family for f in op_facts().values()}
    named = {family_of(module) for module in suite_marks()}
    missing = sorted(families - named)
    assert not missing, f"op families without a test_<family> module: {', '.join(missing)}"
