"""The contract's further float, layout, module and activation ops under autodiff.

Untracked inputs must reach the inner backend's own op (its native kernel, never burn-core's
composition re-run on the autodiff backend); tracked inputs must give the same values and the
gradients of burn-core's default composition, whether the op has a rule of its own or records
that composition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from conftest import host, leaf, tensor

from burn.backend import Backend
from burn_autodiff import ADTensor, Autodiff
from burn_ndarray import NdArray

_RNG = np.random.default_rng(1234)
_IDX_ND = [[1, 0], [0, 2], [1, 0]]  # repeats: accumulation and "the last update wins"


def _u(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return _RNG.uniform(lo, hi, size=shape)


def _distinct(*shape: int) -> np.ndarray:
    """Well-separated values (no ties for the max/min scatters)."""
    n = int(np.prod(shape))
    return (_RNG.permutation(n) * 0.37 - n * 0.15).reshape(shape)


@dataclass(frozen=True)
class Case:
    id: str
    op: str
    floats: tuple[np.ndarray, ...]
    args: Callable[[Any, list[Any]], tuple]  # (backend, float primitives) -> the op's arguments
    composed: bool = False  # tracked: records burn-core's composition (no rule of its own)


def _ints(B: Any, values: Any) -> Any:
    return tensor(B, np.asarray(values, dtype=np.int64))._p


def _unary(op: str, *extra: Any, shape: tuple[int, ...] = (2, 6), lo: float = -5.0, hi: float = 8.0) -> Case:
    return Case(op, op, (_u(*shape, lo=lo, hi=hi),), lambda B, f: (f[0], *extra))


def _scatter_nd_args(mode: str) -> Callable[[Any, list[Any]], tuple]:
    return lambda B, f: (f[0], _ints(B, _IDX_ND), f[1], mode)


CASES = [
    _unary("gelu_approximate"),
    _unary("elu", 0.7),
    _unary("celu", 1.5),
    _unary("selu"),
    _unary("relu6"),
    _unary("hardtanh", -1.0, 2.0),
    _unary("hard_swish"),
    _unary("softsign"),
    _unary("tanhshrink"),
    _unary("threshold", 0.5, -3.0),
    _unary("thresholded_relu", 1.0),
    Case("glu", "glu", (_u(2, 6, 3),), lambda B, f: (f[0], 1)),
    Case("softmin", "softmin", (_u(2, 5),), lambda B, f: (f[0], 1)),
    Case("unfold_gaps", "float_unfold", (_u(2, 7),), lambda B, f: (f[0], 1, 2, 3)),
    Case("unfold_overlap", "float_unfold", (_u(5, 2, 3),), lambda B, f: (f[0], 0, 3, 1)),
    Case("gather_nd", "float_gather_nd", (_u(2, 3, 2),), lambda B, f: (f[0], _ints(B, _IDX_ND))),
    *(
        Case(
            f"scatter_nd_{mode}",
            "float_scatter_nd",
            (_distinct(2, 3), _distinct(3)),
            _scatter_nd_args(mode),
            composed=mode not in ("add", "assign"),
        )
        for mode in ("add", "assign", "mul", "max", "min")
    ),
    Case(
        "scatter_nd_rows_assign",
        "float_scatter_nd",
        (_u(3, 2), _u(3, 2)),
        lambda B, f: (f[0], _ints(B, [[2], [0], [2]]), f[1], "assign"),
    ),
    Case(
        "scatter_assign",
        "float_scatter_assign",
        (_u(3, 4), _u(2, 3)),
        lambda B, f: (1, f[0], _ints(B, [[2, 0, 2], [1, 1, 3]]), f[1]),
    ),
    Case(
        "select_assign",
        "float_select_assign",
        (_u(2, 3, 2), _u(2, 4, 2)),
        lambda B, f: (f[0], 1, _ints(B, [2, 0, 2, 1]), f[1]),
    ),
    Case("cross", "float_cross", (_u(2, 3, 2), _u(2, 3, 2)), lambda B, f: (f[0], f[1], 1)),
    Case("unfold4d", "unfold4d", (_u(2, 2, 5, 5),), lambda B, f: (f[0], (2, 3), (2, 1), (1, 0), (1, 2))),
    Case(
        "fold4d", "fold4d", (_u(1, 2 * 6, 6),),
        lambda B, f: (f[0], (5, 4), (2, 3), (2, 1), (1, 0), (1, 1)),
    ),
    Case(
        "deform_conv2d",
        "deform_conv2d",
        (_u(1, 2, 4, 4), _u(1, 8, 3, 3), _u(3, 2, 2, 2), _u(1, 4, 3, 3, lo=0.0), _u(3)),
        lambda B, f: (*f, (1, 1), (0, 0), (1, 1), 1, 1),
        composed=True,
    ),
    Case(
        "grid_sample_2d",
        "grid_sample_2d",
        (_u(1, 2, 3, 4), _u(1, 2, 3, 2, lo=-1.1, hi=1.1)),
        lambda B, f: (f[0], f[1], "bilinear", "zeros", False),
        composed=True,
    ),
    Case("cumprod", "float_cumprod", (_u(2, 4),), lambda B, f: (f[0], 1), composed=True),
]
_IDS = [c.id for c in CASES]


def _spy(monkeypatch: pytest.MonkeyPatch, nd: NdArray, name: str) -> list[int]:
    """Count the calls of `nd`'s op `name` (an instance attribute shadows the method)."""
    calls: list[int] = []
    real = getattr(nd, name)

    def spy(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(nd, name, spy, raising=False)
    return calls


def _run(B: Autodiff, case: Case, op: Callable[..., Any], tracked: tuple[bool, ...]) -> tuple[list, Any]:
    ts = [leaf(B, a) if t else tensor(B, a) for a, t in zip(case.floats, tracked, strict=True)]
    return ts, op(*case.args(B, [t._p for t in ts]))


def _gradients(B: Autodiff, case: Case, op: Callable[..., Any], tracked: tuple[bool, ...]) -> list:
    """Gradients of ``sum(out * w)`` (a fixed random `w`) for the tracked inputs."""
    ts, out = _run(B, case, op, tracked)
    w = np.random.default_rng(7).uniform(0.5, 1.5, size=B.float_shape(out))
    loss = B.float_sum(B.float_mul(out, tensor(B, w)._p))
    grads = B.backward(loss)
    return [B.grad(t._p, grads) if tr else None for t, tr in zip(ts, tracked, strict=True)]


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_untracked_inputs_run_the_inner_op(
    B: Autodiff, nd: NdArray, case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _spy(monkeypatch, nd, case.op)
    _, out = _run(B, case, getattr(B, case.op), (False,) * len(case.floats))
    assert len(calls) == 1, f"{case.op}: the inner op ran {len(calls)} times"
    assert type(out) is ADTensor and out.node is None
    # the value is the contract's: burn-core's default on the inner primitives
    inner_args = case.args(nd, [tensor(nd, a)._p for a in case.floats])
    expected = getattr(Backend, case.op)(nd, *inner_args)
    np.testing.assert_allclose(B.float_inner(out), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_tracked_inputs_give_the_same_values_and_the_compositions_gradients(
    B: Autodiff, nd: NdArray, case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracked = (True,) * len(case.floats)
    _, plain = _run(B, case, getattr(B, case.op), (False,) * len(case.floats))
    calls = _spy(monkeypatch, nd, case.op)
    _, out = _run(B, case, getattr(B, case.op), tracked)
    assert out.node is not None
    np.testing.assert_allclose(B.float_inner(out), B.float_inner(plain), rtol=1e-12, atol=1e-12)
    # a rule keeps the inner kernel for the forward; a composition records its own ops instead
    assert len(calls) == (0 if case.composed else 1)
    monkeypatch.undo()

    got = _gradients(B, case, getattr(B, case.op), tracked)
    composed = getattr(Backend, case.op)
    expected = _gradients(B, case, lambda *args: composed(B, *args), tracked)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, err_msg=f"{case.id}: input {i}")


@pytest.mark.parametrize("op", ["float_cross", "float_select_assign", "float_scatter_assign"])
@pytest.mark.parametrize("tracked", [(True, False), (False, True)], ids=["first", "second"])
def test_gradients_of_one_tracked_operand(B: Autodiff, op: str, tracked: tuple[bool, bool]) -> None:
    case = next(c for c in CASES if c.op == op)
    got = _gradients(B, case, getattr(B, op), tracked)
    composed = getattr(Backend, op)
    expected = _gradients(B, case, lambda *args: composed(B, *args), tracked)
    for g, e, tr in zip(got, expected, tracked, strict=True):
        assert (g is None) is (not tr)
        if tr:
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def test_assign_gives_no_gradient_to_overwritten_positions_or_losing_updates(B: Autodiff) -> None:
    x = leaf(B, np.zeros(4))
    v = leaf(B, [1.0, 2.0, 3.0])
    out = x.scatter(0, tensor(B, np.array([1, 1, 3])), v, mode="assign")
    np.testing.assert_array_equal(host(out), [0.0, 2.0, 0.0, 3.0])
    grads = (out * tensor(B, [1.0, 10.0, 100.0, 1000.0])).sum().backward()
    np.testing.assert_array_equal(host(x.grad(grads)), [1.0, 0.0, 100.0, 0.0])
    np.testing.assert_array_equal(host(v.grad(grads)), [0.0, 10.0, 1000.0])  # the first 1 lost


def test_breakpoints_follow_the_documented_conventions(B: Autodiff) -> None:
    x = leaf(B, [-3.0, 0.0, 3.0, 6.0])
    outs = (
        B.hard_swish(x._p), B.relu6(x._p), B.elu(x._p, 0.5), B.celu(x._p, 2.0), B.threshold(x._p, 3.0, 0.0),
    )
    grads = [_grad_of_sum(B, x, y) for y in outs]
    np.testing.assert_allclose(grads[0], [0.0, 0.5, 1.0, 1.0])  # hard_swish: 0 at -3, 1 at 3
    np.testing.assert_allclose(grads[1], [0.0, 0.0, 1.0, 0.0])  # relu6: strictly inside (0, 6)
    np.testing.assert_allclose(grads[2], [0.5 * np.exp(-3.0), 0.5, 1.0, 1.0])  # elu at 0: alpha
    np.testing.assert_allclose(grads[3], [np.exp(-1.5), 1.0, 1.0, 1.0])  # celu at 0: 1
    np.testing.assert_allclose(grads[4], [0.0, 0.0, 0.0, 1.0])  # threshold: strictly above


def _grad_of_sum(B: Autodiff, x: Any, out: ADTensor) -> np.ndarray:
    grads = B.backward(B.float_sum(out))
    return np.asarray(B.grad(x._p, grads))


def test_rule_gradients_of_gradients(B: Autodiff) -> None:
    # The rules compute on the inner backend: over Autodiff(Autodiff(x)) they are recorded there.
    outer = Autodiff(B)
    x_inner = leaf(B, [-0.5, 0.25, 1.5])
    x = ADTensor(x_inner._p, None)
    x = outer.float_set_require_grad(x, True)
    gx = outer.grad(x, outer.backward(outer.float_sum(outer.softsign(x))))  # 1 / (1 + |x|)^2
    np.testing.assert_allclose(B.float_inner(gx), 1.0 / (1.0 + np.abs([-0.5, 0.25, 1.5])) ** 2)
    second = B.grad(x_inner._p, B.backward(B.float_sum(gx)))  # -2 sign(x) / (1 + |x|)^3
    expected = -2.0 * np.sign([-0.5, 0.25, 1.5]) / (1.0 + np.abs([-0.5, 0.25, 1.5])) ** 3
    np.testing.assert_allclose(second, expected)


def test_balanced_checkpointing_recomputes_the_new_elementwise_ops() -> None:
    def run(strategy: str | None) -> tuple[list[np.ndarray], list[bool]]:
        B = Autodiff(NdArray(float_dtype="float64"), checkpointing=strategy)
        rng = np.random.default_rng(3)
        w = leaf(B, rng.uniform(-1, 1, (4, 4)))
        y = leaf(B, rng.uniform(0.5, 1.5, (3, 4)))
        h = B.float_matmul(tensor(B, rng.uniform(-1, 1, (3, 4)))._p, w._p)
        a = B.elu(B.float_tan(B.float_mul_scalar(h, 0.5)), 0.8)
        b = B.hard_swish(B.float_atan2(a, y._p))
        c = B.glu(B.float_cat([B.softsign(b), B.tanhshrink(a)], 1), 1)
        # read before backward, which frees what the nodes hold
        recomputed = [t.node is not None and t.node.recompute is not None for t in (a, b)]
        grads = B.backward(B.float_sum(c))
        return [B.grad(t._p, grads) for t in (w, y)], recomputed

    plain, kept = run(None)
    balanced, recomputed = run("balanced")
    assert kept == [False, False]
    assert recomputed == [True, True]  # memory-bound: recomputed in backward, outputs not kept
    for p, q in zip(plain, balanced, strict=True):
        np.testing.assert_allclose(q, p, rtol=1e-12)
