"""Contract ops the Tensor API does not necessarily reach, called on primitives directly.

`Tensor.zeros` may be built on ``*_full`` and `require_grad` may be refused before the backend is
asked, yet other callers (autodiff rules, module code, optimizers) use these ops directly: every
backend override of them must still be right.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData
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
