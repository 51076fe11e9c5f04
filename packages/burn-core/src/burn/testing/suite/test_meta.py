"""Meta-tests: every op of the backend contract has a conformance test.

Coverage is read from the `covers` marks of the suite's modules without collecting them, so the
check holds whatever subset of the suite runs. The gradient modules (`is_gradient_module`) are
left out: every op needs a forward test of its own.
"""

from __future__ import annotations

from burn.backend import contract_ops
from burn.testing.markers import suite_coverage


def test_every_contract_op_has_a_conformance_test() -> None:
    covered = suite_coverage(gradients=False)
    missing = sorted(set(contract_ops()) - covered.keys())
    assert not missing, f"{len(missing)} contract op(s) without a conformance test: {', '.join(missing)}"


def test_covers_names_only_contract_ops() -> None:
    assert set(suite_coverage(gradients=False)) <= set(contract_ops())
