"""Contract ops the Tensor API does not necessarily reach, called on primitives directly.

`Tensor.zeros` may be built on ``*_full`` and `require_grad` may be refused before the backend is
asked, yet other callers (autodiff rules, module code, optimizers) use these ops directly: every
backend override of them must still be right.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend.contract import op_facts
from burn.foundations.data import TensorData
from burn.foundations.distribution import Uniform
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import INT_DTYPES, make, rand_int, require_dtype


def _read(backend: Any, kind: str, primitive: Any) -> tuple[tuple[int, ...], DType, np.ndarray]:
    data: TensorData = getattr(backend, f"{kind}_into_data")(primitive)
    shape = tuple(getattr(backend, f"{kind}_shape")(primitive))
    dtype = DType.BOOL if kind == "bool" else getattr(backend, f"{kind}_get_dtype")(primitive)
    return shape, dtype, data.array


def _kind(dtype: DType) -> str:
    return "float" if dtype.is_float else ("int" if dtype.is_int else "bool")


@covers(*(f"{kind}_{op}" for kind in ("float", "int", "bool") for op in ("zeros", "ones", "full", "empty")))
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3)], ids=str)
def test_creation_ops(backend: Any, any_dtype: DType, shape: tuple[int, ...]) -> None:
    kind = _kind(any_dtype)
    device = backend.default_device()
    dtype_arg = () if kind == "bool" else (any_dtype,)
    value = 2.5 if kind == "float" else (7 if kind == "int" else True)
    cases = [
        ("zeros", getattr(backend, f"{kind}_zeros")(shape, device, *dtype_arg), 0),
        ("ones", getattr(backend, f"{kind}_ones")(shape, device, *dtype_arg), 1),
        ("full", getattr(backend, f"{kind}_full")(shape, value, device, *dtype_arg), value),
    ]
    for name, primitive, fill in cases:
        got_shape, got_dtype, array = _read(backend, kind, primitive)
        assert (got_shape, got_dtype) == (shape, any_dtype), f"{kind}_{name}: {got_shape} {got_dtype}"
        np.testing.assert_array_equal(
            array, np.full(shape, fill, dtype=any_dtype.numpy), err_msg=f"{kind}_{name}"
        )
        assert getattr(backend, f"{kind}_device")(primitive) == device
    empty = getattr(backend, f"{kind}_empty")(shape, device, *dtype_arg)
    assert _read(backend, kind, empty)[:2] == (shape, any_dtype), f"{kind}_empty"


@covers("float_set_require_grad", "float_is_require_grad", "float_detach")
def test_autodiff_hooks_on_primitives(backend: Any) -> None:
    x = np.array([1.0, -2.0, 3.0])
    p = make(backend, x, backend.float_dtype)._p
    assert backend.float_is_require_grad(p) is False
    for out in (backend.float_set_require_grad(p, False), backend.float_detach(p)):
        assert backend.float_is_require_grad(out) is False
        np.testing.assert_array_equal(backend.float_into_data(out).array, x.astype(backend.float_dtype.numpy))
    if not backend.ad_enabled:
        with pytest.raises(TypeError, match="autodiff"):
            backend.float_set_require_grad(p, True)
        return
    tracked = backend.float_set_require_grad(p, True)
    assert backend.float_is_require_grad(tracked) is True
    assert backend.float_is_require_grad(p) is False, "set_require_grad must not change its input"
    assert backend.float_is_require_grad(backend.float_detach(tracked)) is False
    assert backend.float_is_require_grad(backend.float_set_require_grad(tracked, False)) is False


@covers("int_cast")
@pytest.mark.parametrize("target", INT_DTYPES, ids=lambda d: d.value)
def test_int_cast_on_primitives(backend: Any, target: DType, rng: Any) -> None:
    require_dtype(backend, target)
    x = rand_int(rng, (2, 3), backend.int_dtype, 0, 100)
    out = backend.int_cast(make(backend, x, backend.int_dtype)._p, target)
    assert backend.int_get_dtype(out) is target
    np.testing.assert_array_equal(backend.int_into_data(out).array, x.astype(target.numpy))


@covers("float_sum", "float_prod", "float_max", "float_min", "float_mean", "int_sum", "int_prod", "int_max",
        "int_min", "int_mean", "bool_any", "bool_all")  # fmt: skip
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)], ids=str)
def test_full_reductions_give_shape_one(backend: Any, shape: tuple[int, ...], rng: Any) -> None:
    f = make(backend, rng.uniform(0.5, 1.5, size=shape), backend.float_dtype)
    i = make(backend, rand_int(rng, shape, backend.int_dtype, 1, 3), backend.int_dtype)
    b = make(backend, rng.random(size=shape) < 0.5, DType.BOOL)
    for op, t in [("float_sum", f), ("float_prod", f), ("float_max", f), ("float_min", f), ("float_mean", f),
                  ("int_sum", i), ("int_prod", i), ("int_max", i), ("int_min", i), ("int_mean", i),
                  ("bool_any", b), ("bool_all", b)]:  # fmt: skip
        result = getattr(backend, op)(t._p)
        shape_of = getattr(backend, f"{op.split('_')[0]}_shape")
        assert tuple(shape_of(result)) == (1,), (
            f"{op} of shape {shape} gave shape {shape_of(result)}, not (1,)"
        )


def _result_cases(backend: Any) -> list[tuple[str, Any]]:
    """One call of each kind of result the contract declares (`OpFacts.results`): family kinds,
    conversions, indices, comparisons with and without an element-wise rule, index tuples."""
    device = backend.default_device()
    fd, idt = backend.float_dtype, backend.int_dtype
    f = make(backend, np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]]), fd)._p
    i = make(backend, np.array([[3, 1, 2], [0, 5, 4]]), idt)._p
    b = make(backend, np.array([[True, False, True], [False, False, True]]), DType.BOOL)._p
    x4 = make(backend, np.arange(16.0).reshape(1, 1, 4, 4), fd)._p
    two, zero = (2, 2), (0, 0)
    return [
        ("float_exp", lambda: backend.float_exp(f)),
        ("float_argmax", lambda: backend.float_argmax(f, 1)),
        ("float_argsort", lambda: backend.float_argsort(f, 1, False)),
        ("float_into_int", lambda: backend.float_into_int(f, idt)),
        ("float_greater_elem", lambda: backend.float_greater_elem(f, 0.0)),
        ("float_is_nan", lambda: backend.float_is_nan(f)),
        ("float_sort_with_indices", lambda: backend.float_sort_with_indices(f, 1, False)),
        ("float_max_dim_with_indices", lambda: backend.float_max_dim_with_indices(f, 1)),
        ("float_random", lambda: backend.float_random((4,), Uniform(), device, fd)),
        ("int_add", lambda: backend.int_add(i, i)),
        ("int_argmax", lambda: backend.int_argmax(i, 1)),
        ("int_greater", lambda: backend.int_greater(i, i)),
        ("int_equal_elem", lambda: backend.int_equal_elem(i, 2)),
        ("int_into_float", lambda: backend.int_into_float(i, fd)),
        ("int_arange", lambda: backend.int_arange(0, 5, 1, device, idt)),
        ("int_sort_with_indices", lambda: backend.int_sort_with_indices(i, 1, False)),
        ("bool_not", lambda: backend.bool_not(b)),
        ("bool_into_int", lambda: backend.bool_into_int(b, idt)),
        ("bool_into_float", lambda: backend.bool_into_float(b, fd)),
        ("bool_argwhere", lambda: backend.bool_argwhere(b)),
        ("max_pool2d_with_indices", lambda: backend.max_pool2d_with_indices(x4, two, two, zero, (1, 1))),
    ]


_RESULT_CASE_OPS = (
    "float_exp", "float_argmax", "float_argsort", "float_into_int", "float_greater_elem", "float_is_nan",
    "float_sort_with_indices", "float_max_dim_with_indices", "float_random", "int_add", "int_argmax",
    "int_greater", "int_equal_elem", "int_into_float", "int_arange", "int_sort_with_indices", "bool_not",
    "bool_into_int", "bool_into_float", "bool_argwhere", "max_pool2d_with_indices",
)


@covers(*_RESULT_CASE_OPS)
def test_declared_result_kinds_match_what_the_backend_returns(backend: Any) -> None:
    """The op facts' result kinds (`OpFacts.results`, which capture and compilers rely on) are
    what the backend gives: each result is read as its declared kind and has a dtype of it."""
    facts = op_facts()
    cases = _result_cases(backend)
    assert tuple(op for op, _ in cases) == _RESULT_CASE_OPS
    for op, call in cases:
        result = call()
        results = result if isinstance(result, tuple) else (result,)
        declared = facts[op].results
        for n, primitive in enumerate(results):
            kind = declared[min(n, len(declared) - 1)]
            _, dtype, array = _read(backend, kind, primitive)
            assert _kind(dtype) == kind, f"{op} result {n}: declared {kind}, the backend gives {dtype}"
            assert _kind(DType.from_any(array.dtype)) == kind, (
                f"{op} result {n}: declared {kind}, its data is {array.dtype}"
            )


@covers("float_random", "int_random")
def test_ops_declared_random_draw_from_the_generator(backend: Any) -> None:
    """An op declared ``random`` (never removed or reordered by a compiled program) draws anew
    on every call and repeats after `seed`."""
    device = backend.default_device()
    draws = {
        "float_random": lambda: backend.float_random((64,), Uniform(), device, backend.float_dtype),
        "int_random": lambda: backend.int_random((64,), Uniform(0.0, 1000.0), device, backend.int_dtype),
    }
    facts = op_facts()
    for op, draw in draws.items():
        assert facts[op].random, f"{op} draws from the generator but is not declared random=True"
        (kind,) = facts[op].results
        backend.seed(5)
        first, second = _read(backend, kind, draw())[2], _read(backend, kind, draw())[2]
        backend.seed(5)
        again = _read(backend, kind, draw())[2]
        assert not np.array_equal(first, second), f"{op}: two calls gave the same draw"
        np.testing.assert_array_equal(first, again, err_msg=f"{op}: the same seed gave another draw")
