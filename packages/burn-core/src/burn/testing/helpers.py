"""Helpers of the conformance suite: tolerances, inputs, tensors from NumPy, and checks.

References are computed by NumPy in float64 from the inputs *after* rounding them to the dtype
under test, so the only error allowed is the backend's own rounding, bounded per dtype by the
table of `burn.testing.tolerances` (re-exported here).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

# re-exported: tests import them from here; the table itself lives in tolerances.py
from burn.testing.tolerances import EPS, TOLERANCES, iterated_tolerance, tolerance  # noqa: F401

FLOAT_DTYPES = (DType.F64, DType.F32, DType.F16, DType.BF16)
INT_DTYPES = (DType.I64, DType.I32, DType.I16, DType.I8, DType.U8)


def require_dtype(backend: Any, dtype: DType) -> None:
    """Skip the test, naming the capability, when `backend` does not declare `dtype`."""
    if not backend.capabilities.supports(dtype):
        pytest.skip(f"capability dtype:{dtype.value} not declared by backend {backend.name!r}")


def require_feature(backend: Any, feature: str) -> None:
    """Skip the test, naming the capability, when `backend` does not declare `feature`."""
    if not backend.capabilities.has(feature):
        pytest.skip(f"capability feature:{feature} not declared by backend {backend.name!r}")


def require_devices(backend: Any, count: int) -> list[Any]:
    """The backend's devices; skip (capability ``multi_device``) when it has fewer than `count`."""
    devices = backend.devices()
    if len(devices) < count:
        pytest.skip(
            f"capability feature:multi_device: backend {backend.name!r} has {len(devices)} device(s), "
            f"the test needs {count}"
        )
    return list(devices)


# -- inputs -----------------------------------------------------------------------------------
def int_range(dtype: DType, low: int, high: int) -> tuple[int, int]:
    """``[low, high]`` clipped to what `dtype` holds (unsigned: from 0)."""
    info = np.iinfo(dtype.numpy)
    return max(low, int(info.min)), min(high, int(info.max))


def rand_float(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: DType, low: float = -2.0, high: float = 2.0
) -> np.ndarray:
    """Uniform values in ``[low, high)`` already rounded to `dtype` (NumPy array of that dtype)."""
    return rng.uniform(low, high, size=shape).astype(dtype.numpy)


def rand_nonzero(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: DType, low: float = 0.5, high: float = 2.0
) -> np.ndarray:
    """Values with ``low <= |x| < high`` and a random sign (safe divisors)."""
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return (sign * rng.uniform(low, high, size=shape)).astype(dtype.numpy)


def rand_grid(rng: np.random.Generator, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    """Values on the grid ``-2, -1.5, ..., 2`` (exact in every dtype): ties happen often."""
    return (rng.integers(-4, 5, size=shape) / 2.0).astype(dtype.numpy)


def rand_int(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: DType, low: int = -9, high: int = 9
) -> np.ndarray:
    """Integers in ``[low, high]`` (clipped to the dtype) of `dtype`."""
    lo, hi = int_range(dtype, low, high)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype.numpy)


def rand_bool(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.random(size=shape) < 0.5


def rand_distinct(rng: np.random.Generator, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    """Distinct values (a shuffled grid exact in every dtype): a maximum is never tied."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / 8.0 - n / 16.0).astype(dtype.numpy)


def f64(array: Any) -> np.ndarray:
    """`array` as float64 (bfloat16 included)."""
    return np.asarray(array).astype(np.float64)


# -- tensors ----------------------------------------------------------------------------------
def make(backend: Any, values: Any, dtype: DType | str, device: Any = None) -> Any:
    """A `burn.Tensor` of `backend` holding `values` with exactly `dtype` (kind follows it)."""
    from burn import Tensor

    dtype = DType.from_any(dtype)
    data = TensorData(np.asarray(values), dtype)
    if device is None:
        return Tensor.from_data(data, dtype=dtype, backend=backend)
    return Tensor.from_data(data, device, dtype=dtype, backend=backend)


def float_input(
    backend: Any,
    rng: np.random.Generator,
    dtype: DType,
    shape: tuple[int, ...],
    low: float = -2.0,
    high: float = 2.0,
) -> tuple[np.ndarray, Any]:
    """Uniform values in ``[low, high)`` rounded to `dtype`: their float64 reference and the tensor."""
    x = rand_float(rng, shape, dtype, low, high)
    return f64(x), make(backend, x, dtype)


def float_inputs(
    backend: Any, rng: np.random.Generator, dtype: DType, *shapes: tuple[int, ...]
) -> list[tuple[np.ndarray, Any]]:
    """`float_input` in ``[-1, 1)`` for each of `shapes`."""
    return [float_input(backend, rng, dtype, shape, -1, 1) for shape in shapes]


def make_indices(backend: Any, values: Any) -> Any:
    """An Int tensor of `values` in the backend's int dtype (indices for gather, scatter...)."""
    return make(backend, np.asarray(values, dtype=np.int64), backend.int_dtype)


def kinds(backend: Any) -> list[DType]:
    """One dtype of each kind: the backend's float and int dtypes, and bool."""
    return [backend.float_dtype, backend.int_dtype, DType.BOOL]


def each_kind(op: str) -> tuple[str, ...]:
    """The contract ops ``float_<op>``, ``int_<op>`` and ``bool_<op>``."""
    return (f"float_{op}", f"int_{op}", f"bool_{op}")


def tensor_module() -> Any:
    """`burn.tensor.module`, the functional module ops (imported on first use)."""
    from burn.tensor import module

    return module


def prim(tensor: Any) -> Any:
    """The backend primitive a tensor holds: what the backward helpers take."""
    return tensor._p


def wrap_float(backend: Any, primitive: Any) -> Any:
    """A Float tensor around a primitive a backward helper returned (no Tensor method exists)."""
    from burn import Float
    from burn.tensor._base import wrap

    return wrap(primitive, backend, Float)


def host(tensor: Any) -> np.ndarray:
    """The tensor's values as a NumPy array of its own dtype (through `to_data`)."""
    data = tensor.to_data()
    assert isinstance(data, TensorData), f"to_data() returned {type(data).__name__}, not TensorData"
    return data.array


def _host_checked(tensor: Any, label: str) -> np.ndarray:
    """`host`, also checking that the data comes back in the tensor's dtype (a backend whose
    primitive holds another dtype than it reports would pass a value check alone)."""
    data = tensor.to_data()
    assert isinstance(data, TensorData), f"{label}to_data() returned {type(data).__name__}, not TensorData"
    assert data.dtype is tensor.dtype, f"{label}to_data() gives {data.dtype}, the tensor says {tensor.dtype}"
    return data.array


def check_float(
    tensor: Any,
    expected: Any,
    dtype: DType,
    *,
    terms: int = 1,
    rtol: float | None = None,
    atol: float | None = None,
    what: str = "",
) -> None:
    """Assert a Float tensor of `dtype` and shape of `expected`, close to it within tolerance."""
    from burn import Float

    expected = np.asarray(expected, dtype=np.float64)
    label = f"{what}: " if what else ""
    assert tensor.kind is Float, f"{label}kind {tensor.kind}, expected Float"
    assert tensor.dtype is dtype, f"{label}dtype {tensor.dtype}, expected {dtype}"
    assert tuple(tensor.shape) == expected.shape, (
        f"{label}shape {tuple(tensor.shape)}, expected {expected.shape}"
    )
    got = f64(_host_checked(tensor, label))
    assert got.shape == expected.shape, f"{label}to_data() shape {got.shape}, tensor.shape {tensor.shape}"
    d_rtol, d_atol = tolerance(dtype, terms)
    np.testing.assert_allclose(
        got,
        expected,
        rtol=d_rtol if rtol is None else rtol,
        atol=d_atol if atol is None else atol,
        equal_nan=True,
        err_msg=f"{label}{dtype.value}",
    )


def check_exact(tensor: Any, expected: Any, dtype: DType, *, what: str = "") -> None:
    """Assert a tensor of exactly `dtype` (kind follows it) equal to `expected`."""
    from burn.foundations.kind import Kind

    expected = np.asarray(expected)
    label = f"{what}: " if what else ""
    assert tensor.kind is Kind.of(dtype), f"{label}kind {tensor.kind}, expected {Kind.of(dtype)}"
    assert tensor.dtype is dtype, f"{label}dtype {tensor.dtype}, expected {dtype}"
    assert tuple(tensor.shape) == expected.shape, (
        f"{label}shape {tuple(tensor.shape)}, expected {expected.shape}"
    )
    got = _host_checked(tensor, label)
    assert got.shape == expected.shape, f"{label}to_data() shape {got.shape}, tensor.shape {tensor.shape}"
    if dtype.is_float:
        np.testing.assert_array_equal(f64(got), f64(expected), err_msg=f"{label}{dtype.value}")
    else:
        np.testing.assert_array_equal(got, expected.astype(dtype.numpy), err_msg=f"{label}{dtype.value}")


def check_indices(tensor: Any, expected: Any, backend: Any, *, what: str = "") -> None:
    """Assert an Int tensor of the backend's int dtype equal to `expected` indices."""
    check_exact(tensor, np.asarray(expected, dtype=np.int64), backend.int_dtype, what=what)


def check_bool(tensor: Any, expected: Any, *, what: str = "") -> None:
    check_exact(tensor, np.asarray(expected, dtype=np.bool_), DType.BOOL, what=what)


def rand_any(rng: np.random.Generator, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    """Values of any dtype: floats in [-2, 2), small ints (from 0 if unsigned), or booleans."""
    if dtype.is_float:
        return rand_float(rng, shape, dtype)
    if dtype.is_int:
        return rand_int(rng, shape, dtype)
    return rand_bool(rng, shape)
