"""Gradient checks: autodiff gradients against central finite differences (or a reference).

`check_gradients(fn, inputs, backend)` evaluates ``loss = sum(W * fn(*tensors))`` with fixed
random weights ``W`` (so every output element gets its own upstream gradient, not just ones),
runs ``loss.backward()`` on `backend`, and compares each float input's gradient with

    d loss / d x[i]  ~  (loss(x + eps e_i) - loss(x - eps e_i)) / (2 eps)

computed in float64 on the same backend with untracked tensors. The truncation error of the
central difference is ``O(eps^2)`` and its rounding error ``O(1e-16 |loss| / eps)``; with
``eps = 1e-6`` both stay far below the default tolerances (``rtol=1e-5, atol=1e-7``), while a
wrong rule is off by O(1).

A backend without float64 cannot resolve finite differences; there, the gradients (computed in
the backend's float dtype) are compared with those of the reference backend
``autodiff(ndarray)`` in float64 at the same (rounded) inputs, within float32-like tolerances.

`differentiable_ops()` lists the contract ops that must have a gradient test (from the facts
declared at each op, `burn.backend.contract`); the meta-test of ``test_gradients_meta.py``
enforces it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.testing.markers import covers


def _facts() -> Any:
    from burn.backend.contract import op_facts

    return op_facts()


# Contract ops whose result carries no gradient (metadata, creation, host exchange, comparisons,
# indices, optimizer updates: declared ``grad=False`` at the op), and the backward helpers the
# autodiff rules call (declared ``backward_of=``, checked by the op tests). Int and bool ops are
# left out of both: their results never carry one.
NOT_DIFFERENTIABLE = frozenset(
    name for name, f in _facts().items() if not f.differentiable and f.family not in ("int", "bool")
)
BACKWARD_HELPERS = frozenset(name for name, f in _facts().items() if f.backward_of is not None)


def differentiable_ops() -> set[str]:
    """Contract ops that produce a float result with a gradient, as declared at each op: a new
    op of a differentiable family is differentiable unless declared ``grad=False``."""
    return {name for name, f in _facts().items() if f.differentiable and f.backward_of is None}


def require_autodiff(backend: Any) -> None:
    """Skip (with the reason) unless `backend` records gradients."""
    if not getattr(backend, "ad_enabled", False):
        pytest.skip(
            f"backend {backend.name!r} is not ad_enabled: gradients are checked on an autodiff "
            f"backend, e.g. --burn-backend 'autodiff({backend.name})'"
        )


_REFERENCE = "autodiff(ndarray)"


def reference_backend() -> Any:
    """``autodiff(ndarray)`` in float64, the reference for backends without float64 (skip if absent)."""
    from burn.errors import BackendNotFoundError, BackendUnavailableError
    from burn.plugins import backend as get_backend

    try:
        return get_backend(_REFERENCE, float_dtype="float64")
    except (BackendNotFoundError, BackendUnavailableError) as exc:
        pytest.skip(f"backend has no float64 and the reference {_REFERENCE} is not available: {exc}")


def _tensor(backend: Any, value: np.ndarray, float_dtype: DType) -> Any:
    from burn import Tensor

    value = np.asarray(value)
    if value.dtype.kind == "f":
        dtype = float_dtype
    elif value.dtype.kind == "b":
        dtype = DType.BOOL
    else:
        dtype = backend.int_dtype
    return Tensor.from_data(TensorData(value, dtype), dtype=dtype, backend=backend)


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    """Upstream gradient: fixed per shape, in +-[0.5, 1.5] (no cancellation to zero)."""
    rng = np.random.default_rng(sum(shape) * 7919 + len(shape))
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return sign * rng.uniform(0.5, 1.5, size=shape)


def _host(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.to_data().array).astype(np.float64)


def analytic_gradients(
    fn: Callable[..., Any],
    inputs: Sequence[np.ndarray],
    backend: Any,
    float_dtype: DType,
    wrt: Sequence[int],
    what: str | None = None,
) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """``(output, [gradient of sum(W * output) per input in wrt, or None])`` on `backend`.

    In the suite's compile mode (``--burn-compile``), a call with `what` (the backend under
    test's, not the reference's) also checks that `burn.compile.grad` gives the same output and
    gradients (`burn.testing.compile_mode`).
    """
    from burn import Tensor
    from burn.testing import compile_mode

    tensors = [_tensor(backend, x, float_dtype) for x in inputs]
    plain = list(tensors)
    for i in wrt:
        tensors[i] = tensors[i].require_grad()
    draws = compile_mode.draws(backend)
    out = fn(*tensors)
    weights = Tensor.from_data(
        TensorData(_weights(tuple(out.shape)), out.dtype), dtype=out.dtype, backend=backend
    )
    grads = (out * weights).sum().backward()
    result = []
    for i in wrt:
        g = tensors[i].grad(grads)
        result.append(None if g is None else _host(g))
    out_host = _host(out)
    if what is not None and compile_mode.active():
        compile_mode.check_compiled_gradients(
            fn, plain, weights, np.asarray(out.to_data().array), result, wrt, backend, what, draws
        )
    return out_host, result


def numeric_gradient(
    fn: Callable[..., Any], inputs: Sequence[np.ndarray], backend: Any, index: int, eps: float
) -> np.ndarray:
    """Central differences of ``sum(W * fn(...))`` with respect to ``inputs[index]`` (float64)."""
    base = [np.asarray(x) for x in inputs]
    tensors = [_tensor(backend, x, DType.F64) for x in base]
    weights: np.ndarray | None = None
    x = base[index].astype(np.float64)
    grad = np.zeros_like(x)
    flat = grad.reshape(-1)
    for k in range(x.size):
        values = []
        for delta in (eps, -eps):
            moved = x.copy().reshape(-1)
            moved[k] += delta
            tensors[index] = _tensor(backend, moved.reshape(x.shape), DType.F64)
            out = _host(fn(*tensors))
            if weights is None:
                weights = _weights(out.shape)
            values.append(float(np.sum(weights * out)))
        flat[k] = (values[0] - values[1]) / (2.0 * eps)
    return grad


def check_gradients(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    backend: Any,
    *,
    wrt: Sequence[int] | None = None,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    what: str = "",
) -> None:
    """Assert that `backend`'s gradients of `fn` at `inputs` are right.

    Args:
        fn: takes one tensor per input (float arrays become Float tensors, int arrays Int
            tensors of the backend's int dtype, bool arrays Bool) and returns a Float tensor.
        inputs: NumPy arrays (or nested lists) — the point to differentiate at.
        backend: an ``ad_enabled`` backend.
        wrt: indices of the inputs to differentiate (default: every float input).
        eps, rtol, atol: finite-difference step and float64 tolerances.
        what: label for failure messages (the op).

    Example:
        >>> check_gradients(lambda x: x.exp(), [np.array([0.5, -1.0])], backend)  # doctest: +SKIP
    """
    require_autodiff(backend)
    arrays = [np.asarray(x) for x in inputs]
    if wrt is None:
        wrt = [i for i, x in enumerate(arrays) if x.dtype.kind == "f"]
    arrays = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in arrays]
    label = f"{what}: " if what else ""
    if backend.capabilities.supports(DType.F64):
        _, grads = analytic_gradients(fn, arrays, backend, DType.F64, wrt, what)
        for i, g in zip(wrt, grads, strict=True):
            assert g is not None, f"{label}input {i} requires grad but got no gradient"
            expected = numeric_gradient(fn, arrays, backend, i, eps)
            assert g.shape == expected.shape, (
                f"{label}gradient of input {i}: shape {g.shape}, expected {expected.shape}"
            )
            np.testing.assert_allclose(
                g,
                expected,
                rtol=rtol,
                atol=atol,
                err_msg=f"{label}gradient of input {i} vs central finite differences (float64)",
            )
        return
    # No float64: compare with the reference autodiff backend at the same rounded inputs.
    reference = reference_backend()
    dtype = backend.float_dtype
    rounded = [x.astype(dtype.numpy).astype(np.float64) if x.dtype.kind == "f" else x for x in arrays]
    _, grads = analytic_gradients(fn, rounded, backend, dtype, wrt, what)
    _, expected_grads = analytic_gradients(fn, rounded, reference, DType.F64, wrt)
    from burn.testing.helpers import tolerance

    d_rtol, d_atol = tolerance(dtype, 100)
    for i, g, ref in zip(wrt, grads, expected_grads, strict=True):
        assert g is not None, f"{label}input {i} requires grad but got no gradient"
        assert ref is not None, f"{label}input {i}: the reference {_REFERENCE} gave no gradient"
        np.testing.assert_allclose(
            g,
            ref,
            rtol=max(d_rtol * 10, 1e-4),
            atol=d_atol,
            err_msg=f"{label}gradient of input {i} ({dtype.value}) vs {_REFERENCE} (float64)",
        )


# -- building gradient cases (used by the ``test_<family>_gradients`` modules) ---------------
Gen = Callable[[np.random.Generator], np.ndarray]
Inputs = Callable[[np.random.Generator], list[np.ndarray]]


def op(name: str, *args: Any) -> Any:
    """Call the contract op `name` on the tensors' primitives (lists of tensors too) and wrap its
    float result (the first one for ops returning a tuple): the gradient tests differentiate
    exactly the op they name, whatever the Tensor layer composes.

    Example:
        >>> op("float_sum_dim", x, 1)  # doctest: +SKIP
    """
    from burn import Float, Tensor
    from burn.tensor._base import wrap

    first = next(a for a in args if isinstance(a, Tensor | list))
    backend = first[0].backend if isinstance(first, list) else first.backend
    prims = [a._p if isinstance(a, Tensor) else [t._p for t in a] if isinstance(a, list) else a for a in args]
    out = getattr(backend, name)(*prims)
    return wrap(out[0] if isinstance(out, tuple) else out, backend, Float)


@dataclass(frozen=True)
class Case:
    """One gradient check: `fn` (tensors -> Float tensor) at `inputs(rng)`, covering `ops`."""

    id: str
    ops: tuple[str, ...]
    fn: Callable[..., Any]
    inputs: Inputs


def u(shape: tuple[int, ...], low: float = -2.0, high: float = 2.0) -> Gen:
    """Uniform in ``[low, high)``."""
    return lambda rng: rng.uniform(low, high, size=shape)


def nz(shape: tuple[int, ...], low: float = 0.5, high: float = 2.0) -> Gen:
    """Away from zero, random sign."""
    return lambda rng: np.where(rng.random(shape) < 0.5, -1.0, 1.0) * rng.uniform(low, high, size=shape)


def distinct(shape: tuple[int, ...]) -> Gen:
    """Distinct values at least 0.1 apart (no ties for max/min/sort)."""
    size = int(np.prod(shape))
    return lambda rng: (
        (rng.permutation(size) * 0.25 - size * 0.1).reshape(shape) + rng.uniform(0, 0.05, shape)
    )


def frac(shape: tuple[int, ...], low: float = 0.1, high: float = 0.4) -> Gen:
    """Values whose fractional part is in [low, high] (away from round/floor/ceil jumps)."""
    return lambda rng: rng.integers(-3, 3, size=shape) + rng.uniform(low, high, size=shape)


def const(value: Any) -> Gen:
    """Fixed values (int arrays become Int tensors, bool arrays Bool tensors)."""
    return lambda rng: np.asarray(value)


def inputs(*gens: Gen) -> Inputs:
    """One array per generator."""
    return lambda rng: [g(rng) for g in gens]


def finite_difference_test(
    cases: Sequence[Case], module: str, name: str = "test_gradient_matches_finite_differences"
) -> Any:
    """A conformance test checking every case of `cases`, marked as covering their ops.

    The suite module `module` (its ``__name__``: the meta-tests read the marks of the tests a
    module defines) assigns it to `name`, the attribute pytest collects; case ids must be unique.

    Example:
        >>> from burn.testing.gradcheck import Case, finite_difference_test, inputs, op, u
        >>> CASES = [Case("exp", ("float_exp",), lambda x: op("float_exp", x), inputs(u((2, 3))))]
        >>> test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)
    """
    ids = [case.id for case in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"{name}: duplicate gradient case ids {repeated}")

    def test(backend: Any, case: Case, rng: np.random.Generator) -> None:
        check_gradients(case.fn, case.inputs(rng), backend, what=case.id)

    test.__name__ = test.__qualname__ = name
    test.__module__ = module
    marked = pytest.mark.parametrize("case", list(cases), ids=ids)(test)
    return covers(*sorted({op_name for case in cases for op_name in case.ops}))(marked)
