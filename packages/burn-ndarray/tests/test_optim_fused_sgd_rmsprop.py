"""burn-ndarray's fused SGD with momentum and RMSProp (`burn_ndarray.ops.optim`): the default op's
bits on every path (NumPy passes, compiled kernel on one or more threads, first step, every
option, states written in place or not), the optimizers' bits before the fused ops, and the
fallbacks."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product
from typing import Any

import numpy as np
import pytest

import burn_ndarray
from burn.backend.ops.optim import OptimOps as _DefaultOps
from burn_ndarray import kernels
from burn_ndarray.ops import optim

DEFAULT: Any = _DefaultOps  # the contract's default ops, called on the backend
SHAPE = (301, 517)  # 606 KB of float32: above the in-place threshold; rows split unevenly
# (momentum, dampening, nesterov, weight_decay, lr) and (alpha, epsilon, centered, momentum,
# weight_decay, lr): every combination of the options.
SGD_CASES = [(0.9, 0.1, nesterov, decay, 0.01) for nesterov, decay in product([False, True], [None, 0.05])]
RMSPROP_CASES = [
    (0.9, 1e-5, centered, momentum, decay, 0.01)
    for centered, momentum, decay in product([False, True], [0.0, 0.8], [None, 0.05])
]


def case_id(case: tuple[Any, ...]) -> str:
    return "-".join(str(x) for x in case)


@pytest.fixture(params=["passes", "compiled", "threaded"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which implementation runs: the NumPy passes, or the kernel on one or three threads."""
    before = burn_ndarray.get_num_threads()
    if request.param == "passes":
        monkeypatch.setattr(kernels, "load", lambda name: None)
    else:
        burn_ndarray.set_num_threads(3 if request.param == "threaded" else 1)
        monkeypatch.setattr(optim, "COMPILED_PER_THREAD", 1 << 12)
    yield str(request.param)
    burn_ndarray.set_num_threads(before)


def operands(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    """param, grad, and the states: square average above any squared gradient average."""
    p, g, a, b = (rng.standard_normal(SHAPE).astype(dtype) for _ in range(4))
    s = rng.uniform(1.0, 2.0, size=SHAPE).astype(dtype)
    return [p, g, s, (0.2 * a).astype(dtype), b]


def copies(arrays: list[np.ndarray | None]) -> list[np.ndarray | None]:
    return [None if a is None else a.copy() for a in arrays]


def assert_same(got: Any, expected: Any, dtype: Any) -> None:
    assert len(got) == len(expected)
    for x, y in zip(got, expected, strict=True):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.dtype == dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("first", [True, False], ids=["first-step", "later-step"])
@pytest.mark.parametrize("case", SGD_CASES, ids=case_id)
def test_sgd_same_bits_as_the_default_op(
    B: Any, rng: Any, path: str, dtype: Any, first: bool, case: tuple[Any, ...]
) -> None:
    p, g, v, _, _ = operands(rng, dtype)
    velocity = None if first else v
    expected = DEFAULT.float_sgd_momentum_step(B, p, g, *copies([velocity]), *case)
    assert_same(B.float_sgd_momentum_step(p, g, *copies([velocity]), *case), expected, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("first", [True, False], ids=["first-step", "later-step"])
@pytest.mark.parametrize("case", RMSPROP_CASES, ids=case_id)
def test_rmsprop_same_bits_as_the_default_op(
    B: Any, rng: Any, path: str, dtype: Any, first: bool, case: tuple[Any, ...]
) -> None:
    p, g, *states = operands(rng, dtype)
    given: list[np.ndarray | None] = [None, None, None] if first else list(states)
    expected = DEFAULT.float_rmsprop_step(B, p, g, *copies(given), *case)
    assert_same(B.float_rmsprop_step(p, g, *copies(given), *case), expected, dtype)


@pytest.mark.parametrize("given", ["square_avg", "square_avg+grad_avg", "square_avg+buffer"])
def test_rmsprop_with_some_states_absent(B: Any, rng: Any, path: str, given: str) -> None:
    """A state turned on after the first step (centered, momentum) starts as on a first step."""
    p, g, s, a, b = operands(rng, np.float32)
    states = [s, a if "grad_avg" in given else None, b if "buffer" in given else None]
    case = (0.9, 1e-5, True, 0.8, None, 0.01)
    expected = DEFAULT.float_rmsprop_step(B, p, g, *copies(states), *case)
    assert_same(B.float_rmsprop_step(p, g, *copies(states), *case), expected, np.float32)


def addresses(*arrays: np.ndarray | None) -> list[int]:
    return [a.__array_interface__["data"][0] for a in arrays if a is not None]


def test_handed_over_states_are_written_in_place(B: Any, rng: Any, path: str) -> None:
    p, g, s, a, b = operands(rng, np.float32)
    sgd_case, rms_case = SGD_CASES[3], RMSPROP_CASES[7]  # every option on
    expected_v = DEFAULT.float_sgd_momentum_step(B, p, g, b.copy(), *sgd_case)
    expected = DEFAULT.float_rmsprop_step(B, p, g, s.copy(), a.copy(), b.copy(), *rms_case)
    velocity, square_avg, grad_avg, buffer = b.copy(), s.copy(), a.copy(), b.copy()
    before = addresses(velocity, square_avg, grad_avg, buffer)
    grads, g_before = [g], g.copy()  # a second holder: read by both calls, so never written over
    # No *args: CPython's argument tuple would be a second holder of the states.
    new_v = B.float_sgd_momentum_step(p, g, velocity, 0.9, 0.1, True, 0.05, 0.01)
    new = B.float_rmsprop_step(p, g, square_avg, grad_avg, buffer, 0.9, 1e-5, True, 0.8, 0.05, 0.01)
    assert addresses(new_v[1], *new[1:]) == before
    assert_same(new_v, expected_v, np.float32)
    assert_same(new, expected, np.float32)
    np.testing.assert_array_equal(grads[0], g_before)


def test_states_held_elsewhere_are_only_read(B: Any, rng: Any, path: str) -> None:
    p, g, s, a, b = operands(rng, np.float32)
    kept = [s.copy(), a.copy(), b.copy()]
    square_avg, grad_avg, buffer = kept
    B.float_sgd_momentum_step(p, g, buffer, 0.9, 0.1, True, 0.05, 0.01)
    B.float_rmsprop_step(p, g, square_avg, grad_avg, buffer, 0.9, 1e-5, True, 0.8, 0.05, 0.01)
    for x, y in zip(kept, [s, a, b], strict=True):
        np.testing.assert_array_equal(x, y)


def test_views_and_other_dtypes_take_the_passes_or_the_default_op(B: Any, rng: Any, path: str) -> None:
    p, g, s, a, b = operands(rng, np.float32)
    sgd_case, rms_case = SGD_CASES[3], RMSPROP_CASES[7]
    for convert in (lambda x: x.T, lambda x: x.astype(np.float16)):  # not C-contiguous; float16
        p2, g2, s2, a2, b2 = (convert(x) for x in (p, g, s, a, b))
        expected_v = DEFAULT.float_sgd_momentum_step(B, p2, g2, b2.copy(), *sgd_case)
        assert_same(B.float_sgd_momentum_step(p2, g2, b2.copy(), *sgd_case), expected_v, p2.dtype)
        expected = DEFAULT.float_rmsprop_step(B, p2, g2, s2.copy(), a2.copy(), b2.copy(), *rms_case)
        assert_same(
            B.float_rmsprop_step(p2, g2, s2.copy(), a2.copy(), b2.copy(), *rms_case), expected, p2.dtype
        )


@pytest.mark.parametrize("optimizer", ["sgd", "rmsprop"])
def test_optimizers_keep_the_bits_of_their_unfused_updates(B: Any, optimizer: str, rng: Any) -> None:
    """Five steps through `OptimizerAdaptor` with every option on, params of several sizes (each
    path): the bits of the update as the optimizers wrote it with tensor ops before."""
    from burn import Tensor, optim
    from burn.module import Module, Param

    class Weights(Module):
        ws: list

    backend = B
    shapes = [(7,), (40, 40), (300, 300)]
    starts = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    steps = [[Tensor.from_data(rng.standard_normal(s).astype(np.float32), backend=backend) for s in shapes]]
    steps += [[Tensor.from_data(rng.standard_normal(s).astype(np.float32), backend=backend) for s in shapes]]
    steps *= 3
    decay = optim.WeightDecayConfig(0.05)
    if optimizer == "sgd":
        config: Any = optim.SgdConfig(
            momentum=optim.MomentumConfig(0.8, 0.1, nesterov=True), weight_decay=decay
        )
    else:
        config = optim.RmsPropConfig(alpha=0.9, momentum=0.8, centered=True, weight_decay=decay)
    model = Weights([Param.from_tensor(Tensor.from_data(x, backend=backend)) for x in starts])
    fused = config.init()
    for grads in steps:
        model = fused.step(
            0.01, model, optim.GradientsParams({p.id: g for p, g in zip(model.ws, grads, strict=True)})
        )
    for i, start in enumerate(starts):
        tensor = Tensor.from_data(start, backend=backend)
        state: dict[str, Any] = {}
        for grads in steps:
            g = decay.transform(grads[i], tensor)
            if optimizer == "sgd":
                update, state["velocity"] = config.momentum.transform(g, state.get("velocity"))
            else:
                s = g * g * (1.0 - 0.9)
                s = s if "s" not in state else state["s"] * 0.9 + s
                a = g * (1.0 - 0.9)
                a = a if "a" not in state else state["a"] * 0.9 + a
                update = g / ((s - a * a).sqrt() + 1e-5)
                update = update if "b" not in state else state["b"] * 0.8 + update
                state.update(s=s, a=a, b=update)
            tensor = tensor - update * 0.01
        np.testing.assert_array_equal(model.ws[i].val().to_numpy(), tensor.to_numpy(), err_msg=str(shapes[i]))


def test_a_handed_over_gradient_receives_the_new_param(B: Any, rng: Any, path: str) -> None:
    """A gradient held by nothing else is written over by the compiled pass of either update (on
    one thread or three): no new buffer, the same bits; the NumPy passes only read it."""
    p, g, s, a, b = operands(rng, np.float32)
    sgd_case, rms_case = SGD_CASES[3], RMSPROP_CASES[7]
    expected_v = DEFAULT.float_sgd_momentum_step(B, p, g, b.copy(), *sgd_case)
    expected = DEFAULT.float_rmsprop_step(B, p, g, s.copy(), a.copy(), b.copy(), *rms_case)
    grad, velocity = g.copy(), b.copy()
    where = grad.__array_interface__["data"][0]
    # No *args: CPython's argument tuple would be a second holder of the operands.
    new_v = B.float_sgd_momentum_step(p, grad, velocity, 0.9, 0.1, True, 0.05, 0.01)
    assert (new_v[0].__array_interface__["data"][0] == where) is (path != "passes")
    assert_same(new_v, expected_v, np.float32)
    grad, square_avg, grad_avg, buffer = g.copy(), s.copy(), a.copy(), b.copy()
    where = grad.__array_interface__["data"][0]
    new = B.float_rmsprop_step(p, grad, square_avg, grad_avg, buffer, 0.9, 1e-5, True, 0.8, 0.05, 0.01)
    assert (new[0].__array_interface__["data"][0] == where) is (path != "passes")
    assert_same(new, expected, np.float32)
