"""Casts between dtypes and conversions between kinds (float, int, bool)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    FLOAT_DTYPES,
    INT_DTYPES,
    check_exact,
    check_float,
    f64,
    make,
    rand_bool,
    rand_float,
    rand_int,
    require_dtype,
)


@covers("bool_into_int", "bool_into_float")
@pytest.mark.parametrize("shape", [(), (0, 2), (3, 4)], ids=str)
def test_bool_to_int_and_float(backend: Any, shape: Any, rng: Any) -> None:
    a = rand_bool(rng, shape)
    t = make(backend, a, DType.BOOL)
    check_exact(t.int(), a.astype(np.int64), backend.int_dtype, what="bool.int()")
    check_float(t.float(), a.astype(np.float64), backend.float_dtype, what="bool.float()")


@covers("bool_into_int", "bool_into_float")
@pytest.mark.parametrize("dtype", [*FLOAT_DTYPES, *INT_DTYPES], ids=lambda d: d.value)
def test_bool_cast_to_each_dtype(backend: Any, dtype: DType, rng: Any) -> None:
    require_dtype(backend, dtype)
    a = rand_bool(rng, (3, 5))
    out = make(backend, a, DType.BOOL).cast(dtype)
    check_exact(out, a.astype(dtype.numpy), dtype, what=f"bool.cast({dtype.value})")


@covers("float_cast")
@pytest.mark.parametrize("target", FLOAT_DTYPES, ids=lambda d: d.value)
def test_float_cast(backend: Any, float_dtype: DType, target: DType, rng: Any) -> None:
    require_dtype(backend, target)
    x = rand_float(rng, (3, 4), float_dtype, -100, 100)
    out = make(backend, x, float_dtype).cast(target)
    # NumPy's rounding of the source to the target, within the target's tolerance (a backend may
    # narrow in two steps, which can differ by one ulp on ties).
    check_float(out, f64(x.astype(target.numpy)), target, what=f"{float_dtype.value} -> {target.value}")


@covers("float_into_int")
@pytest.mark.parametrize("target", INT_DTYPES, ids=lambda d: d.value)
def test_float_to_int_truncates(backend: Any, float_dtype: DType, target: DType) -> None:
    require_dtype(backend, target)
    x = np.array([-2.75, -1.5, -0.25, 0.0, 0.5, 1.75, 3.0, 100.5]).astype(float_dtype.numpy)
    if target is DType.U8:
        x = np.abs(x)
    expected = np.trunc(f64(x)).astype(target.numpy)
    check_exact(make(backend, x, float_dtype).cast(target), expected, target, what=f"cast({target.value})")
    if target is backend.int_dtype:
        check_exact(make(backend, x, float_dtype).int(), expected, target, what="int()")


@covers("int_cast")
@pytest.mark.parametrize("target", INT_DTYPES, ids=lambda d: d.value)
def test_int_cast(backend: Any, int_dtype: DType, target: DType, rng: Any) -> None:
    require_dtype(backend, target)
    x = rand_int(rng, (3, 4), int_dtype, 0, 100)
    check_exact(make(backend, x, int_dtype).cast(target), x.astype(target.numpy), target, what="int cast")


@covers("int_into_float")
@pytest.mark.parametrize("target", FLOAT_DTYPES, ids=lambda d: d.value)
def test_int_to_float(backend: Any, int_dtype: DType, target: DType, rng: Any) -> None:
    require_dtype(backend, target)
    x = rand_int(rng, (2, 5), int_dtype, -100, 100)
    check_exact(make(backend, x, int_dtype).cast(target), x.astype(target.numpy), target, what="int -> float")
    if target is backend.float_dtype:
        check_exact(make(backend, x, int_dtype).float(), x.astype(target.numpy), target, what="float()")


@covers("float_cast")
def test_to_full_precision(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (2, 3), float_dtype)
    out = make(backend, x, float_dtype).to_full_precision()
    if float_dtype in (DType.F16, DType.BF16):
        require_dtype(backend, DType.F32)
        check_exact(out, x.astype(np.float32), DType.F32, what="to_full_precision")
    else:
        check_exact(out, x, float_dtype, what="to_full_precision keeps float32/float64")


@covers("float_into_int", "int_into_float", "bool_into_float", "float_not_equal_elem")
def test_kind_conversions_between_backend_dtypes(backend: Any, rng: Any) -> None:
    x = rand_float(rng, (4,), backend.float_dtype, -3, 3)
    t = make(backend, x, backend.float_dtype)
    check_exact(t.bool(), f64(x) != 0, DType.BOOL, what="float.bool()")
    ints = t.int()
    check_exact(ints.float(), np.trunc(f64(x)), backend.float_dtype, what="float.int().float()")
    check_exact(ints.bool(), np.trunc(f64(x)) != 0, DType.BOOL, what="int.bool()")
