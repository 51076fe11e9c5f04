"""Meta-test: every differentiable op of the contract has a gradient test.

Reads the `covers` marks of the gradient modules (``test_<family>_gradients``,
``test_gradients_<topic>``: `burn.testing.markers.is_gradient_module`) without collecting them,
so it holds whatever subset of the suite runs and needs no backend. The ops that need one are
`burn.testing.gradcheck.differentiable_ops()`: every float/module/activation op except those
explicitly classified as not differentiable, so a new contract op fails here until it has a
gradient test or a classification.
"""

from __future__ import annotations

import sys

import pytest

from burn.backend import contract_ops
from burn.testing.gradcheck import BACKWARD_HELPERS, NOT_DIFFERENTIABLE, differentiable_ops
from burn.testing.markers import suite_coverage


def test_every_differentiable_op_has_a_gradient_test() -> None:
    missing = sorted(differentiable_ops() - suite_coverage(gradients=True).keys())
    assert not missing, f"{len(missing)} differentiable op(s) without a gradient test: {', '.join(missing)}"


def test_classified_ops_are_contract_ops() -> None:
    unknown = sorted((NOT_DIFFERENTIABLE | BACKWARD_HELPERS) - contract_ops().keys())
    assert not unknown, f"not ops of the contract: {', '.join(unknown)}"


def test_differentiable_ops_cover_every_float_module_and_activation_op() -> None:
    # Sanity of the classification itself: the families add up, nothing is counted twice.
    ops = set(contract_ops())
    float_like = {o for o in ops if not o.startswith(("int_", "bool_"))}
    assert differentiable_ops() | NOT_DIFFERENTIABLE | BACKWARD_HELPERS == float_like
    assert not differentiable_ops() & (NOT_DIFFERENTIABLE | BACKWARD_HELPERS)
    assert len(differentiable_ops()) > 80


def test_the_meta_test_fails_on_an_op_without_a_gradient_test(monkeypatch: pytest.MonkeyPatch) -> None:
    # A new differentiable contract op with no `covers` mark anywhere must make it fail, by name.
    known = differentiable_ops()
    monkeypatch.setattr(sys.modules[__name__], "differentiable_ops", lambda: known | {"float_brand_new"})
    with pytest.raises(AssertionError, match="1 differentiable op.*float_brand_new"):
        test_every_differentiable_op_has_a_gradient_test()
