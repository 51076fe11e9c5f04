"""The conformance suite's gradient checker itself: it passes right rules and catches wrong ones,
with finite differences in float64 or, without float64, against autodiff(ndarray)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend import Capabilities
from burn.foundations.dtype import DType
from burn.testing.gradcheck import check_gradients
from burn_autodiff import Autodiff
from burn_autodiff.ops.float import AutodiffFloatOps
from burn_ndarray import NdArray


def float32_only() -> Autodiff:
    inner = NdArray(float_dtype="float32")
    inner.capabilities = Capabilities(dtypes=frozenset({DType.F32, DType.I64, DType.BOOL}))
    return Autodiff(inner)


def off_by_a_little(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the rule of float op `name` (the static method ``_<name>_rule``) 1% off."""
    rule = f"_{name}_rule"
    right = getattr(AutodiffFloatOps, rule)

    def wrong(B: Any, saved: Any, need: Any, g: Any) -> tuple:
        return tuple(None if r is None else B.float_mul_scalar(r, 1.01) for r in right(B, saved, need, g))

    monkeypatch.setattr(AutodiffFloatOps, rule, staticmethod(wrong))


X = [np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])]


def test_float64_finite_differences_pass_and_catch(B: Autodiff, monkeypatch: pytest.MonkeyPatch) -> None:
    check_gradients(lambda x: (x * x).exp(), X, B, what="exp")
    off_by_a_little(monkeypatch, "exp")
    with pytest.raises(AssertionError, match="central finite differences"):
        check_gradients(lambda x: (x * x).exp(), X, B, what="exp")


def test_without_float64_compares_with_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    B = float32_only()
    assert not B.capabilities.supports(DType.F64)
    check_gradients(lambda x: x.tanh().sum_dim(1), X, B, what="tanh")
    right_tanh = B.float_tanh

    def wrong_tanh(t: Any) -> Any:  # only this backend's tanh nodes get a wrong rule
        out = right_tanh(t)
        rule = out.node.rule
        out.node.rule = lambda B_, s, n, g: (B_.float_mul_scalar(rule(B_, s, n, g)[0], 1.01),)
        return out

    monkeypatch.setattr(B, "float_tanh", wrong_tanh)
    with pytest.raises(AssertionError, match=r"autodiff\(ndarray\) \(float64\)"):
        check_gradients(lambda x: x.tanh().sum_dim(1), X, B, what="tanh")


def test_non_autodiff_backends_are_skipped_with_the_reason(nd: NdArray) -> None:
    with pytest.raises(pytest.skip.Exception, match="not ad_enabled"):
        check_gradients(lambda x: x.exp(), X, nd)


def test_missing_gradient_is_reported(B: Autodiff) -> None:
    with pytest.raises(AssertionError, match="got no gradient"):
        check_gradients(lambda x, y: y * 2.0, [X[0], X[0]], B)
