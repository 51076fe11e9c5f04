"""The conformance suite's compile mode (burn.testing.compile_mode, ``--burn-compile``): module
calls and gradient checks are compared with eager, a wrong replay fails, fallbacks are counted and
change the module once, random draws leave the generator where one eager call does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

import burn  # noqa: E402
from burn import nn  # noqa: E402
from burn.capture.lower import Plan  # noqa: E402
from burn.testing import compile_mode  # noqa: E402
from burn.testing.gradcheck import check_gradients, op  # noqa: E402

B = burn.backend("autodiff(ndarray)")
DEV = B.default_device()


def _x(*shape: int) -> burn.Tensor:
    return burn.Tensor.from_data(np.random.default_rng(1).normal(size=shape).astype(np.float32), DEV)


@pytest.fixture(autouse=True)
def _fresh_outcomes() -> Any:
    compile_mode.OUTCOMES.clear()
    yield
    compile_mode.OUTCOMES.clear()


def test_module_calls_are_compared_and_the_test_gets_the_eager_result() -> None:
    layer = nn.LinearConfig(4, 3).init(DEV)
    x = _x(2, 4)
    with compile_mode.enabled():
        first = layer(x)  # lazy params: eager call, then a twin traced and replayed
        second = layer(x)  # initialized: traced, eager call, replay compared
    assert compile_mode.OUTCOMES[compile_mode.COMPARED_CALLS] == 2
    np.testing.assert_array_equal(first.to_numpy(), layer.forward(x).to_numpy())
    np.testing.assert_array_equal(second.to_numpy(), first.to_numpy())
    assert not compile_mode.active()
    assert "2 module calls and 0 gradient checks" in compile_mode.summary()


def test_a_wrong_replay_fails_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    layer = nn.LinearConfig(4, 3).init(DEV)
    x = _x(2, 4)
    layer(x)  # initialize
    run = Plan.run

    def off_by_one(self: Plan, *args: Any, **kwargs: Any) -> list[Any]:
        outs = run(self, *args, **kwargs)
        return [self.backend.float_add_scalar(o, 1.0) for o in outs]

    monkeypatch.setattr(Plan, "run", off_by_one)
    with compile_mode.enabled(), pytest.raises(AssertionError, match="bitwise on ndarray"):
        layer(x)


def test_a_fallback_is_counted_and_changes_the_module_once() -> None:
    """Batch norm in training replaces its running statistics: burn.compile runs it eagerly,
    once, and the statistics are those of one eager call."""
    x = _x(4, 3)
    eager = nn.BatchNormConfig(3).init(DEV).train()
    eager(x)  # initialize, then one more call, as below
    compiled = nn.BatchNormConfig(3).init(DEV).train()
    compiled(x)
    with compile_mode.enabled():
        compiled(x)
    eager(x)
    np.testing.assert_array_equal(compiled.running_mean.val().to_numpy(), eager.running_mean.val().to_numpy())
    [(reason, calls)] = [(k, n) for k, n in compile_mode.OUTCOMES.items() if k.startswith("fell back")]
    assert "replaces module state" in reason and calls == 1
    assert "eager (not compared): 1 x fell back: it replaces module state" in compile_mode.summary()


def test_random_draws_are_compared_from_one_state_and_advance_once() -> None:
    drop = nn.DropoutConfig(0.5).init().train()
    x = burn.Tensor.ones((64,), device=DEV)
    B.seed(3)
    want = drop(x).to_numpy()
    next_eager = B.rng.random()
    B.seed(3)
    with compile_mode.enabled():
        got = drop(x).to_numpy()
    assert B.rng.random() == next_eager, "compile mode must leave the generator as one eager call"
    np.testing.assert_array_equal(got, want)
    assert compile_mode.OUTCOMES[compile_mode.COMPARED_CALLS] == 1


def test_gradient_checks_also_compare_the_compiled_gradients(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(2).uniform(-1, 1, size=(3, 4))
    with compile_mode.enabled():
        check_gradients(lambda t: op("float_exp", t) * t, [x], B, what="exp_times_x")
    assert compile_mode.OUTCOMES[compile_mode.COMPARED_GRADS] == 1
    run = Plan.run

    def scaled_gradient(self: Plan, *args: Any, **kwargs: Any) -> list[Any]:
        outs = run(self, *args, **kwargs)
        return [*outs[:-1], self.backend.float_mul_scalar(outs[-1], 2.0)]

    monkeypatch.setattr(Plan, "run", scaled_gradient)
    with compile_mode.enabled(), pytest.raises(AssertionError, match="compiled gradient of input 0"):
        check_gradients(lambda t: op("float_exp", t) * t, [x], B, what="exp_times_x")
